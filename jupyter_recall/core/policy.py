"""Pure planning of firing: catch-up, coalesce, overlap, jitter and end conditions.

Every function here takes the instants it needs as arguments (``now`` included) and returns a
decision; the engine applies decisions to the store. Nothing here reads a clock or does I/O, so
each policy is tested as a table of inputs and expected plans.

Plans are named tuples: the engine builds several per fired job, thousands per second, and a
frozen dataclass costs several times more to construct.

Vocabulary: an *occurrence* is a nominal instant of a schedule (the unique key of its run); its
*fire time* is the occurrence plus the job's deterministic jitter, strictly before the following
occurrence.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import NamedTuple, Protocol

from jupyter_recall.core.model import (
    Coalesce,
    JobStatus,
    Overlap,
    Policies,
    RunStatus,
    RunTrigger,
)

MAX_ROWS_PER_PASS = 100
"""Individual missed rows (and catch-up runs of ``coalesce=all``) recorded for one job in one
pass; what lies beyond is summarised in one more ``missed`` row."""

COUNT_LIMIT = 1_000
"""Occurrences counted one by one for a summary row; beyond this the row says "at least"."""

ON_TIME_TOLERANCE = timedelta(seconds=1)
"""Lateness that never counts as missing an occurrence, whatever the catch-up window."""

TICK = timedelta(microseconds=1)
"""The resolution of stored instants."""


class Schedule(Protocol):
    """What planning needs from a schedule (``core.when.ScheduleSpec`` provides it)."""

    @property
    def is_recurring(self) -> bool: ...

    def next_after(self, after: datetime) -> datetime | None: ...


# --------------------------------------------------------------------------------------------
# Jitter and end conditions
# --------------------------------------------------------------------------------------------


def jitter_fraction(job_id: str, occurrence: datetime) -> float:
    """A number in [0, 1) that depends only on the job and the occurrence.

    A hash rather than a random draw: a restarted engine, or a second engine on the same file,
    computes the same fire time for the same occurrence.
    """
    key = f"{job_id}|{occurrence.timestamp():.6f}".encode()
    digest = hashlib.blake2b(key, digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def fire_time(
    job_id: str, occurrence: datetime, following: datetime | None, jitter: float
) -> datetime:
    """``occurrence + fraction * min(jitter, gap to the following occurrence)``.

    The result stays strictly before ``following``, so jitter never reorders occurrences.
    """
    if jitter <= 0:
        return occurrence
    bound = timedelta(seconds=jitter)
    if following is not None:
        bound = min(bound, following - occurrence)
    offset = bound * jitter_fraction(job_id, occurrence)
    if following is not None and occurrence + offset >= following:
        # timedelta * float rounds to the microsecond, which can land on the bound itself.
        offset = max(timedelta(0), bound - TICK)
    return occurrence + offset


def within_end(occurrence: datetime | None, policies: Policies, run_count: int) -> datetime | None:
    """The occurrence if the job's end conditions (max_runs, end_at) still allow it."""
    if occurrence is None:
        return None
    if policies.max_runs is not None and run_count >= policies.max_runs:
        return None
    if policies.end_at is not None and occurrence > policies.end_at:
        return None
    return occurrence


class NextFire(NamedTuple):
    """Where a job's schedule stands: its next occurrence and when that actually fires."""

    occurrence: datetime | None = None
    fire_at: datetime | None = None

    @property
    def exhausted(self) -> bool:
        return self.occurrence is None


def schedule_next(
    schedule: Schedule,
    job_id: str,
    occurrence: datetime | None,
    policies: Policies,
    run_count: int,
) -> NextFire:
    """Make ``occurrence`` the job's next one: apply end conditions and jitter."""
    kept = within_end(occurrence, policies, run_count)
    if kept is None:
        return NextFire()
    following = schedule.next_after(kept) if policies.jitter > 0 else None
    return NextFire(kept, fire_time(job_id, kept, following, policies.jitter))


# --------------------------------------------------------------------------------------------
# Walking a schedule
# --------------------------------------------------------------------------------------------


def first_at_or_after(schedule: Schedule, instant: datetime) -> datetime | None:
    return schedule.next_after(instant - TICK)


def latest_due(schedule: Schedule, first: datetime, horizon: datetime) -> datetime:
    """The last occurrence in ``[first, horizon]``, where ``first`` is an occurrence."""
    return due_span(schedule, first, horizon)[0]


def due_span(
    schedule: Schedule, first: datetime, horizon: datetime
) -> tuple[datetime, datetime | None]:
    """The last occurrence in ``[first, horizon]`` (``first`` being an occurrence) and the one
    after it.

    A bisection on ``t -> next_after(t) <= horizon`` (true before the answer, false from it
    on): about 45 calls whatever the length of the downtime, instead of one per occurrence.
    """
    following = schedule.next_after(first)
    if following is None or following > horizon:
        return first, following
    low, high = first, horizon
    while high - low > TICK:
        middle = low + (high - low) // 2
        found = schedule.next_after(middle)
        if found is not None and found <= horizon:
            low = middle
        else:
            high = middle
    latest = schedule.next_after(low)
    assert latest is not None  # next_after(low) <= horizon is the loop invariant
    return latest, schedule.next_after(latest)


class Remainder(NamedTuple):
    """Occurrences beyond what was listed one by one, summarised in a single row."""

    first: datetime
    last: datetime
    total: int
    at_least: bool
    """True when counting stopped at COUNT_LIMIT: ``total`` is a lower bound."""


def walk(
    schedule: Schedule, start: datetime | None, last: datetime, limit: int
) -> tuple[list[datetime], Remainder | None]:
    """Up to ``limit`` occurrences from ``start`` (an occurrence) to ``last`` inclusive, and a
    summary of the ones after them."""
    listed: list[datetime] = []
    current = start
    while current is not None and current <= last and len(listed) < limit:
        listed.append(current)
        current = schedule.next_after(current)
    if current is None or current > last:
        return listed, None
    first, final, count = current, current, 0
    while current is not None and current <= last and count < COUNT_LIMIT:
        final, count = current, count + 1
        current = schedule.next_after(current)
    at_least = current is not None and current <= last
    return listed, Remainder(first, last if at_least else final, count, at_least)


# --------------------------------------------------------------------------------------------
# Firing plans
# --------------------------------------------------------------------------------------------


class PlannedRun(NamedTuple):
    """One row to record: a run to execute (status RUNNING), or a missed/skipped occurrence."""

    scheduled_for: datetime
    status: RunStatus
    trigger: RunTrigger
    error: str | None = None


class InFlight(NamedTuple):
    """Runs of one job that this engine holds: started or waiting their turn."""

    running: int = 0
    waiting: int = 0


class FiringPlan(NamedTuple):
    runs: tuple[PlannedRun, ...]
    next: NextFire
    run_count: int
    """The job's run_count after this pass (runs to execute count, missed/skipped do not)."""

    @property
    def to_execute(self) -> tuple[PlannedRun, ...]:
        return tuple(run for run in self.runs if run.status is RunStatus.RUNNING)


class DueJob(NamedTuple):
    """The part of a job that planning reads."""

    id: str
    schedule: Schedule
    occurrence: datetime
    policies: Policies
    run_count: int = 0
    in_flight: InFlight = InFlight()


def _duration(delta: timedelta) -> str:
    seconds = round(delta.total_seconds())
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            parts.append(f"{seconds // size}{unit}")
            seconds %= size
    if seconds or not parts:
        parts.append(f"{seconds}s")
    return " ".join(parts)


def _window_text(policies: Policies) -> str:
    window = policies.catchup_window
    return "no catch-up window" if window is None else f"catch-up window {window:g}s"


def _summary_row(rest: Remainder, reason: str) -> PlannedRun:
    count = f"at least {rest.total}" if rest.at_least else str(rest.total)
    text = (
        f"missed {count} more occurrences between {rest.first.isoformat()} and "
        f"{rest.last.isoformat()} ({reason}); recorded as this one row"
    )
    return PlannedRun(rest.first, RunStatus.MISSED, RunTrigger.CATCHUP, text)


def _missed_rows(
    schedule: Schedule,
    start: datetime | None,
    last: datetime,
    reason: str,
    budget: int,
) -> list[PlannedRun]:
    listed, rest = walk(schedule, start, last, budget)
    rows = [PlannedRun(at, RunStatus.MISSED, RunTrigger.CATCHUP, reason) for at in listed]
    if rest is not None:
        rows.append(_summary_row(rest, reason))
    return rows


class CatchupSelection(NamedTuple):
    """Catch-up decision before overlap and max_runs: rows already final, occurrences to run."""

    missed: list[PlannedRun]
    to_run: list[datetime]
    trigger: RunTrigger


def _window_start(now: datetime, policies: Policies) -> datetime | None:
    if policies.catchup_window is None:
        return None
    slack = policies.catchup_window + policies.jitter + ON_TIME_TOLERANCE.total_seconds()
    return now - timedelta(seconds=slack)


def select_catchup(
    schedule: Schedule, first: datetime, latest: datetime, now: datetime, policies: Policies
) -> CatchupSelection:
    """Which of the due occurrences ``first..latest`` run and which are recorded as missed.

    One due occurrence is a normal (possibly late) firing: it runs with trigger ``schedule``
    when within the window. Several due occurrences mean the engine was away: the window and
    ``coalesce`` decide, and every occurrence that does not run gets a ``missed`` row.
    """
    start = _window_start(now, policies)
    if latest == first:
        if start is None or first >= start:
            return CatchupSelection([], [first], RunTrigger.SCHEDULE)
        late = f"missed: {_duration(now - first)} late, beyond the {_window_text(policies)}"
        return CatchupSelection(
            [PlannedRun(first, RunStatus.MISSED, RunTrigger.CATCHUP, late)],
            [],
            RunTrigger.SCHEDULE,
        )
    missed: list[PlannedRun] = []
    inside: datetime | None = first
    if start is not None and first < start:
        reason = f"missed: late beyond the {_window_text(policies)}"
        last_outside = min(latest, start - TICK)
        missed = _missed_rows(schedule, first, last_outside, reason, MAX_ROWS_PER_PASS)
        inside = first_at_or_after(schedule, start) if latest >= start else None
    if inside is None or inside > latest:
        return CatchupSelection(missed, [], RunTrigger.CATCHUP)
    budget = max(1, MAX_ROWS_PER_PASS - len(missed))
    return _coalesce(schedule, inside, latest, policies=policies, missed=missed, budget=budget)


def _coalesce(
    schedule: Schedule,
    inside: datetime,
    latest: datetime,
    *,
    policies: Policies,
    missed: list[PlannedRun],
    budget: int,
) -> CatchupSelection:
    """Apply ``coalesce`` to the due occurrences within the window, ``inside..latest``."""
    if policies.coalesce is Coalesce.LATEST:
        reason = f"missed: coalesced into the catch-up run of {latest.isoformat()}"
        if inside < latest:
            missed += _missed_rows(schedule, inside, latest - TICK, reason, budget)
        return CatchupSelection(missed, [latest], RunTrigger.CATCHUP)
    if policies.coalesce is Coalesce.ALL:
        to_run, rest = walk(schedule, inside, latest, MAX_ROWS_PER_PASS)
        if rest is not None:
            reason = f"catch-up replays at most {MAX_ROWS_PER_PASS} occurrences per pass"
            missed.append(_summary_row(rest, reason))
        return CatchupSelection(missed, to_run, RunTrigger.CATCHUP)
    reason = "missed: catch-up is off (coalesce=none)"
    missed += _missed_rows(schedule, inside, latest, reason, budget)
    return CatchupSelection(missed, [], RunTrigger.CATCHUP)


def overlap_split(overlap: Overlap, in_flight: InFlight, count: int) -> tuple[int, int]:
    """How many of ``count`` occurrences due together start (or queue), and how many are
    skipped, given the runs of the job already in flight.

    Occurrences due together (a catch-up replay) queue behind each other; the policy decides
    what happens to them when a run of the job is already in flight.
    """
    if count <= 0:
        return 0, 0
    if overlap is Overlap.ALLOW or in_flight.running == 0:
        return count, 0
    if overlap is Overlap.BUFFER_ONE and in_flight.waiting == 0:
        return 1, count - 1
    return 0, count


def skip_reason(overlap: Overlap) -> str:
    if overlap is Overlap.BUFFER_ONE:
        return "skipped: a run was in flight and another already waiting (overlap=buffer_one)"
    return "skipped: the previous run was still in flight (overlap=skip)"


def plan_firing(job: DueJob, now: datetime) -> FiringPlan:
    """What to record and execute for a job whose next occurrence is due at ``now``, and
    where its schedule goes next."""
    policies, schedule = job.policies, job.schedule
    end_at = policies.end_at
    horizon = now if end_at is None or end_at > now else end_at
    if job.occurrence > horizon:
        # Only reachable when end_at moved before a stored occurrence: nothing is left.
        return FiringPlan((), NextFire(), job.run_count)
    latest, upcoming = due_span(schedule, job.occurrence, horizon)
    chosen = select_catchup(schedule, job.occurrence, latest, now, policies)
    allowed = chosen.to_run
    if policies.max_runs is not None:
        allowed = allowed[: max(0, policies.max_runs - job.run_count)]
    started, skipped = overlap_split(policies.overlap, job.in_flight, len(allowed))
    runs = chosen.missed
    for at in allowed[:started]:
        runs.append(PlannedRun(at, RunStatus.RUNNING, chosen.trigger))
    if skipped:
        reason = skip_reason(policies.overlap)
        for at in allowed[started : started + skipped]:
            runs.append(PlannedRun(at, RunStatus.SKIPPED, chosen.trigger, reason))
    run_count = job.run_count + started
    return FiringPlan(
        tuple(runs), schedule_next(schedule, job.id, upcoming, policies, run_count), run_count
    )


# --------------------------------------------------------------------------------------------
# User operations
# --------------------------------------------------------------------------------------------


class SkipPlan(NamedTuple):
    skipped: datetime
    next: NextFire


def plan_skip(
    schedule: Schedule,
    job_id: str,
    *,
    planned: datetime | None,
    now: datetime,
    policies: Policies,
    run_count: int,
) -> SkipPlan | None:
    """Skip one occurrence: the planned one if still ahead, else the first from ``now``.

    None when no occurrence is left to skip.
    """
    if planned is not None and planned >= now:
        target: datetime | None = planned
    else:
        target = first_at_or_after(schedule, now)
    target = within_end(target, policies, run_count)
    if target is None:
        return None
    upcoming = schedule.next_after(target)
    return SkipPlan(target, schedule_next(schedule, job_id, upcoming, policies, run_count))


def plan_resume(
    schedule: Schedule,
    job_id: str,
    *,
    planned: datetime | None,
    now: datetime,
    policies: Policies,
    run_count: int,
    catch_up: bool,
) -> NextFire:
    """Resume a paused job: from ``now`` on, or (``catch_up``) from where it stopped, in which
    case the occurrences since the pause come due at once and the catch-up policy handles them.
    """
    if planned is None:
        return NextFire()
    if catch_up or planned >= now:
        return schedule_next(schedule, job_id, planned, policies, run_count)
    return schedule_next(schedule, job_id, first_at_or_after(schedule, now), policies, run_count)


def exhausted_status(is_recurring: bool, last: RunStatus | None) -> JobStatus:
    """The status of a job with no occurrence left once its last run has ended.

    A recurring schedule that ran out is complete whatever its last run did (its failures are
    in the history); a one-shot job is as good as its single run.
    """
    if is_recurring or last in (None, RunStatus.SUCCEEDED):
        return JobStatus.COMPLETED
    if last is RunStatus.CANCELLED:
        return JobStatus.CANCELLED
    return JobStatus.FAILED


def counts_as_failure(status: RunStatus) -> bool:
    """Whether a run adds to the job's failure_count: a run stopped at its time limit is; an
    interrupted run (engine shut down or crashed) or a cancelled one is not the job's failure."""
    return status is RunStatus.FAILED or status is RunStatus.TIMED_OUT


def earliest(instants: Sequence[datetime | None]) -> datetime | None:
    present = [at for at in instants if at is not None]
    return min(present) if present else None
