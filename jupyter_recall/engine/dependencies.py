"""The store side of dependencies: jobs fired by another job's runs (``core/dependency.py``).

A dependency row holds the downstream job's upstream and a cursor, the last upstream run it
handled. ``fire_dependents`` reads the upstream runs that ended after the cursor, records what
they become (runs to execute, ``missed`` or ``skipped`` rows, planned by
``core.dependency.plan_dependents``) and moves the cursor, in one transaction: whichever engine
does it first (the one that ran the upstream run, or any engine's scan at its start after the
run ended while no engine was there), the second finds nothing left. The downstream run's
``scheduled_for`` is the upstream run's end. Synchronous: the scheduler runs these in its store
thread (``docs/engine.md``, "Dependencies").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import NamedTuple

from jupyter_recall.core.dependency import (
    Dependency,
    DependentPlan,
    PlannedDependent,
    UpstreamEnd,
    plan_dependents,
)
from jupyter_recall.core.errors import NotFoundError, ValidationError
from jupyter_recall.core.model import (
    Job,
    JobKind,
    JobStatus,
    Run,
    RunStatus,
    RunTrigger,
)
from jupyter_recall.core.policy import TICK, InFlight, PlannedRun
from jupyter_recall.engine.firing import planned_row
from jupyter_recall.engine.retention import DeletedRuns, runs_leaving_files
from jupyter_recall.store.base import JobState, Store

BATCH = 100
"""Upstream ends handled per dependency and transaction; a longer backlog takes several."""

LOOKUP = 500
"""Upstream ids per lookup of their dependents."""

MAX_CHAIN = 1000
"""Links followed when looking for a cycle (a chain is never longer: each link was checked)."""


def check_kind(job: Job) -> None:
    """Only plain jobs wait for another job: a recall is one self-instruction of a session and
    a watcher a recurring check, both on a time schedule."""
    if job.schedule.after is not None and job.kind is not JobKind.JOB:
        raise ValidationError(
            "after", f"a {job.kind.value} cannot wait for another job; only jobs can"
        )


def _upstream(store: Store, upstream_id: str, *, owner: str) -> Job:
    try:
        return store.get_job(upstream_id, owner=owner)
    except NotFoundError:
        raise ValidationError(
            "after.job", f"no job {upstream_id!r}: the upstream must be one of your jobs"
        ) from None


def _refuse_cancelled(upstream: Job) -> None:
    """A new link to a cancelled job: nothing more fires it, not even by hand, so its
    dependent would wait for ever. (A completed or paused one can still be run by hand.)"""
    if upstream.status is JobStatus.CANCELLED:
        raise ValidationError(
            "after.job",
            f"job {upstream.id} is cancelled: nothing more fires it, so a job after it would "
            "never run",
        )


def _refuse_cycle(store: Store, job_id: str, upstream_id: str) -> None:
    path = [job_id, upstream_id]
    current = upstream_id
    for _ in range(MAX_CHAIN):
        if current == job_id:
            raise ValidationError(
                "after.job", f"would make a cycle of dependencies: {' -> '.join(path)}"
            )
        link = store.get_dependency(current)
        if link is None:
            return
        current = link.upstream_id
        path.append(current)


def link(store: Store, job: Job, *, now: datetime) -> None:
    """Write (or remove) the dependency of ``job`` in the caller's transaction. The upstream
    must be one of the owner's jobs and not wait, through any chain, for ``job`` itself. A new
    dependency starts after the upstream's last ended run: runs that ended before it existed
    do not fire it; an edit that keeps the upstream keeps the cursor."""
    trigger = job.schedule.after
    if trigger is None:
        store.delete_dependency(job.id)
        return
    check_kind(job)
    after = trigger.after
    upstream = _upstream(store, after.job, owner=job.owner)
    _refuse_cycle(store, job.id, upstream.id)
    existing = store.get_dependency(job.id)
    dependency = Dependency(job.id, job.owner, upstream.id, after.on, now)
    if existing is not None and existing.upstream_id == upstream.id:
        dependency = replace(existing, on=after.on)
    else:
        _refuse_cancelled(upstream)
        latest = store.latest_upstream_end(upstream.id)
        dependency = dependency if latest is None else dependency.past(latest)
    store.put_dependency(dependency)


def pass_over(store: Store, job: Job) -> None:
    """Move ``job``'s cursor past every upstream run ended so far (a resume without catch-up:
    what ended while the job was paused does not fire it)."""
    dependency = store.get_dependency(job.id)
    if dependency is None:
        return
    latest = store.latest_upstream_end(dependency.upstream_id)
    if latest is not None and (latest.finished_at, latest.run_id) > (
        dependency.cursor_at,
        dependency.cursor_run,
    ):
        store.put_dependency(dependency.past(latest))


def cancel_dependents(store: Store, upstream_id: str, *, now: datetime) -> list[Job]:
    """The jobs waiting for ``upstream_id``, which is being deleted: cancelled, the reason in
    their last error, and their dependency removed (nothing can fire them any more)."""
    cancelled = []
    for dependency in store.dependents_of([upstream_id]):
        store.delete_dependency(dependency.job_id)
        job = store.get_job(dependency.job_id, owner=None)
        if job.status.is_terminal:
            continue
        job.status = JobStatus.CANCELLED
        job.last_error = f"cancelled: its upstream job {upstream_id} was deleted"
        job.updated_at = now
        store.update_job_states([JobState.of(job)])
        cancelled.append(job)
    return cancelled


@dataclass(slots=True)
class DependentsFired:
    fired: list[tuple[Job, Run]] = field(default_factory=list)
    """Runs to execute, with their job as the transaction left it."""
    recorded: list[Run] = field(default_factory=list)
    """``missed`` and ``skipped`` rows, final from the start."""
    jobs: list[Job] = field(default_factory=list)
    more: bool = False
    """A backlog longer than one batch is left: call again."""


def _row(job: Job, planned: PlannedDependent, *, now: datetime, engine_id: str) -> Run:
    """The run of ``planned``: keyed by the upstream run's end, trigger ``after``."""
    at = planned.upstream.finished_at
    row = PlannedRun(at, planned.status, RunTrigger.AFTER, planned.error)
    return planned_row(job, row, now=now, engine_id=engine_id)


def _insert(store: Store, row: Run) -> Run:
    # Exactly once comes from the cursor, not this key: two upstream runs that ended at the
    # same instant take the next free instants.
    while not store.insert_runs([row]):
        row = row.evolve(scheduled_for=row.scheduled_for + TICK)
    return row


def _apply(job: Job, plan: DependentPlan, rows: Sequence[Run], now: datetime) -> None:
    job.run_count = plan.run_count
    job.updated_at = now
    executed = [row for row in rows if row.status is RunStatus.RUNNING]
    if executed:
        job.last_run_at, job.last_run_id = now, executed[-1].id
        job.last_status, job.last_error = RunStatus.RUNNING, None
    if plan.exhausted:
        job.status = JobStatus.COMPLETED


class _Pass(NamedTuple):
    """What one call of ``fire_dependents`` handles every dependency with."""

    now: datetime
    engine_id: str
    in_flight: Callable[[str], InFlight]
    catching_up: bool


def _handle(store: Store, dependency: Dependency, result: DependentsFired, at: _Pass) -> None:
    ends: list[UpstreamEnd] = store.upstream_ends(dependency, limit=BATCH)
    if not ends:
        return
    result.more = result.more or len(ends) >= BATCH
    job = store.get_job(dependency.job_id, owner=None)
    if job.status is JobStatus.PAUSED:
        return  # the cursor stays: resuming decides (catch-up or not)
    if job.status is JobStatus.ACTIVE:
        plan = plan_dependents(
            ends,
            on=dependency.on,
            policies=job.policies,
            run_count=job.run_count,
            in_flight=at.in_flight(job.id),
            now=at.now,
            catching_up=at.catching_up,
        )
        rows = [
            _insert(store, _row(job, item, now=at.now, engine_id=at.engine_id))
            for item in plan.runs
        ]
        _apply(job, plan, rows, at.now)
        store.update_job_states([JobState.of(job)])
        result.jobs.append(job)
        result.fired += [(job, row) for row in rows if row.status is RunStatus.RUNNING]
        result.recorded += [row for row in rows if row.status is not RunStatus.RUNNING]
    store.put_dependency(dependency.past(ends[-1]))


def _dependents(store: Store, upstream_ids: Sequence[str]) -> list[Dependency]:
    """The dependencies on ``upstream_ids``, asked ``LOOKUP`` ids at a time (a burst ends
    thousands of runs in one turn; SQLite bounds the parameters of a statement)."""
    found: list[Dependency] = []
    for start in range(0, len(upstream_ids), LOOKUP):
        found += store.dependents_of(upstream_ids[start : start + LOOKUP])
    return found


def fire_dependents(
    store: Store,
    upstream_ids: Sequence[str] | None,
    *,
    now: datetime,
    engine_id: str,
    in_flight: Callable[[str], InFlight],
    owner: str | None = None,
    after: str | None = None,
    catching_up: bool = False,
) -> tuple[DependentsFired, str | None]:
    """Handle the upstream runs ended since each dependency's cursor, for the dependencies on
    ``upstream_ids`` (None: a page of all of them after job id ``after``, the scan at start,
    which catches up: ``coalesce`` applies, as with ``catching_up``). One transaction; returns
    what it did and, for a scan, the last job id of the page."""
    result = DependentsFired()
    at = _Pass(now, engine_id, in_flight, catching_up or upstream_ids is None)
    with store.atomic():
        if upstream_ids is None:
            dependencies = store.list_dependencies(after=after, limit=BATCH, owner=owner)
        else:
            dependencies = _dependents(store, upstream_ids)
        for dependency in dependencies:
            if owner is None or dependency.owner == owner:
                _handle(store, dependency, result, at)
    last = dependencies[-1].job_id if upstream_ids is None and len(dependencies) >= BATCH else None
    return result, last


def delete_upstream(store: Store, job_id: str, *, owner: str, now: datetime) -> list[Job]:
    """Delete a job and cancel the jobs that waited for it, in one transaction; returns the
    cancelled ones."""
    with store.atomic():
        cancelled = cancel_dependents(store, job_id, now=now)
        store.delete_job(job_id, owner=owner)
    return cancelled


@dataclass(frozen=True, slots=True)
class Deleted:
    """What deleting jobs did: the jobs, their runs that left files, and the jobs that waited
    for them, cancelled (those not deleted themselves)."""

    jobs: list[Job]
    runs: list[DeletedRuns]
    cancelled: list[Job]


def delete_jobs(store: Store, doomed: Sequence[Job], *, owner: str, now: datetime) -> Deleted:
    """Delete ``doomed`` with their runs, in the caller's transaction, and cancel the jobs
    that waited for them. The runs that leave files are read in the same transaction as the
    deletion, so a run recorded meanwhile cannot keep its executed copy."""
    deleted_runs = runs_leaving_files(store, doomed)
    cancelled: dict[str, Job] = {}
    for job in doomed:
        for dependent in delete_upstream(store, job.id, owner=owner, now=now):
            cancelled[dependent.id] = dependent
    gone = {job.id for job in doomed}
    left = [job for job in cancelled.values() if job.id not in gone]
    return Deleted(list(doomed), deleted_runs, left)


def delete_job(store: Store, job_id: str, *, owner: str, now: datetime) -> Deleted:
    """Delete one job as ``delete_jobs`` does, reading it in the same transaction."""
    with store.atomic():
        job = store.get_job_for_update(job_id, owner=owner)
        return delete_jobs(store, [job], owner=owner, now=now)
