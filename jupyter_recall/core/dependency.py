"""Dependencies: a job that fires on another job's outcome instead of a time.

``after`` names the upstream job and the outcome that fires the downstream one; its text form
(``after 3f9c2a1b7d0e succeeds``) is a ``when`` like any other, and its JSON form
(``{"job": "3f9c2a1b7d0e", "on": "succeeded"}``) what the REST body and the agent tools take.
``plan_dependents`` decides, purely, what the upstream runs that ended since the downstream
job last looked become: runs to execute, or ``missed``/``skipped`` rows (``docs/engine.md``,
"Dependencies").
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import NamedTuple

from jupyter_recall.core.errors import ParseError, ValidationError
from jupyter_recall.core.limits import ID_PATTERN
from jupyter_recall.core.model import Coalesce, Policies, RunStatus
from jupyter_recall.core.model import _Choice as Choice
from jupyter_recall.core.policy import InFlight, overlap_split, skip_reason


class AfterOn(Choice):
    """Which outcomes of an upstream run fire the downstream job."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"
    """``failed`` or ``timed_out`` (the outcomes that count as the job's failures)."""
    FINISHED = "finished"
    """Any end of a run that executed: succeeded, failed, timed out, interrupted, cancelled."""

    def matches(self, status: RunStatus) -> bool:
        if self is AfterOn.SUCCEEDED:
            return status is RunStatus.SUCCEEDED
        if self is AfterOn.FAILED:
            return status in _FAILURES
        return status in _EXECUTED

    @property
    def verb(self) -> str:
        return _VERBS[self]


_FAILURES = frozenset({RunStatus.FAILED, RunStatus.TIMED_OUT})
_EXECUTED = frozenset(
    {
        RunStatus.SUCCEEDED,
        RunStatus.FAILED,
        RunStatus.TIMED_OUT,
        RunStatus.INTERRUPTED,
        RunStatus.CANCELLED,
    }
)
UPSTREAM_ENDS = tuple(sorted(status.value for status in _EXECUTED))
"""The statuses of upstream runs a dependency looks at (skipped and missed rows did not run)."""

_VERBS = {AfterOn.SUCCEEDED: "succeeds", AfterOn.FAILED: "fails", AfterOn.FINISHED: "finishes"}
_WORDS = {
    "succeeds": AfterOn.SUCCEEDED,
    "succeeded": AfterOn.SUCCEEDED,
    "fails": AfterOn.FAILED,
    "failed": AfterOn.FAILED,
    "finishes": AfterOn.FINISHED,
    "finished": AfterOn.FINISHED,
}
_ID = re.compile(ID_PATTERN)
AFTER_FORMS = (
    "after <job id> succeeds",
    "after <job id> fails",
    "after <job id> finishes",
)


@dataclass(frozen=True, slots=True)
class After:
    """The upstream job of a dependency and the outcome that fires it."""

    job: str
    on: AfterOn = AfterOn.SUCCEEDED

    def __post_init__(self) -> None:
        if not isinstance(self.job, str) or _ID.fullmatch(self.job) is None:
            raise ValidationError("after.job", f"must be a job id ({ID_PATTERN}), got {self.job!r}")

    @property
    def text(self) -> str:
        """The ``when`` of the downstream job: ``after 3f9c2a1b7d0e succeeds``."""
        return f"after {self.job} {self.on.verb}"

    def to_json(self) -> dict[str, str]:
        return {"job": self.job, "on": self.on.value}

    @classmethod
    def from_json(cls, data: object) -> After:
        """``{"job": ID, "on": "succeeded" | "failed" | "finished"}`` (``on`` defaults to
        ``succeeded``); errors name ``after.job`` or ``after.on``."""
        if not isinstance(data, Mapping):
            raise ValidationError(
                "after", f'must be an object {{"job": ID, "on": ...}}, got {data!r}'
            )
        unknown = sorted(set(data) - {"job", "on"})
        if unknown:
            raise ValidationError(f"after.{unknown[0]}", "unknown field", accepted=["job", "on"])
        if "job" not in data:
            raise ValidationError("after.job", "is required: the id of the upstream job")
        on = AfterOn.parse(data.get("on", AfterOn.SUCCEEDED.value), "after.on")
        return cls(data["job"], on)

    @classmethod
    def from_option(cls, text: str) -> After:
        """``ID`` or ``ID:on`` (the CLI's ``--after``)."""
        job, sep, on = text.partition(":")
        return cls(job.strip(), AfterOn.parse(on.strip(), "after.on") if sep else AfterOn.SUCCEEDED)


def parse_after(text: str) -> After | None:
    """``after <id> succeeds|fails|finishes`` (past tenses too); None when ``text`` does not
    start with ``after``, a ``ParseError`` listing the forms when it does and is not one."""
    words = text.split()
    if not words or words[0].lower() != "after":
        return None
    if len(words) != 3 or words[2].lower() not in _WORDS or _ID.fullmatch(words[1]) is None:
        raise ParseError(
            text,
            "a dependency is 'after', a job id and succeeds, fails or finishes",
            accepted=AFTER_FORMS,
        )
    return After(words[1], _WORDS[words[2].lower()])


class UpstreamEnd(NamedTuple):
    """An upstream run that ended (final for its occurrence), as the dependency reads it."""

    run_id: str
    status: RunStatus
    finished_at: datetime


class PlannedDependent(NamedTuple):
    upstream: UpstreamEnd
    status: RunStatus
    """``running`` (to execute), ``missed`` or ``skipped``."""
    error: str | None = None


class DependentPlan(NamedTuple):
    runs: tuple[PlannedDependent, ...]
    run_count: int
    """The job's run_count once the runs to execute are counted."""
    exhausted: bool
    """``max_runs`` reached: the job completes."""


def _late(end: UpstreamEnd, now: datetime, policies: Policies) -> bool:
    window = policies.catchup_window
    return window is not None and end.finished_at < now - timedelta(seconds=window + 1.0)


def _select(
    ends: Sequence[UpstreamEnd], now: datetime, policies: Policies, catching_up: bool
) -> list[PlannedDependent]:
    """Catch-up: ends beyond the window are missed; when catching up (ends that came while no
    engine listened, or during a pause) ``coalesce`` decides among several within it (latest
    runs, all run, none runs), as for the occurrences of a time schedule after downtime. Ends
    heard as they happen all run, however close together."""
    planned: list[PlannedDependent] = []
    inside: list[UpstreamEnd] = []
    for end in ends:
        if _late(end, now, policies):
            reason = f"missed: upstream run {end.run_id} ended beyond the catch-up window"
            planned.append(PlannedDependent(end, RunStatus.MISSED, reason))
        else:
            inside.append(end)
    if not catching_up or len(inside) <= 1 or policies.coalesce is Coalesce.ALL:
        return planned + [PlannedDependent(end, RunStatus.RUNNING) for end in inside]
    if policies.coalesce is Coalesce.NONE:
        reason = "missed: catch-up is off (coalesce=none)"
        return planned + [PlannedDependent(end, RunStatus.MISSED, reason) for end in inside]
    latest = inside[-1]
    reason = f"missed: coalesced into the run after upstream run {latest.run_id}"
    planned += [PlannedDependent(end, RunStatus.MISSED, reason) for end in inside[:-1]]
    return [*planned, PlannedDependent(latest, RunStatus.RUNNING)]


def _overlapped(
    selected: Sequence[PlannedDependent], policies: Policies, run_count: int, in_flight: InFlight
) -> list[PlannedDependent]:
    """``max_runs`` and ``overlap``, as for occurrences due together: the runs queue behind
    each other, and the job's runs in flight decide how many start and how many are skipped.
    Runs beyond ``max_runs`` are not recorded."""
    runnable = sum(1 for item in selected if item.status is RunStatus.RUNNING)
    if policies.max_runs is not None:
        runnable = min(runnable, max(0, policies.max_runs - run_count))
    started, skipped = overlap_split(policies.overlap, in_flight, runnable)
    runs: list[PlannedDependent] = []
    index = 0
    skipping = skip_reason(policies.overlap)
    for item in selected:
        if item.status is not RunStatus.RUNNING or index < started:
            runs.append(item)
        elif index < started + skipped:
            runs.append(item._replace(status=RunStatus.SKIPPED, error=skipping))
        index += item.status is RunStatus.RUNNING
    return runs


def plan_dependents(
    ends: Sequence[UpstreamEnd],
    *,
    on: AfterOn,
    policies: Policies,
    run_count: int,
    in_flight: InFlight,
    now: datetime,
    catching_up: bool = False,
) -> DependentPlan:
    """What the upstream ``ends`` (oldest first, each handled once) do to a downstream job:
    the matching ones go through catch-up (window; ``coalesce`` when ``catching_up``),
    ``max_runs`` and ``overlap`` like due occurrences; the others are passed over silently
    (they were not its trigger)."""
    matching = [end for end in ends if on.matches(end.status)]
    selected = _select(matching, now, policies, catching_up)
    runs = _overlapped(selected, policies, run_count, in_flight)
    executed = sum(1 for item in runs if item.status is RunStatus.RUNNING)
    total = run_count + executed
    exhausted = policies.max_runs is not None and total >= policies.max_runs
    return DependentPlan(tuple(runs), total, exhausted)


@dataclass(frozen=True, slots=True)
class Dependency:
    """A downstream job's link to its upstream, with its cursor: the last upstream run it
    handled, ``(cursor_at, cursor_run)`` = that run's ``(finished_at, id)``. Upstream runs
    that ended after the cursor are the ones still to handle, whether the engine heard of
    their end or was down when they ended; the cursor moves in the transaction that records
    what they became, so each is handled exactly once, and old runs may be pruned."""

    job_id: str
    owner: str
    upstream_id: str
    on: AfterOn
    cursor_at: datetime
    cursor_run: str = ""

    def past(self, end: UpstreamEnd) -> Dependency:
        """This dependency with its cursor moved to ``end``."""
        return Dependency(
            self.job_id, self.owner, self.upstream_id, self.on, end.finished_at, end.run_id
        )
