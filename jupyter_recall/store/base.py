"""The store protocols: everything the engine and the outer layers need from persistence.

One protocol per concern, each written so that a second store (PostgreSQL) implements it as
the SQLite one does: ``JobStore`` (jobs, runs and job states, and the one write path
``atomic()``), ``LeaseStore`` (engine leases and orphaned runs), ``OwnerStore`` (plugin owners
switched off), ``WatcherStore`` (watcher state and results), ``NotificationBuffer``
(notifications held for absent sessions) and ``ApprovalStore`` (the approvals inbox).
``Store`` combines them: it is what ``store.urls.open_store`` returns and what the engine
takes; a consumer that needs one concern only is typed against that one.

The protocols are synchronous (SQLite is); the async engine and server call them from a
worker thread. Every write happens inside ``atomic()``; calling a write method outside it opens
one for that call. Reads and writes that take ``owner`` are scoped to that owner; ``owner=None``
is system access, used only by the engine.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, fields
from datetime import datetime
from operator import attrgetter
from typing import Any, NamedTuple, Protocol, TypeVar, runtime_checkable

from jupyter_recall.core.approvals import ApprovalRecord
from jupyter_recall.core.dependency import Dependency, UpstreamEnd
from jupyter_recall.core.documents import NotificationJSON
from jupyter_recall.core.model import Job, JobKind, JobStatus, Run, RunStatus
from jupyter_recall.store.watchers import RING_SIZE, CheckRecord, PendingCheck, WatcherRecord

T = TypeVar("T")

JOB_SORT_KEYS = ("created_at", "next_fire_at", "last_run_at", "name")
"""What job listings sort on, each with ``id`` to break ties. A job without a next fire sorts
as if it fired last (after every instant); a job that never ran as if it ran first."""


class JobCursor(NamedTuple):
    """Where a page of jobs ends: the last job's sort value and id (keyset pagination)."""

    value: datetime | str | None
    id: str


class ApprovalCursor(NamedTuple):
    """Where a page of approval records ends: the last record's (created_at, id)."""

    created_at: datetime
    id: str


class RunCursor(NamedTuple):
    """Where a page of runs ends: the last run's (scheduled_for, created_at, id)."""

    scheduled_for: datetime
    created_at: datetime
    id: str


@dataclass(frozen=True, slots=True)
class JobFilter:
    status: Sequence[JobStatus] = ()
    kind: Sequence[JobKind] = ()
    session: str | None = None
    schedule_kind: str | None = None
    """Filter on ``job.schedule.kind``: once, interval, cron or immediate."""
    pending_recalls_only: bool = False
    limit: int | None = None
    plugin_owner: str | None = None
    """Only the jobs declared by this package or deployment (``engine/owners.py``)."""
    search: str | None = None
    """Case-insensitive (ASCII) substring of the job's id, name, ``when`` text or session."""
    sort: str = "created_at"
    """One of JOB_SORT_KEYS."""
    descending: bool = True
    after: JobCursor | None = None
    """Only the jobs after this one in the (sort, id) order: the next page."""


@dataclass(frozen=True, slots=True)
class RunFilter:
    job_id: str | None = None
    status: Sequence[RunStatus] = ()
    since: datetime | None = None
    """Runs created or finished at or after this instant (for re-sync after a disconnect)."""
    limit: int | None = None
    after: RunCursor | None = None
    """Only the runs older than this one in the newest-first order: the next page."""


class JobCount(NamedTuple):
    """How many of a user's jobs have one status, and how many of those have a run going."""

    status: JobStatus
    jobs: int
    running: int


@dataclass(slots=True)
class JobState:
    """What firing and the end of runs change in a job, without its definition (schedule,
    payloads, policies, name): the engine's hot path reads and writes thousands per second, so
    these carry no JSON and a state write leaves the job's other columns (and their indexes)
    alone."""

    id: str
    schedule_kind: str
    """Read only: ``once``, ``immediate`` (one-shot) or ``interval``, ``cron`` (recurring)."""
    status: JobStatus
    next_occurrence: datetime | None
    next_fire_at: datetime | None
    run_count: int
    failure_count: int
    last_run_at: datetime | None
    last_run_id: str | None
    last_status: RunStatus | None
    last_error: str | None
    updated_at: datetime

    @classmethod
    def of(cls, job: Job) -> JobState:
        return cls(*_state_of_job(job))

    def applied_to(self, job: Job) -> Job:
        """``job`` (its definition) with this newer state."""
        return job.evolve(**{name: getattr(self, name) for name in STATE_FIELDS})


JOB_STATE_FIELDS: tuple[str, ...] = tuple(item.name for item in fields(JobState))
"""JobState's fields, which are also the names of the ``jobs`` columns that hold them."""
STATE_FIELDS = tuple(name for name in JOB_STATE_FIELDS if name not in ("id", "schedule_kind"))
"""What a state write changes: everything in JobState but its identity and schedule kind."""
_state_of_job = attrgetter(
    *("schedule.kind" if name == "schedule_kind" else name for name in JOB_STATE_FIELDS)
)


class RunEnd(NamedTuple):
    """The end of a run as its job takes it (``Store.settle_job_states``); the decisions come
    from ``core.policy``, the store only applies them."""

    job_id: str
    status: RunStatus
    error: str | None
    failed: bool
    """Whether it adds to the job's failure_count."""
    others_in_flight: int
    """Runs of the job still held by the engine: the job can only end once none is left."""
    one_shot_end: JobStatus
    """The job's status if it ends here and its schedule is a one-shot."""
    recurring_end: JobStatus
    """... and if its schedule is recurring."""


class JobStore(Protocol):
    """Jobs, their runs and their states; the one write path, ``atomic()``."""

    # --- transactions -------------------------------------------------------------------
    def atomic(self) -> AbstractContextManager[None]:
        """One write path: BEGIN IMMEDIATE ... COMMIT, or a SAVEPOINT when nested."""
        ...

    def close(self) -> None: ...

    # --- jobs ---------------------------------------------------------------------------
    def insert_jobs(self, jobs: Sequence[Job]) -> None:
        """Insert new jobs. ConflictError if an id exists or a session already has a pending
        recall (the whole batch is refused)."""
        ...

    def update_jobs(self, jobs: Sequence[Job]) -> None:
        """Replace stored jobs by id (all fields but the identity: id, owner, kind and
        created_at are fixed at insert). NotFoundError for an unknown id, ConflictError as for
        insert_jobs; the whole batch is refused."""
        ...

    def get_job_states(self, job_ids: Sequence[str]) -> dict[str, JobState]:
        """The states of these jobs by id (system access); unknown ids are left out."""
        ...

    def settle_job_states(self, ends: Sequence[RunEnd], *, now: datetime) -> None:
        """Apply run ends to their jobs, in order, without reading them first: last status and
        error, failure count, updated_at, and the end status of a job still active or paused
        with no occurrence left and no other run in flight. Unknown jobs are left alone."""
        ...

    def update_job_states(self, states: Sequence[JobState]) -> None:
        """Write the state fields of stored jobs (everything in JobState but ``id`` and
        ``schedule_kind``), leaving their definition as stored. NotFoundError for an unknown
        id, ConflictError if it would make a second pending recall; the whole batch is refused.
        """
        ...

    def get_job(self, job_id: str, *, owner: str | None) -> Job:
        """NotFoundError when absent or owned by someone else."""
        ...

    def get_job_for_update(self, job_id: str, *, owner: str | None) -> Job:
        """``get_job`` inside ``atomic()``, the row held against other writers until the
        transaction ends, so a change computed from it cannot undo another engine's write
        made meanwhile (PostgreSQL: ``FOR UPDATE``; SQLite's ``BEGIN IMMEDIATE`` already
        holds every row)."""
        ...

    def list_jobs(self, *, owner: str | None, where: JobFilter = JobFilter()) -> list[Job]:
        """In ``where.sort`` order (newest first by default), ties broken by id in the same
        direction; after ``where.after`` if given; at most ``where.limit``."""
        ...

    def delete_job(self, job_id: str, *, owner: str | None) -> None:
        """Delete a job and its runs. NotFoundError when absent."""
        ...

    def due_jobs(self, now: datetime, *, limit: int, owner: str | None = None) -> list[Job]:
        """Active jobs with next_fire_at <= now, earliest first (O(log n) through an index);
        only ``owner``'s when given (an engine that fires one user's jobs)."""
        ...

    def next_fire_at(
        self, *, after: datetime | None = None, owner: str | None = None
    ) -> datetime | None:
        """The earliest next_fire_at among active jobs (strictly after ``after`` if given;
        among ``owner``'s if given)."""
        ...

    def count_jobs(self, *, owner: str | None) -> int: ...

    def count_jobs_by_status(
        self, *, owner: str | None, where: JobFilter = JobFilter()
    ) -> list[JobCount]:
        """The jobs matching ``where`` (its paging ignored) counted by status, statuses with
        none left out; ``running`` counts those whose last run has not ended."""
        ...

    # --- runs ---------------------------------------------------------------------------
    def insert_runs(self, runs: Sequence[Run]) -> list[Run]:
        """Insert runs; a run whose (job_id, scheduled_for, attempt) exists already is not
        inserted. Returns the runs that were inserted."""
        ...

    def delete_runs(self, run_ids: Sequence[str]) -> None:
        """Delete runs by id (system access: the engine withdrawing runs it claimed ahead of
        their due instant); unknown ids are ignored."""
        ...

    def update_runs(self, runs: Sequence[Run]) -> None:
        """Replace stored runs by id, all fields but ``output``: only append_output writes it,
        since the engine's copy of a run does not hold what was streamed into the store.
        NotFoundError for an unknown id."""
        ...

    def update_run_states(self, runs: Sequence[Run]) -> None:
        """Write what changes while and after a run executes (``status``, ``started_at``,
        ``finished_at``, ``error``), leaving the rest as inserted. NotFoundError for an
        unknown id; the whole batch is refused."""
        ...

    def append_output(self, run_id: str, text: str, *, limit: int) -> None:
        """Append to a run's output, keeping at most ``limit`` characters (the head and a
        marker saying how much was cut)."""
        ...

    def get_run(self, run_id: str, *, owner: str | None) -> Run: ...

    def list_runs(self, *, owner: str | None, where: RunFilter = RunFilter()) -> list[Run]:
        """Newest first (by scheduled_for, then created_at, then id); after ``where.after``
        if given; at most ``where.limit``."""
        ...

    def running_runs(self, *, job_id: str | None = None) -> list[Run]: ...

    # --- retries (policies.retries; store/retries_sql.py) ---------------------------------
    def due_retries(self, now: datetime, *, limit: int, owner: str | None = None) -> list[Run]:
        """Ended runs of active jobs whose ``retry_at`` is at or before ``now``, earliest
        first (PostgreSQL: locked until the transaction ends, skipped by other engines)."""
        ...

    def next_retry_at(self, *, owner: str | None = None) -> datetime | None:
        """The earliest ``retry_at`` among active jobs' runs (``owner``'s if given)."""
        ...

    def clear_retries(self, run_ids: Sequence[str]) -> None:
        """Clear these runs' ``retry_at`` (their retry was fired, or dropped)."""
        ...

    def drop_job_retries(self, job_id: str) -> None:
        """Clear the ``retry_at`` of every run of the job (it was cancelled)."""
        ...

    def pending_retries(self, job_ids: Sequence[str]) -> dict[str, datetime]:
        """The jobs among these with a retry pending (whatever their status), and the
        earliest instant one is due."""
        ...


class OwnerStore(Protocol):
    """Plugin owners a user switched off (``engine/owners.py``), with the jobs that paused."""

    def get_disabled_owner(self, owner: str, plugin_owner: str) -> list[str] | None:
        """The ids of the jobs that switching ``plugin_owner`` off paused for this user, or
        None when that owner is switched on."""
        ...

    def put_disabled_owner(
        self, owner: str, plugin_owner: str, held_jobs: Sequence[str], *, now: datetime
    ) -> None:
        """Record ``plugin_owner`` as switched off for this user, holding these paused jobs."""
        ...

    def delete_disabled_owner(self, owner: str, plugin_owner: str) -> None: ...

    def owned_jobs_for_update(self, owner: str, plugin_owner: str) -> list[Job]:
        """Inside ``atomic()``: the user's jobs declared by ``plugin_owner``, newest first, with
        that (user, owner) pair held until the transaction ends. Another engine's declaration,
        switch-off or switch-on of the same pair waits, then reads what this one wrote, and a
        firing cannot change one of these jobs in between (PostgreSQL: a transaction-level
        advisory lock on the pair and ``FOR UPDATE`` on the rows; SQLite's ``BEGIN
        IMMEDIATE`` already holds the whole file)."""
        ...

    def disabled_owners(self, owner: str | None) -> list[tuple[str, str]]:
        """(user, plugin owner) pairs switched off; all users' with ``owner=None``."""
        ...


class LeaseStore(Protocol):
    """Engine leases: a run whose engine stopped renewing its lease is orphaned."""

    def renew_lease(self, engine_id: str, *, now: datetime, until: datetime) -> None:
        """Record that ``engine_id`` is alive until ``until``."""
        ...

    def claim_lease(
        self,
        engine_id: str,
        *,
        now: datetime,
        until: datetime,
        ending_by: datetime | None = None,
    ) -> bool:
        """Take ``engine_id``'s lease, to run until ``until``, if nobody holds it: True when
        it had none, or one ending by ``ending_by`` (default ``now``: an expired one), now
        the caller's; False, the lease left as it is, when it runs past that. One statement:
        of two claims at once, one wins. ``ending_by`` later than ``now`` takes over a lease
        seen ending then and not renewed since (its holder is gone)."""
        ...

    def release_lease(self, engine_id: str) -> None: ...

    def lease_until(self, engine_id: str) -> datetime | None:
        """Until when ``engine_id``'s lease runs (its last renewal plus the lease's length);
        None when it has none (never taken, or released at a clean stop)."""
        ...

    def interrupt_orphaned_runs(self, *, now: datetime, engine_id: str) -> list[Run]:
        """Mark ``running`` runs whose engine has no live lease (or is ``engine_id`` itself,
        restarted) as ``interrupted``; return them."""
        ...


class WatcherStore(Protocol):
    """What changes at every check of a watcher, off its job row (``store/watchers.py``): its
    escalation state and counters, and the ring of its last ``RING_SIZE`` results. Both go
    with the job when it is deleted."""

    def create_watcher(
        self, job_id: str, owner: str, state: Mapping[str, Any], *, now: datetime
    ) -> None:
        """Record a new watcher's state; a watcher that has one already keeps it."""
        ...

    def get_watcher(self, job_id: str) -> WatcherRecord | None: ...

    def get_watchers(self, job_ids: Sequence[str]) -> dict[str, WatcherRecord]:
        """The watchers of these ids that have a state, by id."""
        ...

    def record_checks(self, checks: Sequence[PendingCheck]) -> None:
        """Save checks (each one's new state and result) in one transaction; a check of a
        watcher deleted meanwhile is dropped. The ring keeps the last ``RING_SIZE`` results
        (a result over ``RESULT_LIMIT`` characters of JSON is clipped: ``bounded_result``);
        every ``RING_SIZE`` checks, the watcher's finished runs are trimmed to its newest
        ``RING_SIZE``."""
        ...

    def watcher_history(self, job_id: str, last_n: int = RING_SIZE) -> list[CheckRecord]:
        """The last ``last_n`` results, newest first."""
        ...


class NotificationBuffer(Protocol):
    """Notifications held for notebook sessions that were not listening: at most
    ``BUFFER_LIMIT`` per session (the oldest go first), each for ``BUFFER_TTL``."""

    def buffer_notification(
        self, owner: str, session: str, notification: NotificationJSON, *, now: datetime
    ) -> None:
        """Hold a notification (a JSON document with an ``id``) for ``session``; one with the
        id of a held one replaces it."""
        ...

    def buffered_notifications(
        self, owner: str, session: str | None, *, now: datetime
    ) -> list[NotificationJSON]:
        """What is held (for one session, or every session of ``owner``), oldest first."""
        ...

    def take_notifications(
        self, owner: str, session: str, *, now: datetime
    ) -> list[NotificationJSON]:
        """What is held for ``session``, oldest first; it is no longer held."""
        ...


class ApprovalStore(Protocol):
    """Approval records of tool calls under an ``approve`` policy (``core/approvals.py``)."""

    def insert_approval(self, record: ApprovalRecord) -> None: ...

    def get_approval(self, approval_id: str) -> ApprovalRecord | None: ...

    def list_approvals(
        self,
        owner: str,
        status: str | None = None,
        limit: int = 500,
        after: ApprovalCursor | None = None,
    ) -> list[ApprovalRecord]:
        """``owner``'s records (of one status, or all), newest first (by created_at, then
        id); only those after ``after`` in that order (the next page) if given."""
        ...

    def pending_approvals_asked_by(self, asked_by: Sequence[str]) -> list[ApprovalRecord]:
        """Every owner's pending records asked by one of ``asked_by`` (a kernel that went
        away: ``kernel:<path>``), oldest first."""
        ...

    def decide_approval(
        self,
        approval_id: str,
        status: str,
        *,
        decided_by: str | None,
        note: str | None,
        now: datetime,
    ) -> bool:
        """Settle a pending record; False when it was not pending (the first answer wins)."""
        ...

    def expire_approvals(self, *, now: datetime) -> list[str]:
        """Mark pending records past their ``expires_at`` expired; return their ids."""
        ...


class DependencyStore(Protocol):
    """Jobs fired by another job's runs and their cursors (``core/dependency.py``)."""

    def put_dependency(self, dependency: Dependency) -> None: ...

    def delete_dependency(self, job_id: str) -> None: ...

    def get_dependency(self, job_id: str) -> Dependency | None: ...

    def dependents_of(self, upstream_ids: Sequence[str]) -> list[Dependency]:
        """The dependencies on these upstream jobs, locked for the caller's transaction."""
        ...

    def list_dependencies(
        self, *, after: str | None, limit: int, owner: str | None = None
    ) -> list[Dependency]:
        """A page of every dependency in ``job_id`` order, locked like ``dependents_of``."""
        ...

    def upstream_ends(self, dependency: Dependency, *, limit: int) -> list[UpstreamEnd]:
        """The upstream's runs final for their occurrence that ended after the cursor."""
        ...

    def latest_upstream_end(self, upstream_id: str) -> UpstreamEnd | None: ...


class RetentionStore(Protocol):
    """The runs a job's retention lets go (``store/lifecycle_tables.py``); they are deleted
    with ``JobStore.delete_runs``."""

    def prunable_runs(
        self, job_id: str, *, keep: int | None, ended_before: datetime | None, limit: int
    ) -> list[str]:
        """Ended runs beyond the newest ``keep`` or finished before ``ended_before``, oldest
        first; never a run going nor one whose retry is pending."""
        ...


class RowStore(Protocol):
    """Every table's rows as stored (``rows.py``), for moving a store (``store/transfer.py``)."""

    def dump_rows(
        self, table: str, *, after: Sequence[Any] | None, limit: int
    ) -> list[tuple[Any, ...]]:
        """At most ``limit`` rows of ``table`` in its primary key's order, after the row whose
        key is ``after`` (None: from the first)."""
        ...

    def load_rows(self, table: str, rows: Sequence[Sequence[Any]]) -> int:
        """Insert rows as given (ids kept) in one transaction, skipping any whose key (or
        unique columns) is already there; how many were inserted."""
        ...

    def count_rows(self, table: str) -> int: ...


class Store(
    JobStore,
    LeaseStore,
    OwnerStore,
    WatcherStore,
    NotificationBuffer,
    ApprovalStore,
    DependencyStore,
    RetentionStore,
    RowStore,
    Protocol,
):
    """Every concern in one store object, as ``open_store`` opens it."""


@runtime_checkable
class RunsNow(Protocol):
    """A store whose calls answer without a network round trip (an embedded database): the
    engine may run a small call on its event loop's thread instead of its store thread
    (``engine/store_thread.py``), if the store can without waiting."""

    def run_now(self, func: Callable[[], T]) -> T:
        """``func()`` here and now, unless it would wait for a lock (another thread's call on
        this store object, another connection's write): then ``StoreBusy``, nothing done."""
        ...
