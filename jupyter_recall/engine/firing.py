"""The store side of firing: one transaction per batch of due jobs, and the settling of jobs
when their runs end.

These functions are synchronous and run in the scheduler's store thread; the decisions come
from ``core.policy``, which is pure.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import NamedTuple

from jupyter_recall.core.errors import NotFoundError
from jupyter_recall.core.model import Job, Overlap, Run, RunStatus, new_id
from jupyter_recall.core.policy import (
    DueJob,
    FiringPlan,
    InFlight,
    PlannedRun,
    counts_as_failure,
    exhausted_status,
    plan_firing,
)
from jupyter_recall.engine.failures import count_failures
from jupyter_recall.engine.retrying import Retried, fire_retries, with_retry
from jupyter_recall.store.base import JobState, RunEnd, Store

RECHECK = timedelta(seconds=0.1)
"""How soon a pass looks again at a retry due but not fired by this one (another engine holds
it), or at a job waiting for one: never a busy loop."""


class Claim(NamedTuple):
    """A run fired ahead of its due instant, and its job's state before that: what undoing it
    needs (``unclaim``)."""

    run_id: str
    before: JobState


@dataclass(frozen=True, slots=True)
class Fired:
    """A run to hand to the executor, with the job as advanced by the same transaction."""

    job: Job
    run: Run
    serial: bool
    """Whether it queues behind the job's other runs (every overlap policy but ``allow``)."""
    claim: Claim | None = None
    """Set when the run was fired ahead: it executes at ``run.scheduled_for``'s fire instant
    (``start_at``), and is undone if its job changes before then."""
    start_at: datetime | None = None


@dataclass(slots=True)
class FireResult:
    fired: list[Fired] = field(default_factory=list)
    recorded: list[Run] = field(default_factory=list)
    """Rows that are final from the start: missed and skipped occurrences."""
    jobs: list[Job] = field(default_factory=list)
    full_batch: bool = False
    """The batch was full: more jobs may be due right now."""
    next_pass_at: datetime | None = None
    """When the next pass is needed: a fire instant ahead, or a deferred job's due instant."""
    retried: list[Retried] = field(default_factory=list)
    """Next attempts of occurrences whose retry was due (``engine/retrying.py``): started
    before ``fired``, so that a run of the same job fired in this pass queues behind them."""


def planned_row(job: Job, planned: PlannedRun, *, now: datetime, engine_id: str) -> Run:
    final = planned.status is not RunStatus.RUNNING
    return Run(
        id=new_id(),
        job_id=job.id,
        owner=job.owner,
        scheduled_for=planned.scheduled_for,
        trigger=planned.trigger,
        status=planned.status,
        created_at=now,
        finished_at=now if final else None,
        error=planned.error,
        engine_id=engine_id,
    )


def advance(
    job: Job, plan: FiringPlan, rows: Sequence[Run], *, now: datetime, in_flight: InFlight
) -> Job:
    """Move ``job`` past a firing pass, in place (it was just read for this pass; copying a
    record per fired job is measurable): next occurrence, counters, and its end when nothing is
    left and nothing of it is still running."""
    job.next_occurrence = plan.next.occurrence
    job.next_fire_at = plan.next.fire_at
    job.run_count = plan.run_count
    job.updated_at = now
    executed = [row for row in rows if row.status is RunStatus.RUNNING]
    if executed:
        job.last_run_at = now
        job.last_run_id = executed[-1].id
        job.last_status = RunStatus.RUNNING
        job.last_error = None
    elif plan.next.exhausted and in_flight.running == 0:
        last = rows[-1] if rows else None
        job.status = exhausted_status(
            job.schedule.is_recurring, last.status if last else job.last_status
        )
        if last is not None:
            job.last_status, job.last_error = last.status, last.error
    return job


class _Planned(NamedTuple):
    job: Job
    plan: FiringPlan
    rows: list[Run]
    flight: InFlight
    ahead_of: datetime | None
    """The fire instant of a run fired ahead of it."""
    before: JobState | None


def _claimable(plan: FiringPlan, flight: InFlight, fire_at: datetime, ahead: timedelta) -> bool:
    """Whether a job not yet due may be fired now, to execute at its instant: only when
    nothing can change the decision by then. Nothing of it is in flight (the overlap policy
    decides at the due instant), exactly one run executes on time, and its next occurrence is
    beyond the reach of the passes until then (so an undone claim never meets a newer one)."""
    if flight.running or flight.waiting:
        return False
    if len(plan.runs) != 1 or plan.runs[0].status is not RunStatus.RUNNING:
        return False
    following = plan.next.fire_at
    return following is None or following > fire_at + ahead


def _plan_job(
    job: Job,
    *,
    now: datetime,
    ahead: timedelta,
    engine_id: str,
    in_flight: Callable[[str], InFlight],
) -> _Planned | None:
    """Plan one job read by a pass; None when it is not due yet and must wait for its instant."""
    flight = in_flight(job.id)
    fire_at = job.next_fire_at
    early = fire_at is not None and fire_at > now
    # A job fired ahead is planned as the pass at its own fire instant would plan it.
    at = fire_at if early and fire_at is not None else now
    due = DueJob(
        job.id, job.schedule, job.next_occurrence or now, job.policies, job.run_count, flight
    )
    plan = plan_firing(due, at)
    if early and not _claimable(plan, flight, at, ahead):
        return None
    rows = [planned_row(job, p, now=now, engine_id=engine_id) for p in plan.runs]
    if not early:
        return _Planned(job, plan, rows, flight, None, None)
    return _Planned(job, plan, rows, flight, at, JobState.of(job))


def pass_for(fire_at: datetime, ahead: timedelta) -> datetime:
    """The instant of the pass that fires a job due at ``fire_at``: half the window before it.
    Passes come every half ``ahead`` under a stream of jobs (each fires the next half window's),
    not once per job: a job is fired between ahead/2 and ahead early."""
    return fire_at - ahead / 2


def fire_due(
    store: Store,
    *,
    now: datetime,
    engine_id: str,
    batch_size: int,
    in_flight: Callable[[str], InFlight],
    ahead: float = 0.0,
    owner: str | None = None,
) -> FireResult:
    """Fire the jobs due at ``now``, and those due within ``ahead`` seconds whose runs can be
    decided now; one batch, in one transaction.

    The runs are inserted and their jobs advanced together; the store's unique
    ``(job_id, scheduled_for)`` makes a second engine (or a replay after a crash) unable to
    record an occurrence twice, and only runs that this transaction inserted are executed.
    Firing ahead takes the store's work out of the lag of a burst: the runs then wait in
    memory for their instant (``docs/engine.md``, "Firing ahead"). With ``owner``, only that
    user's jobs are fired (a server of one user on a store shared by many).
    """
    result = FireResult()
    reach = timedelta(seconds=ahead)
    deferred: list[datetime] = []
    moved = False
    with store.atomic():
        retries = fire_retries(store, now=now, engine_id=engine_id, limit=batch_size, owner=owner)
        result.retried = retries.retried
        jobs = store.due_jobs(now + reach, limit=batch_size, owner=owner)
        flights = _with_retries(store, jobs, retries.retried, in_flight)
        plans: list[_Planned] = []
        for job in jobs:
            waiting_for = flights.wait_for(job)
            if waiting_for is not None:
                until = max(waiting_for, now + RECHECK)
                deferred.append(until)
                if _put_off(job, until, now):
                    result.jobs.append(job)
                    moved = moved or until > now + reach
                continue
            planned = _plan_job(job, now=now, ahead=reach, engine_id=engine_id, in_flight=flights)
            if planned is None:
                deferred.append(job.next_fire_at or now)
            else:
                plans.append(planned)
        inserted = {run.id for run in store.insert_runs([r for p in plans for r in p.rows])}
        for planned in plans:
            _advance_planned(planned, inserted, result, now=now)
        store.update_job_states([JobState.of(job) for job in result.jobs])
    # A batch of deferred jobs alone is not full: the next pass would read them again at once
    # (unless they were moved out of its reach).
    result.full_batch = (len(jobs) >= batch_size and (bool(plans) or moved)) or len(
        result.retried
    ) >= batch_size
    if not result.full_batch:
        later = store.next_fire_at(after=now + reach, owner=owner)
        retry = store.next_retry_at(owner=owner)
        result.next_pass_at = min(
            [
                *deferred,
                *([] if later is None else [pass_for(later, reach)]),
                *([] if retry is None else [max(retry, now + RECHECK)]),
            ],
            default=None,
        )
    return result


def _put_off(job: Job, until: datetime, now: datetime) -> bool:
    """Put off ``job``, whose due occurrence waits for the retry of its previous one, until
    ``until`` (the retry's instant): its ``next_fire_at`` moves there, its occurrence stays.
    Left due, a batch's worth of such jobs would be all that every pass reads (the earliest
    due first) and would hold up the jobs due after them. Whether the job changed: a job read
    ahead of its instant (``ahead``) that the retry precedes is left as it is."""
    if job.next_fire_at is not None and job.next_fire_at >= until:
        return False
    job.next_fire_at = until
    job.updated_at = now
    return True


class _Flights:
    """What the overlap policy sees of a pass's due jobs: this engine's runs in flight, plus
    an occurrence whose retry is pending (in the store) or was fired in this very pass, which
    counts as still running."""

    def __init__(
        self,
        held: Callable[[str], InFlight],
        pending: dict[str, datetime],
        retried: set[str],
        overlaps: dict[str, Overlap],
    ) -> None:
        self._held = held
        self._pending = pending
        self._retried = retried
        self._overlaps = overlaps

    def __call__(self, job_id: str) -> InFlight:
        flight = self._held(job_id)
        if job_id in self._pending or job_id in self._retried:
            return InFlight(flight.running + 1, flight.waiting)
        return flight

    def wait_for(self, job: Job) -> datetime | None:
        """The instant to look at ``job`` again, when its occurrence is due while a retry of
        its previous one waits for its backoff and ``overlap=buffer_one``: the occurrence
        waits for that attempt (then queues behind it) rather than run before it."""
        if self._overlaps.get(job.id) is not Overlap.BUFFER_ONE:
            return None
        if job.id in self._retried or self._held(job.id).waiting:
            return None
        return self._pending.get(job.id)


def _with_retries(
    store: Store, jobs: Sequence[Job], retried: Sequence[Retried], held: Callable[[str], InFlight]
) -> _Flights:
    retrying = [job for job in jobs if job.policies.retries is not None]
    pending = store.pending_retries([job.id for job in retrying]) if retrying else {}
    overlaps = {job.id: job.policies.overlap for job in retrying}
    return _Flights(held, pending, {item.job.id for item in retried}, overlaps)


def _advance_planned(
    planned: _Planned, inserted: set[str], result: FireResult, *, now: datetime
) -> None:
    kept = [row for row in planned.rows if row.id in inserted]
    job = advance(planned.job, planned.plan, kept, now=now, in_flight=planned.flight)
    if kept and planned.ahead_of is not None:
        job.last_run_at = planned.ahead_of
    result.jobs.append(job)
    serial = job.policies.overlap is not Overlap.ALLOW
    for row in kept:
        if row.status is not RunStatus.RUNNING:
            result.recorded.append(row)
        elif planned.before is None:
            result.fired.append(Fired(job, row, serial))
        else:
            claim = Claim(row.id, planned.before)
            result.fired.append(Fired(job, row, serial, claim, planned.ahead_of))


def unclaim(store: Store, claims: Sequence[Claim]) -> list[JobState]:
    """Undo runs fired ahead and withdrawn before their instant (their job is being changed,
    or the engine stops): their rows go and their jobs' schedule state is as before the claim,
    so the change applies as if they had never been fired. Returns the states restored."""
    if not claims:
        return []
    with store.atomic():
        store.delete_runs([claim.run_id for claim in claims])
        states = store.get_job_states([claim.before.id for claim in claims])
        for claim in claims:
            state = states.get(claim.before.id)
            if state is not None:
                _restore(state, claim)
        store.update_job_states(list(states.values()))
    return list(states.values())


def _restore(state: JobState, claim: Claim) -> None:
    before = claim.before
    state.next_occurrence = before.next_occurrence
    state.next_fire_at = before.next_fire_at
    state.run_count = before.run_count
    if state.last_run_id == claim.run_id:
        state.last_run_at, state.last_run_id = before.last_run_at, before.last_run_id
        state.last_status, state.last_error = before.last_status, before.last_error


# --- the end of runs ------------------------------------------------------------------------


class Ended(NamedTuple):
    """A run that reached a final status, and how many runs of its job this engine still holds
    (the job can only end once none is left). A named tuple: one is made per run."""

    run: Run
    others_in_flight: int = 0
    job: Job | None = None
    """The job as it was when the run fired, to show the settled job in events."""


def run_end(item: Ended) -> RunEnd:
    """What the end of ``item``'s run does to its job, decided here (``core.policy``) and
    applied by the store."""
    run = item.run
    # An attempt followed by a retry is not its occurrence's outcome: it adds no failure, and
    # the pending retry keeps the job from ending as a run in flight would.
    retrying = run.retry_at is not None
    return RunEnd(
        run.job_id,
        run.status,
        run.error,
        counts_as_failure(run.status) and not retrying,
        item.others_in_flight + retrying,
        exhausted_status(False, run.status),
        exhausted_status(True, run.status),
    )


def settle_jobs(
    store: Store, ended: Sequence[Ended], *, now: datetime, read_back: bool = True
) -> list[JobState]:
    """Apply ended runs to their jobs inside the caller's transaction: the store updates each
    job as it is then (so a concurrent pause or edit is never overwritten), with no read
    first. The settled states are read back only when someone needs them (``read_back``).
    Jobs deleted meanwhile are left alone."""
    store.settle_job_states([run_end(item) for item in ended], now=now)
    if not read_back or not ended:
        return []
    return list(store.get_job_states([item.run.job_id for item in ended]).values())


@dataclass(slots=True)
class FlushResult:
    runs: list[Run] = field(default_factory=list)
    states: list[JobState] = field(default_factory=list)
    paused: list[Job] = field(default_factory=list)
    """Jobs this batch's failures paused (``policies.pause_after_failures``)."""


def _update_existing_runs(store: Store, runs: Sequence[Run]) -> list[Run]:
    try:
        store.update_run_states(runs)
        return list(runs)
    except NotFoundError:
        # A job was deleted while its run was in flight: keep the others.
        kept = []
        for run in runs:
            try:
                store.update_run_states([run])
            except NotFoundError:
                continue
            kept.append(run)
        return kept


def flush(
    store: Store,
    *,
    updates: Sequence[Run],
    ended: Sequence[Ended],
    outputs: Mapping[str, str],
    output_limit: int,
    now: datetime,
    read_back: bool = True,
) -> FlushResult:
    """Persist a batch of run changes, output and ends in one transaction (the settled job
    states are in the result when ``read_back``: for the events that announce them)."""
    result = FlushResult()
    with store.atomic():
        for run_id, text in outputs.items():
            try:
                store.append_output(run_id, text, limit=output_limit)
            except NotFoundError:
                continue
        result.runs = _update_existing_runs(store, updates)
        kept = {run.id for run in result.runs}
        result.states = settle_jobs(
            store, [e for e in ended if e.run.id in kept], now=now, read_back=read_back
        )
        outcomes = [(e.run, e.job) for e in ended if e.run.id in kept and e.job is not None]
        result.paused = count_failures(store, outcomes, now=now)
    return result


# --- leases -----------------------------------------------------------------------------------


@dataclass(slots=True)
class Recovery:
    runs: list[Run] = field(default_factory=list)
    jobs: list[Job] = field(default_factory=list)


def renew_and_recover(
    store: Store, *, engine_id: str, now: datetime, lease_seconds: float, starting: bool
) -> Recovery:
    """Renew this engine's lease and interrupt the runs nobody will finish.

    At start-up this engine's own leftovers count (same id: it restarted); afterwards only the
    runs of engines whose lease expired do, so the lookup uses an id that owns no run.
    """
    until = now + timedelta(seconds=lease_seconds)
    with store.atomic():
        store.renew_lease(engine_id, now=now, until=until)
        look_as = engine_id if starting else f"{engine_id}/sweep"
        runs = _retried_if_asked(store, store.interrupt_orphaned_runs(now=now, engine_id=look_as))
        if not runs:
            return Recovery()
        settled = settle_jobs(store, [Ended(run) for run in runs], now=now)
        jobs = [store.get_job(state.id, owner=None) for state in settled]
    return Recovery(runs, jobs)


def _retried_if_asked(store: Store, runs: list[Run]) -> list[Run]:
    """Interrupted runs whose job retries interrupted attempts get their retry, written in
    the recovery's transaction: the occurrence's next attempt comes after the restart."""
    jobs: dict[str, Job] = {}
    result: list[Run] = []
    for run in runs:
        job = jobs.get(run.job_id) or store.get_job(run.job_id, owner=None)
        jobs[job.id] = job
        assert run.finished_at is not None  # interrupted: just ended
        result.append(with_retry(job, run, ended_at=run.finished_at))
    retried = [run for run in result if run.retry_at is not None]
    if retried:
        store.update_run_states(retried)
    return result
