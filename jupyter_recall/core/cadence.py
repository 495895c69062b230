"""Schedules that start a fresh kernel too often: a warning, never a refusal.

A fresh kernel per run (a ``headless`` target, or a notebook action, which always runs headless)
costs a process start of a second or more and its memory; fired more often than once a minute,
runs pile up behind each other and the machine spends its time starting kernels. The schedule is
still valid (the user may mean it), so the surfaces that create jobs print this warning.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from itertools import pairwise

from jupyter_recall.core.model import Job
from jupyter_recall.core.records import Action, Target, option_warnings

FRESH_KERNEL_MIN_GAP = 60.0
"""Seconds: a schedule whose runs come closer than this gets the warning."""


def starts_fresh_kernel(action: Action, target: Target) -> bool:
    """Whether each run of a job with this action and target starts a kernel of its own."""
    return action.type == "notebook" or target.type == "headless"


def shortest_gap(fire_times: Sequence[datetime]) -> float | None:
    """Seconds between the two closest consecutive fire times; None with fewer than two."""
    gaps = [(later - earlier).total_seconds() for earlier, later in pairwise(fire_times)]
    return min(gaps) if gaps else None


def fresh_kernel_warning(fire_times: Sequence[datetime]) -> str | None:
    """The warning for a job that starts a fresh kernel per run at these fire times, or None."""
    gap = shortest_gap(fire_times)
    if gap is None or gap >= FRESH_KERNEL_MIN_GAP:
        return None
    return (
        f"warning: this schedule starts a fresh kernel every {gap:g} s, more often than once a "
        "minute (each start takes a second or more and its own memory; runs may queue up): "
        "run it in a live kernel (a notebook's) or less often"
    )


def created_warnings(job: Job, count: int = 5) -> list[str]:
    """What to tell whoever created ``job`` (the REST answer's ``warnings``): a recurring job
    that starts a fresh kernel more than once a minute (``count`` fire times are looked at),
    an option key that looks misspelt (``records.option_warnings``)."""
    return _cadence_warnings(job, count) + option_warnings(job.options)


def _cadence_warnings(job: Job, count: int) -> list[str]:
    if not job.schedule.is_recurring or not starts_fresh_kernel(job.action, job.target):
        return []
    warning = fresh_kernel_warning(job.schedule.next_fire_times(count))
    return [warning] if warning is not None else []
