"""Creating and changing jobs on behalf of users: validation, then one transaction each.

Synchronous; the scheduler runs these in its store thread. ``now`` is always an argument.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from jupyter_recall.core.actions import JobAction, require
from jupyter_recall.core.errors import (
    ChangedMeanwhile,
    ConflictError,
    PassedWhilePaused,
    ValidationError,
)
from jupyter_recall.core.model import (
    DEFAULT_POLICIES,
    Job,
    JobKind,
    JobStatus,
    Policies,
    Run,
    RunStatus,
    RunTrigger,
    new_id,
)
from jupyter_recall.core.policy import (
    TICK,
    NextFire,
    exhausted_status,
    plan_resume,
    plan_skip,
    schedule_next,
)
from jupyter_recall.core.records import (
    NO_OPTIONS,
    SERVER_TARGET,
    Action,
    JobOptions,
    Target,
    check_fits,
    check_options_fit,
)
from jupyter_recall.core.tz import resolve_tz
from jupyter_recall.core.when import ScheduleSpec, parse_when
from jupyter_recall.engine import dependencies
from jupyter_recall.store.base import Store

NAME_LENGTH = 60


@dataclass(frozen=True, slots=True)
class NewJob:
    """What callers submit to create a job: its payloads are records, parsed at the edge (REST
    body, owners' declarations), which the engine does not check again."""

    when: str
    action: Action
    target: Target = SERVER_TARGET
    name: str | None = None
    """Default: derived from the action (e.g. the first line of its code)."""
    kind: JobKind = JobKind.JOB
    tz: str | None = None
    """Default: the scheduler's default_tz."""
    session: str | None = None
    policies: Policies = DEFAULT_POLICIES
    options: JobOptions = NO_OPTIONS
    anchor: datetime | None = None
    """The instant ``when`` is read at (default: now). Interval schedules count from it: jobs
    sharing an anchor and an interval fire together, in one batch (watchers use this)."""


def default_name(action: Action) -> str:
    """A short name from the action: its tool name, first line of code, message..."""
    line = action.headline.lstrip().split("\n", 1)[0].strip()
    if not line:
        return action.type
    return line if len(line) <= NAME_LENGTH else line[: NAME_LENGTH - 1] + "…"


def _no_occurrence_left(spec: ScheduleSpec, policies: Policies) -> ValidationError:
    first = spec.first_fire_time()
    if policies.end_at is not None and first is not None and first > policies.end_at:
        return ValidationError(
            "policies.end_at",
            f"{policies.end_at.isoformat()} is before the first occurrence {first.isoformat()}",
        )
    return ValidationError("when", f"{spec.canonical!r} has no occurrence left")


def build_job(
    new: NewJob,
    *,
    owner: str,
    now: datetime,
    default_tz: str,
    names: dict[int, str] | None = None,
) -> Job:
    """Check a submission and make it a job with its first occurrence planned. ``names``
    remembers default names by action identity, for a batch sharing one action."""
    if not isinstance(new.when, str) or not new.when.strip():
        raise ValidationError("when", f"must be a non-empty string, got {new.when!r}")
    kind = new.kind if type(new.kind) is JobKind else JobKind.parse(new.kind, "kind")
    if kind is JobKind.RECALL and not new.session:
        raise ValidationError("session", "a recall belongs to a kernel session: give 'session'")
    spec = parse_when(new.when, now=new.anchor or now, tz=new.tz or default_tz)
    action, target = new.action, new.target
    check_fits(action, target)
    check_options_fit(new.options, target)
    policies = new.policies.in_zone(resolve_tz(spec.tz))
    job_id = new_id()
    first = schedule_next(spec, job_id, spec.first_fire_time(), policies, 0)
    if first.exhausted and spec.after is None:
        raise _no_occurrence_left(spec, policies)
    return Job(
        id=job_id,
        owner=owner,
        name=new.name or _default_name(action, names),
        kind=kind,
        when=new.when,
        schedule=spec,
        action=action,
        target=target,
        created_at=now,
        updated_at=now,
        policies=policies,
        session=new.session,
        next_occurrence=first.occurrence,
        next_fire_at=first.fire_at,
        options=new.options,
    )


def _default_name(action: Action, names: dict[int, str] | None) -> str:
    if names is None:
        return default_name(action)
    # Keyed by identity: the submission holds the action, so no other object takes its id.
    name = names.get(id(action))
    if name is None:
        name = names[id(action)] = default_name(action)
    return name


def build_jobs(
    news: Sequence[NewJob],
    *,
    first: int,
    owner: str,
    now: datetime,
    default_tz: str,
    names: dict[int, str] | None = None,
) -> list[Job]:
    """Build the jobs of a batch; a bad one refuses it, naming its index in the batch."""
    names = {} if names is None else names
    built = []
    for index, new in enumerate(news, start=first):
        try:
            built.append(build_job(new, owner=owner, now=now, default_tz=default_tz, names=names))
        except ValidationError as exc:
            raise ValidationError(
                f"jobs[{index}].{exc.field}", exc.message, accepted=exc.accepted
            ) from exc
    return built


def create_jobs(
    store: Store, news: Sequence[NewJob], *, owner: str, now: datetime, default_tz: str
) -> list[Job]:
    """Build every job (a bad one refuses the batch), then insert all in one transaction."""
    if len(news) == 1:
        jobs = [build_job(news[0], owner=owner, now=now, default_tz=default_tz)]
    else:
        jobs = build_jobs(news, first=0, owner=owner, now=now, default_tz=default_tz)
    # Stored in firing order: the jobs that fire together then share pages of the table, which
    # makes firing them (read, update, commit) cheaper. Returned in the order submitted.
    by_fire_time = sorted(jobs, key=_fire_order)
    with store.atomic():
        store.insert_jobs(by_fire_time)
        _link_all(store, jobs, now=now, batch=len(news) > 1)
    return jobs


def _link_all(store: Store, jobs: Sequence[Job], *, now: datetime, batch: bool) -> None:
    """Write the dependencies of the jobs that wait for another job (``engine/dependencies``)."""
    for index, job in enumerate(jobs):
        if job.schedule.after is None:
            continue
        try:
            dependencies.link(store, job, now=now)
        except ValidationError as exc:
            if not batch:
                raise
            raise ValidationError(
                f"jobs[{index}].{exc.field}", exc.message, accepted=exc.accepted
            ) from exc


def _fire_order(job: Job) -> datetime:
    return job.next_fire_at or job.created_at


# --- changes ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class JobChanges:
    when: str | None = None
    tz: str | None = None
    name: str | None = None
    action: Action | None = None
    target: Target | None = None
    policies: Policies | None = None
    options: JobOptions | None = None
    read_from: Job | None = None
    """The job these changes were computed from (a PATCH merges into its policies and options
    and checks its action with a new target): ``update_job`` refuses them with
    ChangedMeanwhile if any of those four changed since."""
    anchor: datetime | None = None
    """The instant a new ``when`` is read at (default: the time of the change), as
    ``NewJob.anchor``: an edited watcher's checks stay aligned with its interval."""

    @property
    def reschedules(self) -> bool:
        return self.when is not None or self.tz is not None or self.policies is not None

    @property
    def redefines(self) -> bool:
        """Whether they change what the job's runs do or which occurrences are its: a run
        fired before them and not executing yet does not execute after them."""
        changed = (self.when, self.tz, self.action, self.target)
        return any(value is not None for value in changed)


def _rescheduled(job: Job, changes: JobChanges, now: datetime) -> Job:
    # The zone it has, sent again (a form sends every field), is no change: read again from
    # now, "in 2 hours" would move.
    new_zone = changes.tz is not None and changes.tz != job.schedule.tz
    if changes.when is not None or new_zone:
        when = changes.when if changes.when is not None else job.when
        spec = parse_when(when, now=changes.anchor or now, tz=changes.tz or job.schedule.tz)
        occurrence = spec.first_fire_time()
    else:
        when, spec, occurrence = job.when, job.schedule, job.next_occurrence
        if occurrence is None and spec.after is None:
            raise ConflictError(f"job {job.id} has no occurrence left to reschedule")
    policies = (changes.policies or job.policies).in_zone(resolve_tz(spec.tz))
    upcoming = schedule_next(spec, job.id, occurrence, policies, job.run_count)
    if upcoming.exhausted and spec.after is None:
        raise _no_occurrence_left(spec, policies)
    moved = job.evolve(
        when=when,
        schedule=spec,
        policies=policies,
        next_occurrence=upcoming.occurrence,
        next_fire_at=upcoming.fire_at,
    )
    # A paused job fires nothing: its next occurrence moves, and it keeps no next fire.
    return moved.paused() if job.status is JobStatus.PAUSED else moved


def _changed(job: Job, changes: JobChanges, now: datetime) -> Job:
    if changes.reschedules:
        job = _rescheduled(job, changes, now)
    if changes.name is not None:
        if not changes.name.strip():
            raise ValidationError("name", "must not be empty")
        job = job.evolve(name=changes.name)
    if changes.action is not None or changes.target is not None:
        action = job.action if changes.action is None else changes.action
        target = job.target if changes.target is None else changes.target
        check_fits(action, target)
        job = job.evolve(action=action, target=target)
    if changes.options is not None:
        job = job.evolve(options=changes.options)
    if changes.options is not None or changes.target is not None:
        check_options_fit(job.options, job.target)
    return job.evolve(updated_at=now)


def update_job(store: Store, job_id: str, *, owner: str, now: datetime, changes: JobChanges) -> Job:
    with store.atomic():
        job = store.get_job_for_update(job_id, owner=owner)
        if changes.read_from is not None and not _same_basis(job, changes.read_from):
            raise ChangedMeanwhile(job_id)
        require(job, JobAction.EDIT)
        job = _changed(job, changes, now)
        store.update_jobs([job])
        if changes.when is not None:
            dependencies.link(store, job, now=now)
    return job


def _same_basis(job: Job, read: Job) -> bool:
    return (job.action, job.target, job.policies, job.options) == (
        read.action,
        read.target,
        read.policies,
        read.options,
    )


def pause_job(store: Store, job_id: str, *, owner: str, now: datetime) -> Job:
    with store.atomic():
        job = store.get_job_for_update(job_id, owner=owner)
        require(job, JobAction.PAUSE)
        job = job.paused(updated_at=now)
        store.update_jobs([job])
    return job


def resume_job(
    store: Store, job_id: str, *, owner: str, now: datetime, catch_up: bool, in_flight: int
) -> Job:
    with store.atomic():
        job = store.get_job_for_update(job_id, owner=owner)
        require(job, JobAction.RESUME)
        if job.schedule.after is not None:
            return _resume_dependent(store, job, now=now, catch_up=catch_up)
        planned = job.next_occurrence
        if not catch_up and not job.schedule.is_recurring and planned is not None and planned < now:
            raise PassedWhilePaused(job.id, planned.isoformat())
        upcoming = plan_resume(
            job.schedule,
            job.id,
            planned=planned,
            now=now,
            policies=job.policies,
            run_count=job.run_count,
            catch_up=catch_up,
        )
        job = _with_next(job, upcoming, now=now, in_flight=in_flight, status=JobStatus.ACTIVE)
        # Resuming starts the count of consecutive failures again (pause_after_failures).
        job = job.evolve(failure_streak=0, paused_reason=None)
        store.update_jobs([job])
    return job


def _resume_dependent(store: Store, job: Job, *, now: datetime, catch_up: bool) -> Job:
    """A job waiting for another one resumes active; without ``catch_up`` the upstream runs
    that ended while it was paused are passed over (with it, the engine handles them)."""
    if not catch_up:
        dependencies.pass_over(store, job)
    job = job.evolve(status=JobStatus.ACTIVE, updated_at=now)
    store.update_jobs([job])
    return job


def _with_next(
    job: Job, upcoming: NextFire, *, now: datetime, in_flight: int, status: JobStatus
) -> Job:
    if upcoming.exhausted and in_flight == 0:
        status = exhausted_status(job.schedule.is_recurring, job.last_status)
    job = job.evolve(
        status=status,
        next_occurrence=upcoming.occurrence,
        next_fire_at=upcoming.fire_at,
        updated_at=now,
    )
    return job.paused() if status is JobStatus.PAUSED else job


def skip_job(
    store: Store, job_id: str, *, owner: str, now: datetime, engine_id: str, in_flight: int
) -> tuple[Job, Run | None]:
    """Skip the next occurrence of a recurring job, recorded as a ``skipped`` run."""
    with store.atomic():
        job = store.get_job_for_update(job_id, owner=owner)
        require(job, JobAction.SKIP)
        plan = plan_skip(
            job.schedule,
            job.id,
            planned=job.next_occurrence,
            now=now,
            policies=job.policies,
            run_count=job.run_count,
        )
        if plan is None:
            raise ConflictError(f"job {job.id} has no occurrence left to skip")
        row = Run(
            id=new_id(),
            job_id=job.id,
            owner=job.owner,
            scheduled_for=plan.skipped,
            trigger=RunTrigger.MANUAL,
            status=RunStatus.SKIPPED,
            created_at=now,
            finished_at=now,
            error="skipped on request (skip next occurrence)",
            engine_id=engine_id,
        )
        inserted = store.insert_runs([row])
        job = _with_next(job, plan.next, now=now, in_flight=in_flight, status=job.status)
        store.update_jobs([job])
    return job, (inserted[0] if inserted else None)


def cancel_job(
    store: Store, job_id: str, *, owner: str, now: datetime, reason: str | None = None
) -> Job:
    with store.atomic():
        job = store.get_job_for_update(job_id, owner=owner)
        require(job, JobAction.CANCEL)
        job = job.evolve(
            status=JobStatus.CANCELLED, next_occurrence=None, next_fire_at=None, updated_at=now
        )
        if reason is not None:
            job = job.evolve(last_error=reason)
        store.update_jobs([job])
    return job


def trigger_job(
    store: Store, job_id: str, *, owner: str, now: datetime, engine_id: str
) -> tuple[Job, Run]:
    """Record a manual run now; the schedule does not move."""
    with store.atomic():
        job = store.get_job_for_update(job_id, owner=owner)
        require(job, JobAction.RUN_NOW)
        run = Run(
            id=new_id(),
            job_id=job.id,
            owner=job.owner,
            scheduled_for=now,
            trigger=RunTrigger.MANUAL,
            status=RunStatus.RUNNING,
            created_at=now,
            engine_id=engine_id,
        )
        # The key (job_id, scheduled_for) may be taken by an occurrence at this very instant.
        while not store.insert_runs([run]):
            run = run.evolve(scheduled_for=run.scheduled_for + TICK)
        job = job.evolve(
            last_run_at=now,
            last_run_id=run.id,
            last_status=RunStatus.RUNNING,
            last_error=None,
            updated_at=now,
        )
        store.update_jobs([job])
    return job, run
