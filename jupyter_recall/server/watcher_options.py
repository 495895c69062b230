"""A watcher's interval, which its job's options hold beside its schedule (``every Ns``).

Apart from ``watcher_runtime.py`` so that the job routes (``handlers.py``) can keep the two
together when a watcher's schedule is edited, without importing the runtime and the
notification service it runs on.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Final

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.model import Job, JobKind
from jupyter_recall.core.records import JobOptions
from jupyter_recall.core.triggers.interval import IntervalTrigger
from jupyter_recall.core.when import parse_when
from jupyter_recall.engine.jobs import JobChanges

OPTION: Final = "watcher"
"""The key of a watcher's configuration in its job's options."""
MIN_INTERVAL = 5
MAX_INTERVAL = 3600
DEFAULT_INTERVAL = 30
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def aligned(now: datetime, interval: int) -> datetime:
    """The latest instant at or before ``now`` that is a whole number of ``interval`` seconds
    since the epoch. Watchers anchored there check on the same instants as every other watcher
    of that interval, so the engine fires them in batches instead of waking for each one."""
    step = timedelta(seconds=interval)
    return EPOCH + ((now - EPOCH) // step) * step


def check_interval(value: object, field: str = "interval") -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(field, f"must be a whole number of seconds, got {value!r}")
    if not MIN_INTERVAL <= value <= MAX_INTERVAL:
        raise ValidationError(
            field, f"must be between {MIN_INTERVAL} and {MAX_INTERVAL} seconds, got {value}"
        )
    return value


def with_watcher_interval(current: Job, changes: JobChanges, *, now: datetime) -> JobChanges:
    """A watcher's new ``when`` (the sidebar's "Edit schedule") is its new interval: written
    into its options too, which its status, its checks' alignment and every surface read,
    and read from an instant aligned with it, as at creation, so that its checks fall on
    whole multiples of it. A schedule that is not an interval is refused naming ``when``."""
    if current.kind is not JobKind.WATCHER or changes.when is None:
        return changes
    spec = parse_when(changes.when, now=now, tz=changes.tz or current.schedule.tz)
    if not isinstance(spec.trigger, IntervalTrigger):
        raise ValidationError(
            "when",
            f"a watcher checks at an interval ('every 30 seconds', 'every 5m'), "
            f"got {changes.when!r}",
        )
    seconds = check_interval(spec.trigger.seconds, "when")
    options = changes.options or current.options
    config = dict(options.values.get(OPTION) or {})
    config["interval"] = seconds
    values = {**options.values, OPTION: config}
    return replace(changes, options=JobOptions.from_json(values), anchor=aligned(now, seconds))
