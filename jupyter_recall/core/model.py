"""Records: jobs, runs and their policies, as plain dataclasses.

Instants are aware UTC datetimes. Payloads that are persisted as JSON (action, target,
options, schedule) carry a ``version`` so that later releases can migrate them.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, tzinfo
from enum import Enum
from typing import TYPE_CHECKING, Any, TypedDict

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.lifecycle import parse_keep_for, parse_keep_runs, parse_pause_after
from jupyter_recall.core.records import NO_OPTIONS, Action, JobOptions, Target
from jupyter_recall.core.retries import Retries, RetriesJSON

if TYPE_CHECKING:
    from jupyter_recall.core.when import ScheduleSpec

PAYLOAD_VERSION = 1


class _Choice(str, Enum):
    """A string enum whose parse errors name the field and the accepted values."""

    @classmethod
    def parse(cls, value: object, field_name: str) -> Any:
        # Looked up by value first: calling the class runs EnumType.__call__ and Enum.__new__
        # in Python, about ten times the cost of the lookup (every REST creation parses one).
        if isinstance(value, str):
            member = cls._value2member_map_.get(value)
            if member is not None:
                return member
        try:
            return cls(value)
        except ValueError:
            raise ValidationError(
                field_name, f"unknown value {value!r}", accepted=[m.value for m in cls]
            ) from None

    def __str__(self) -> str:
        return str(self.value)


class JobKind(_Choice):
    JOB = "job"
    RECALL = "recall"
    WATCHER = "watcher"


class JobStatus(_Choice):
    ACTIVE = "active"
    PAUSED = "paused"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def is_terminal(self) -> bool:
        return self in (JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.CANCELLED)


class RunStatus(_Choice):
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    INTERRUPTED = "interrupted"
    SKIPPED = "skipped"
    MISSED = "missed"
    CANCELLED = "cancelled"
    TIMED_OUT = "timed_out"
    """Stopped by the engine at its job's time limit (``Policies.timeout``)."""

    @property
    def is_final(self) -> bool:
        return self is not RunStatus.RUNNING


class RunTrigger(_Choice):
    SCHEDULE = "schedule"
    MANUAL = "manual"
    CATCHUP = "catchup"
    AFTER = "after"
    """Fired by the end of an upstream job's run (``core/dependency.py``)."""


class Coalesce(_Choice):
    """What to do with several occurrences missed during downtime (within the window)."""

    LATEST = "latest"
    ALL = "all"
    NONE = "none"


class Overlap(_Choice):
    """What to do when an occurrence is due while a run of the same job is still going."""

    SKIP = "skip"
    BUFFER_ONE = "buffer_one"
    ALLOW = "allow"


ID_BYTES = 6
_IDS_PER_DRAW = 256


class _RandomIds(threading.local):
    """Ids drawn from the OS's random source in bulk, per thread: a burst makes one id per run,
    and one ``urandom`` call per id costs more than the rest of making the run."""

    def __init__(self) -> None:
        self.pending: list[str] = []


_random_ids = _RandomIds()


def _forget_drawn_ids() -> None:
    # Looked up at the call: the ids of the thread that forked, whichever it is.
    _random_ids.pending.clear()


if hasattr(os, "register_at_fork"):  # POSIX: a forked child must not reuse its parent's ids
    os.register_at_fork(after_in_child=_forget_drawn_ids)


def new_id() -> str:
    """A short random id, friendly to type in a magic (`%schedule cancel 3f9c2a1b7d0e`)."""
    pending = _random_ids.pending
    if not pending:
        text = os.urandom(ID_BYTES * _IDS_PER_DRAW).hex()
        width = 2 * ID_BYTES
        pending.extend(text[start : start + width] for start in range(0, len(text), width))
    return pending.pop()


class PoliciesJSON(TypedDict):
    """A job's policies as answered and stored (every field present; ``Policy`` in
    ``openapi.yaml``)."""

    catchup_window: float | None
    coalesce: str
    overlap: str
    max_runs: int | None
    end_at: str | None
    jitter: float
    timeout: float | None
    retries: RetriesJSON | None
    pause_after_failures: int | None
    keep_runs: int | None
    keep_runs_for: float | None


POLICY_FIELDS = (
    "catchup_window",
    "coalesce",
    "overlap",
    "max_runs",
    "end_at",
    "jitter",
    "timeout",
    "retries",
    "pause_after_failures",
    "keep_runs",
    "keep_runs_for",
)


@dataclass(frozen=True, slots=True)
class Policies:
    """Firing policies of one job. Validation happens here, once, naming the field."""

    catchup_window: float | None = 3600.0
    """Seconds after an occurrence during which it may still fire late; None: no limit."""
    coalesce: Coalesce = Coalesce.LATEST
    overlap: Overlap = Overlap.SKIP
    max_runs: int | None = None
    end_at: datetime | None = None
    """No occurrence after it. Given without a UTC offset, it is a wall time of the job's zone:
    ``in_zone`` makes it an instant when the job is built or changed (``engine/jobs.py``), so a
    stored job's ``end_at`` always carries its offset."""
    jitter: float = 0.0
    """Upper bound, in seconds, of a deterministic delay added to each occurrence."""
    timeout: float | None = None
    """Seconds a run may execute before the engine stops it as ``timed_out``; None: the
    server's default (``RecallApp.default_timeout``), itself none unless set."""
    retries: Retries | None = None
    """Further attempts of an occurrence whose run failed, timed out or was interrupted."""
    pause_after_failures: int | None = None
    """Pause the job after this many consecutive occurrences ended failed or timed out."""
    keep_runs: int | None = None
    """Keep this many newest runs of the job; None: the server's ``RecallApp.keep_runs``."""
    keep_runs_for: float | None = None
    """Keep runs this many seconds after they ended; None: ``RecallApp.keep_runs_for``."""

    def __post_init__(self) -> None:
        if self.catchup_window is not None and self.catchup_window < 0:
            raise ValidationError(
                "catchup_window", f"must be >= 0 seconds or null, got {self.catchup_window!r}"
            )
        if self.max_runs is not None and self.max_runs < 1:
            raise ValidationError("max_runs", f"must be a positive integer, got {self.max_runs!r}")
        if self.jitter < 0:
            raise ValidationError("jitter", f"must be >= 0 seconds, got {self.jitter!r}")
        if self.timeout is not None and not self.timeout > 0:
            raise ValidationError(
                "timeout", f"must be a number of seconds above 0 or null, got {self.timeout!r}"
            )
        parse_pause_after(self.pause_after_failures)
        parse_keep_runs(self.keep_runs)
        # Normalised here too: the Python API may pass a duration's text ("7d").
        object.__setattr__(self, "keep_runs_for", parse_keep_for(self.keep_runs_for))

    def in_zone(self, zone: tzinfo) -> Policies:
        """These policies with a wall-time ``end_at`` read in ``zone`` (as ``when`` is)."""
        if self.end_at is None or self.end_at.tzinfo is not None:
            return self
        return replace(self, end_at=self.end_at.replace(tzinfo=zone))

    def to_dict(self) -> PoliciesJSON:
        return {
            "catchup_window": self.catchup_window,
            "coalesce": self.coalesce._value_,  # a plain attribute: .value is a property
            "overlap": self.overlap._value_,
            "max_runs": self.max_runs,
            "end_at": self.end_at.isoformat() if self.end_at else None,
            "jitter": self.jitter,
            "timeout": self.timeout,
            "retries": None if self.retries is None else self.retries.to_dict(),
            "pause_after_failures": self.pause_after_failures,
            "keep_runs": self.keep_runs,
            "keep_runs_for": self.keep_runs_for,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Policies:
        """Build from user or stored input; unknown keys are refused by name."""
        refuse_unknown_policies(data)
        end_at = data.get("end_at")
        return cls(
            catchup_window=_optional_float(data, "catchup_window", 3600.0),
            coalesce=Coalesce.parse(data.get("coalesce", "latest"), "coalesce"),
            overlap=Overlap.parse(data.get("overlap", "skip"), "overlap"),
            max_runs=_optional_int(data, "max_runs"),
            end_at=_parse_instant(end_at, "end_at") if end_at is not None else None,
            jitter=float(_optional_float(data, "jitter", 0.0) or 0.0),
            timeout=_optional_float(data, "timeout", None),
            retries=Retries.parse(data.get("retries")),
            pause_after_failures=parse_pause_after(data.get("pause_after_failures")),
            keep_runs=parse_keep_runs(data.get("keep_runs")),
            keep_runs_for=parse_keep_for(data.get("keep_runs_for")),
        )


def refuse_unknown_policies(data: Mapping[str, object]) -> None:
    """An unknown key of a policies object, named with the accepted ones."""
    unknown = sorted(set(data) - set(POLICY_FIELDS))
    if unknown:
        raise ValidationError(unknown[0], "unknown policy", accepted=sorted(POLICY_FIELDS))


DEFAULT_POLICIES = Policies()
"""The policies of a job created without any (one object, shared: the store encodes it once)."""


def _optional_float(data: Mapping[str, object], key: str, default: float | None) -> float | None:
    if key not in data:
        return default
    value = data[key]
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValidationError(key, f"must be a number of seconds, got {value!r}")
    return float(value)


def _optional_int(data: Mapping[str, object], key: str) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(key, f"must be an integer, got {value!r}")
    return value


def _parse_instant(value: object, field_name: str) -> datetime:
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            raise ValidationError(field_name, f"not an ISO 8601 instant: {value!r}") from None
    else:
        raise ValidationError(field_name, f"must be an ISO 8601 string, got {value!r}")
    return parsed


@dataclass(slots=True)
class Job:
    """A persisted thing that fires: a schedule plus an action plus a target."""

    id: str
    owner: str
    name: str
    kind: JobKind
    when: str
    """The schedule as the user wrote it."""
    schedule: ScheduleSpec
    action: Action
    target: Target
    created_at: datetime
    updated_at: datetime
    policies: Policies = field(default_factory=Policies)
    status: JobStatus = JobStatus.ACTIVE
    session: str | None = None
    """Session key (notebook path or kernel id) for recalls: at most one pending per session."""
    next_occurrence: datetime | None = None
    """Nominal instant of the next occurrence (the unique key of its run)."""
    next_fire_at: datetime | None = None
    """When the next occurrence actually fires: next_occurrence plus deterministic jitter."""
    run_count: int = 0
    failure_count: int = 0
    last_run_at: datetime | None = None
    last_run_id: str | None = None
    last_status: RunStatus | None = None
    last_error: str | None = None
    options: JobOptions = NO_OPTIONS
    """The executors' settings, typed, and those outer layers own (``output_channel``...)."""
    version: int = PAYLOAD_VERSION
    plugin_owner: str | None = None
    """The package or deployment that declared the job (``reconcile``); None for users' jobs.
    Not the row ``owner``, which is the user the job belongs to."""
    key: str | None = None
    """The job's name within its ``plugin_owner``'s declaration (unique per user and owner)."""
    failure_streak: int = 0
    """Consecutive occurrences that ended failed or timed out (``pause_after_failures``)."""
    paused_reason: str | None = None
    """Why the engine paused the job (after its failures); None when a person paused it."""

    @property
    def is_pending(self) -> bool:
        """Active or paused with an occurrence still ahead."""
        return (
            self.status in (JobStatus.ACTIVE, JobStatus.PAUSED) and self.next_occurrence is not None
        )

    def evolve(self, **changes: Any) -> Job:
        return replace(self, **changes)

    def paused(self, **changes: Any) -> Job:
        """The job paused: nothing fires, so it has no next fire (listed and sorted as such);
        its next occurrence stays, for resuming and for being pending."""
        return replace(self, status=JobStatus.PAUSED, next_fire_at=None, **changes)


@dataclass(slots=True)
class Run:
    """One firing of a job: its own record, output and outcome."""

    id: str
    job_id: str
    owner: str
    scheduled_for: datetime
    trigger: RunTrigger
    status: RunStatus
    created_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    output: str = ""
    error: str | None = None
    engine_id: str | None = None
    """The engine that fired it; its lease tells whether a `running` run is still alive."""
    attempt: int = 1
    """Which run of its occurrence this is: 1, then 2, 3... for retries (``policies.retries``)."""
    retry_at: datetime | None = None
    """Set on an ended attempt followed by another one: when that one is due. While set, a
    retry of the occurrence is pending (``is_final_for_occurrence`` is false)."""

    @property
    def is_final_for_occurrence(self) -> bool:
        """Ended, and no further attempt of its occurrence is pending: the occurrence's
        outcome (what dependencies and failure counts look at)."""
        return self.status.is_final and self.retry_at is None

    @property
    def duration(self) -> float | None:
        if self.started_at is None or self.finished_at is None:
            return None
        return (self.finished_at - self.started_at).total_seconds()

    def evolve(self, **changes: Any) -> Run:
        return replace(self, **changes)
