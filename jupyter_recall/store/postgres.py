"""The shared store: PostgreSQL through psycopg 3 (the ``postgres`` extra).

Same contract as the SQLite store (``base.py``), same rows (``rows.py``) and conversions
(``codec.py``); what differs is how several engines share it. ``due_jobs`` locks the jobs it
returns with ``FOR UPDATE SKIP LOCKED``: inside the firing transaction (``engine/firing.py``)
two engines claim disjoint batches without waiting for each other, and the unique
``(job_id, scheduled_for)`` still makes a second record of an occurrence impossible.

One connection per store object, in autocommit mode: ``atomic()`` opens a transaction
(``BEGIN``), nested blocks are savepoints, and an ``RLock`` is held for every read and for a
whole ``atomic()`` block, as in SQLite. A connection that broke (server restart, network cut)
is replaced at the next call outside a transaction; the call that met the break fails with a
StoreError naming the cause.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import psycopg
from psycopg import sql as pgsql

from jupyter_recall.core.errors import ConflictError, NotFoundError, StoreError
from jupyter_recall.core.model import Job, JobStatus, Run, RunStatus
from jupyter_recall.store import codec, sql_builders
from jupyter_recall.store.approval_tables import ApprovalTables
from jupyter_recall.store.base import (
    STATE_FIELDS,
    JobCount,
    JobFilter,
    JobState,
    RunEnd,
    RunFilter,
)
from jupyter_recall.store.changes import ChangeListener, EventListener
from jupyter_recall.store.dependency_tables import DependencyTables
from jupyter_recall.store.lifecycle_tables import RetentionTables
from jupyter_recall.store.owner_tables import DisabledOwnerTables
from jupyter_recall.store.postgres_listen import (
    NOTIFY,
    PAYLOAD_LIMIT,
    Listener,
    Publisher,
    payload,
    scrubbed,
)
from jupyter_recall.store.postgres_schema import PostgresMigration, migrate
from jupyter_recall.store.postgres_watchers import PostgresWatcherTables
from jupyter_recall.store.retries_sql import RetryTables
from jupyter_recall.store.row_tables import RowTables
from jupyter_recall.store.rows import (
    JobRow,
    JobStateRow,
    LeaseRow,
    RunRow,
    RunStateRow,
    columns,
)
from jupyter_recall.store.sql_builders import LONG_AGO, POSTGRES, BatchConflicts
from jupyter_recall.store.sqlite import (
    _lease_row,
    _orphan_reason,
    _state_from_row,
    _state_row,
    bounded_output,
)

_JOB_SELECT = f"SELECT {columns(JobRow._fields)} FROM jobs"
_RUN_SELECT = f"SELECT {columns(RunRow._fields)} FROM runs"
_JOB_FIXED = frozenset({"id", "owner", "kind", "created_at"})
_RUN_FIXED = frozenset({"id", "output", "output_dropped"})

# The Postgres type of each column that a batch statement passes as an array (``unnest``).
_TYPES = {
    "bigint": frozenset(
        {
            "next_occurrence", "next_fire_at", "run_count", "failure_count", "last_run_at",
            "created_at", "updated_at", "version", "scheduled_for", "started_at", "finished_at",
            "output_dropped", "attempt", "retry_at", "failure_streak",
        }
    ),
}  # fmt: skip


def _pg_type(name: str) -> str:
    return "bigint" if name in _TYPES["bigint"] else "text"


def _unnest(fields: Sequence[str]) -> str:
    """A row source of one array parameter per column: a whole batch in one statement."""
    arrays = ", ".join(f"%s::{_pg_type(name)}[]" for name in fields)
    return f"unnest({arrays}) AS v ({columns(fields)})"


def _columns_of(rows: Sequence[Sequence[Any]], width: int) -> list[list[Any]]:
    """Rows turned into one list per column (the parameters of ``_unnest``)."""
    if not rows:
        return [[] for _ in range(width)]
    return [list(column) for column in zip(*rows, strict=True)]


def _update_from(table: str, fields: Sequence[str], changed: Sequence[str]) -> str:
    assignments = ", ".join(f"{name} = v.{name}" for name in changed)
    return f"UPDATE {table} SET {assignments} FROM {_unnest(fields)} WHERE {table}.id = v.id"


_INSERT_RUNS = (
    f"INSERT INTO runs ({columns(RunRow._fields)}) SELECT * FROM {_unnest(RunRow._fields)} "
    "ON CONFLICT (job_id, scheduled_for, attempt) DO NOTHING RETURNING id"
)
_UPDATE_JOB = _update_from(
    "jobs", JobRow._fields, [name for name in JobRow._fields if name not in _JOB_FIXED]
)
_UPDATE_JOB_STATE = _update_from("jobs", JobStateRow._fields, STATE_FIELDS)
_UPDATE_RUN = _update_from(
    "runs", RunRow._fields, [name for name in RunRow._fields if name not in _RUN_FIXED]
)
_UPDATE_RUN_STATE = _update_from("runs", RunStateRow._fields, RunStateRow._fields[1:])
# Locks the jobs it returns until the transaction ends; another engine's pass skips them.
# ``%(owner)s IS NULL`` keeps one statement (one prepared plan) for all owners and for one.
_DUE_JOBS = (
    f"{_JOB_SELECT} WHERE status = 'active' AND next_fire_at <= %(now)s "
    "AND (%(owner)s::text IS NULL OR owner = %(owner)s) "
    "ORDER BY next_fire_at, id LIMIT %(limit)s FOR UPDATE SKIP LOCKED"
)
_SETTLE_JOB_STATE = (
    "UPDATE jobs SET last_status = v.status, last_error = v.error, updated_at = %s, "
    "failure_count = failure_count + v.failed, "
    "status = CASE WHEN jobs.status IN ('active', 'paused') AND next_occurrence IS NULL "
    "AND v.ending AND schedule_kind <> 'after' "
    "THEN CASE WHEN schedule_kind IN ('interval', 'cron') THEN v.recurring ELSE v.once END "
    "ELSE jobs.status END "
    "FROM unnest(%s::text[], %s::text[], %s::text[], %s::bigint[], %s::boolean[], "
    "%s::text[], %s::text[]) AS v (id, status, error, failed, ending, recurring, once) "
    "WHERE jobs.id = v.id"
)
"""Run ends settled in one statement, one row per job (``_settled``)."""
_SELECT_JOB_STATE = f"SELECT {columns(JobStateRow._fields)} FROM jobs WHERE id = ANY(%s)"
_NEXT_FIRE_AT = (
    "SELECT next_fire_at FROM jobs WHERE status = 'active' AND next_fire_at > %(after)s "
    "AND (%(owner)s::text IS NULL OR owner = %(owner)s) ORDER BY next_fire_at LIMIT 1"
)
_RENEW_LEASE = (
    f"INSERT INTO leases ({columns(LeaseRow._fields)}) VALUES (%s, %s, %s) "
    "ON CONFLICT (engine_id) DO UPDATE SET until = excluded.until"
)
_CLAIM_LEASE = (
    f"INSERT INTO leases ({columns(LeaseRow._fields)}) VALUES (%s, %s, %s) "
    "ON CONFLICT (engine_id) DO UPDATE SET acquired_at = excluded.acquired_at, "
    "until = excluded.until WHERE leases.until <= %s"
)
"""A lease taken only if absent or ending by an instant: one row changed when it was."""
_RUNNING_WITH_LEASES = (
    f"SELECT {columns(RunRow._fields, prefix='runs.')}, leases.until "
    "FROM runs LEFT JOIN leases ON leases.engine_id = runs.engine_id "
    "WHERE runs.status = 'running' FOR UPDATE OF runs"
)
_ANY_JOB = JobFilter()
COMMIT_CHECK_RETRY = 0.2
"""Seconds between two tries at asking whether a cut-off commit went through."""
Params = Sequence[Any] | Mapping[str, Any]
_ANY_RUN = RunFilter()


def _redacted(url: str) -> str:
    """The URL without its password, for messages and ``repr``."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "postgresql://(unparsable URL)"
    info.pop("password", None)
    return " ".join(f"{key}={value}" for key, value in info.items())


class PostgresStore(
    PostgresWatcherTables,
    ApprovalTables,
    DependencyTables,
    RetentionTables,
    RetryTables,
    RowTables,
    BatchConflicts,
    DisabledOwnerTables,
):
    """The Store protocol on a PostgreSQL database (``postgresql://`` URL, libpq's forms)."""

    _mark = "%s"
    _dialect = POSTGRES
    _locks_due_retries = True
    _integrity_error = psycopg.errors.IntegrityError
    _lock_rows = " FOR UPDATE"

    def __init__(self, url: str, *, connect_timeout: float = 10.0) -> None:
        self.url = url
        self.connect_timeout = connect_timeout
        self.where = _redacted(url)
        self._lock = threading.RLock()
        self._listener: Listener | None = None
        self._publisher = Publisher(url, self.where, max(1, round(connect_timeout)))
        self._depth = 0
        self._conn = self._connect()
        try:
            with self._errors():
                self.applied_migrations: list[PostgresMigration] = migrate(self._fetch, self.atomic)
        except BaseException:
            self._conn.close()
            raise

    def _connect(self) -> psycopg.Connection[tuple[Any, ...]]:
        try:
            return psycopg.connect(
                self.url, autocommit=True, connect_timeout=max(1, round(self.connect_timeout))
            )
        except psycopg.Error as exc:
            raise StoreError(
                f"cannot connect to PostgreSQL ({self.where}): {scrubbed(exc, self.url)}"
            ) from exc

    def __repr__(self) -> str:
        return f"PostgresStore({self.where!r})"

    # --- transactions and statements --------------------------------------------------------

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """Hold the lock; reconnect a broken connection first; report failures as StoreError."""
        with self._lock:
            if self._conn.broken and self._conn.info.transaction_status.name == "UNKNOWN":
                self._conn = self._connect()
            try:
                yield
            except psycopg.Error as exc:
                raise StoreError(
                    f"PostgreSQL store ({self.where}): {scrubbed(exc, self.url)}"
                ) from exc

    @contextmanager
    def atomic(self) -> Iterator[None]:
        with self._errors():
            if self._depth:
                with self._conn.transaction():
                    yield
                return
            with self._outermost():
                yield

    @contextmanager
    def _held(self) -> Iterator[None]:
        """A transaction, or the one open, with no savepoint of its own: for a statement
        whose failure fails the caller's transaction anyway (nobody goes on after it). A
        savepoint costs two round trips (``SAVEPOINT``, ``RELEASE``) and a subtransaction, and
        a firing pass or a batch of run ends made six of them (``bench/README.md``)."""
        with self._errors():
            if self._depth:
                yield
                return
            with self._outermost():
                yield

    @contextmanager
    def _outermost(self) -> Iterator[None]:
        """A transaction whose outcome is known even when the connection breaks as it commits:
        its id is read first, and after such a break ``_committed`` asks the database (once it
        answers again) whether it committed. Without this, a firing pass cut off at its commit
        would leave runs recorded that nobody executes."""
        txid: int | None = None
        self._depth = 1
        try:
            with self._conn.transaction():
                txid = int(self._fetch("SELECT txid_current()")[0][0])
                yield
        except psycopg.OperationalError:
            if txid is None or not self._committed(txid):
                raise
        finally:
            self._depth = 0

    def _committed(self, txid: int) -> bool:
        """Whether transaction ``txid`` committed, asked on a new connection, trying for as
        long as ``connect_timeout``; False when the database cannot tell by then."""
        deadline = time.monotonic() + self.connect_timeout
        while True:
            try:
                self._conn = self._connect()
                status = self._fetch("SELECT txid_status(%s)", (txid,))[0][0]
                return bool(status == "committed")
            except (StoreError, psycopg.Error):
                if time.monotonic() >= deadline:
                    return False
                time.sleep(COMMIT_CHECK_RETRY)

    def close(self) -> None:
        if self._listener is not None:
            self._listener.close()
        self._publisher.close()
        with self._lock:
            self._conn.close()

    # --- changes to jobs, heard by every store object on the database ----------------------

    def listen_for_changes(self, listener: ChangeListener) -> Callable[[], None]:
        """``ChangeFeed``: LISTEN on a dedicated connection, in a thread (``postgres_listen``)."""
        with self._lock:
            if self._listener is None:
                self._listener = Listener(self.url, self.where)
            return self._listener.add(listener)

    # --- messages between servers (EventFeed) ------------------------------------------------

    payload_limit = PAYLOAD_LIMIT

    def publish_events(self, payloads: Sequence[str]) -> None:
        """``EventFeed``: NOTIFY on ``recall_events``, from a connection of its own."""
        self._publisher.publish(payloads)

    def listen_for_events(self, listener: EventListener) -> Callable[[], None]:
        """``EventFeed``: heard by the thread that listens for job changes."""
        with self._lock:
            if self._listener is None:
                self._listener = Listener(self.url, self.where)
            return self._listener.add_events(listener)

    def _announce(self, rows: Iterable[JobRow | JobStateRow]) -> None:
        """NOTIFY the earliest fire instant of active jobs among ``rows`` (sent at commit)."""
        instants = [
            row.next_fire_at
            for row in rows
            if row.next_fire_at is not None and row.status == "active"
        ]
        if instants:
            self._fetch(NOTIFY, (payload(min(instants)),))

    def _fetch(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        # Without parameters, a statement goes as a simple query (several may be sent at once).
        cursor = self._conn.execute(sql.encode(), params or None)
        return cursor.fetchall() if cursor.description is not None else []

    def _rows(self, sql: str, params: Params = ()) -> list[Any]:
        with self._errors():
            return self._fetch(sql, params)

    def _write(self, sql: str, params: Sequence[Any] = ()) -> int:
        with self._errors():
            return self._conn.execute(sql.encode(), params).rowcount

    def _write_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        batch = list(rows)
        if batch:
            with self._errors(), self._conn.cursor() as cursor:
                cursor.executemany(sql.encode(), batch)

    def _jobs(self, sql: str, params: Params = ()) -> list[Job]:
        return list(map(codec.job_from_row, map(JobRow._make, self._rows(sql, params))))

    def _runs(self, sql: str, params: Sequence[Any] = ()) -> list[Run]:
        return list(map(codec.run_from_row, map(RunRow._make, self._rows(sql, params))))

    def _existing_ids(self, table: str, ids: Iterable[str]) -> set[str]:
        found = self._rows(f"SELECT id FROM {table} WHERE id = ANY(%s)", (list(set(ids)),))
        return {ident for (ident,) in found}

    def _missing_one(self, table: str, ids: Sequence[str], what: str) -> NotFoundError:
        existing = self._existing_ids(table, ids)
        return NotFoundError(what, next(i for i in ids if i not in existing))

    # --- jobs ---------------------------------------------------------------------------

    def insert_jobs(self, jobs: Sequence[Job]) -> None:
        if not jobs:
            return
        rows = codec.job_rows(jobs)
        copy_sql = pgsql.SQL(f"COPY jobs ({columns(JobRow._fields)}) FROM STDIN")
        with self.atomic():
            try:
                with self.atomic(), self._conn.cursor() as cursor, cursor.copy(copy_sql) as copy:
                    for row in rows:
                        copy.write_row(row)
            except StoreError as exc:
                raise self._job_conflict(jobs, exc, inserting=True) from None
            self._announce(rows)

    def update_jobs(self, jobs: Sequence[Job]) -> None:
        if not jobs:
            return
        rows = codec.job_rows(jobs)
        with self.atomic():
            try:
                with self.atomic():
                    changed = self._write(_UPDATE_JOB, _columns_of(rows, len(JobRow._fields)))
                    if changed != len({job.id for job in jobs}):
                        raise self._missing_one("jobs", [job.id for job in jobs], "job")
            except StoreError as exc:
                raise self._job_conflict(jobs, exc, inserting=False) from None
            self._announce(rows)

    def get_job_states(self, job_ids: Sequence[str]) -> dict[str, JobState]:
        rows = self._rows(_SELECT_JOB_STATE, (list(set(job_ids)),))
        states = (_state_from_row(JobStateRow._make(values)) for values in rows)
        return {state.id: state for state in states}

    def settle_job_states(self, ends: Sequence[RunEnd], *, now: datetime) -> None:
        if not ends:
            return
        at = codec.encode_instant(now, "now")
        with self._held():
            self._conn.execute(_SETTLE_JOB_STATE.encode(), [at, *_settled(ends)])

    def update_job_states(self, states: Sequence[JobState]) -> None:
        if not states:
            return
        rows = [_state_row(state) for state in states]
        # One savepoint: it takes back the update both when it fails and when a job is missing.
        with self.atomic():
            try:
                params = _columns_of(rows, len(JobStateRow._fields))
                changed = self._write(_UPDATE_JOB_STATE, params)
            except StoreError as exc:
                if isinstance(exc.__cause__, psycopg.errors.IntegrityError):
                    raise ConflictError(
                        "a job state change would make a second pending recall in a session"
                    ) from None
                raise
            if changed != len({state.id for state in states}):
                raise self._missing_one("jobs", [state.id for state in states], "job")
            self._announce(rows)

    def get_job(self, job_id: str, *, owner: str | None) -> Job:
        return self._job_by_id(job_id, owner, "")

    def get_job_for_update(self, job_id: str, *, owner: str | None) -> Job:
        return self._job_by_id(job_id, owner, " FOR UPDATE")

    def _job_by_id(self, job_id: str, owner: str | None, lock: str) -> Job:
        sql, params = _scoped(f"{_JOB_SELECT} WHERE id = %s", [job_id], owner)
        jobs = self._jobs(sql + lock, params)
        if not jobs:
            raise NotFoundError("job", job_id)
        return jobs[0]

    def list_jobs(self, *, owner: str | None, where: JobFilter = _ANY_JOB) -> list[Job]:
        return self._jobs(*sql_builders.job_listing(POSTGRES, _JOB_SELECT, where, owner))

    def owned_jobs_for_update(self, owner: str, plugin_owner: str) -> list[Job]:
        # Row locks alone would not do: a job the other engine is about to insert has no row
        # yet to lock, and both would insert it (the owned-key index refuses the second).
        self._rows(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            # A plugin owner's name has no space (check_owner_name): the pair is unambiguous.
            (f"jupyter_recall owner {plugin_owner} {owner}",),
        )
        where = JobFilter(plugin_owner=plugin_owner)
        sql, params = sql_builders.job_listing(POSTGRES, _JOB_SELECT, where, owner)
        return self._jobs(sql + " FOR UPDATE", params)

    def count_jobs_by_status(
        self, *, owner: str | None, where: JobFilter = _ANY_JOB
    ) -> list[JobCount]:
        rows = self._rows(*sql_builders.job_counts(POSTGRES, where, owner))
        return [JobCount(JobStatus(status), int(n), int(running)) for status, n, running in rows]

    def delete_job(self, job_id: str, *, owner: str | None) -> None:
        sql, params = _scoped("DELETE FROM jobs WHERE id = %s", [job_id], owner)
        with self.atomic():
            if self._write(sql, params) == 0:
                raise NotFoundError("job", job_id)

    def due_jobs(self, now: datetime, *, limit: int, owner: str | None = None) -> list[Job]:
        params = {"now": codec.encode_instant(now, "now"), "owner": owner, "limit": limit}
        return self._jobs(_DUE_JOBS, params)

    def next_fire_at(
        self, *, after: datetime | None = None, owner: str | None = None
    ) -> datetime | None:
        bound = LONG_AGO if after is None else codec.encode_instant(after, "after")
        rows = self._rows(_NEXT_FIRE_AT, {"after": bound, "owner": owner})
        return codec.decode_instant(rows[0][0]) if rows else None

    def count_jobs(self, *, owner: str | None) -> int:
        sql, params = _scoped("SELECT count(*) FROM jobs WHERE TRUE", [], owner)
        return int(self._rows(sql, params)[0][0])

    # --- runs ---------------------------------------------------------------------------

    def insert_runs(self, runs: Sequence[Run]) -> list[Run]:
        if not runs:
            return []
        rows = [codec.run_row(run) for run in runs]
        # The savepoint around the insert alone: its conflicts are named after it failed.
        with self._held():
            try:
                with self.atomic():
                    self._check_run_batch(runs)
                    found = self._rows(_INSERT_RUNS, _columns_of(rows, len(RunRow._fields)))
            except StoreError as exc:
                raise self._run_conflict(runs, exc) from None
        inserted = {ident for (ident,) in found}
        return [run for run in runs if run.id in inserted]

    def _check_run_batch(self, runs: Sequence[Run]) -> None:
        twice = [ident for ident, count in Counter(run.id for run in runs).items() if count > 1]
        if twice:
            raise ConflictError(f"run id {twice[0]!r} appears twice in one batch")

    def delete_runs(self, run_ids: Sequence[str]) -> None:
        with self.atomic():
            self._write("DELETE FROM runs WHERE id = ANY(%s)", (list(run_ids),))

    def update_runs(self, runs: Sequence[Run]) -> None:
        if not runs:
            return
        rows = [codec.run_row(run) for run in runs]
        with self.atomic():
            changed = self._write(_UPDATE_RUN, _columns_of(rows, len(RunRow._fields)))
            if changed != len({run.id for run in runs}):
                raise self._missing_one("runs", [run.id for run in runs], "run")

    def update_run_states(self, runs: Sequence[Run]) -> None:
        if not runs:
            return
        rows = [codec.run_state_row(run) for run in runs]
        # No savepoint: inside a transaction, a batch with a missing run is left applied to the
        # others, and its one caller that goes on (``firing._update_existing_runs``) writes
        # them again one by one, the same values.
        with self._held():
            changed = self._write(_UPDATE_RUN_STATE, _columns_of(rows, len(RunStateRow._fields)))
            if changed != len({run.id for run in runs}):
                raise self._missing_one("runs", [run.id for run in runs], "run")

    def append_output(self, run_id: str, text: str, *, limit: int) -> None:
        if not text:
            return
        with self.atomic():
            rows = self._rows(
                "SELECT output, output_dropped FROM runs WHERE id = %s FOR UPDATE", (run_id,)
            )
            if not rows:
                raise NotFoundError("run", run_id)
            stored, dropped = rows[0]
            output, dropped = bounded_output(stored, dropped, text, limit)
            self._write(
                "UPDATE runs SET output = %s, output_dropped = %s WHERE id = %s",
                (output, dropped, run_id),
            )

    def get_run(self, run_id: str, *, owner: str | None) -> Run:
        sql, params = _scoped(f"{_RUN_SELECT} WHERE id = %s", [run_id], owner)
        runs = self._runs(sql, params)
        if not runs:
            raise NotFoundError("run", run_id)
        return runs[0]

    def list_runs(self, *, owner: str | None, where: RunFilter = _ANY_RUN) -> list[Run]:
        return self._runs(*sql_builders.run_listing(POSTGRES, _RUN_SELECT, where, owner))

    def running_runs(self, *, job_id: str | None = None) -> list[Run]:
        sql = f"{_RUN_SELECT} WHERE status = 'running'"
        params: list[Any] = []
        if job_id is not None:
            sql += " AND job_id = %s"
            params.append(job_id)
        return self._runs(sql, params)

    # --- engine leases ------------------------------------------------------------------

    def renew_lease(self, engine_id: str, *, now: datetime, until: datetime) -> None:
        with self.atomic():
            self._write(_RENEW_LEASE, _lease_row(engine_id, now, until))

    def claim_lease(
        self,
        engine_id: str,
        *,
        now: datetime,
        until: datetime,
        ending_by: datetime | None = None,
    ) -> bool:
        # Of two claims at once, the second waits for the first's row and then sees its
        # ``until`` (READ COMMITTED re-reads a conflicting row for ON CONFLICT DO UPDATE).
        row = _lease_row(engine_id, now, until)
        ending = codec.encode_instant(now if ending_by is None else ending_by, "ending_by")
        with self.atomic():
            return self._write(_CLAIM_LEASE, (*row, ending)) == 1

    def release_lease(self, engine_id: str) -> None:
        with self.atomic():
            self._write("DELETE FROM leases WHERE engine_id = %s", (engine_id,))

    def lease_until(self, engine_id: str) -> datetime | None:
        rows = self._rows("SELECT until FROM leases WHERE engine_id = %s", (engine_id,))
        return codec.decode_instant(rows[0][0]) if rows else None

    def interrupt_orphaned_runs(self, *, now: datetime, engine_id: str) -> list[Run]:
        stamp = codec.encode_instant(now, "now")
        with self.atomic():
            orphans: list[Run] = []
            for *values, until in self._rows(_RUNNING_WITH_LEASES):
                row = RunRow._make(values)
                reason = _orphan_reason(row.engine_id, until, stamp, engine_id)
                if reason is not None:
                    run = codec.run_from_row(row)
                    orphans.append(
                        run.evolve(status=RunStatus.INTERRUPTED, finished_at=now, error=reason)
                    )
            self._write_many(
                "UPDATE runs SET status = 'interrupted', finished_at = %s, error = %s "
                "WHERE id = %s",
                [(stamp, run.error, run.id) for run in orphans],
            )
        return orphans


def _settled(ends: Sequence[RunEnd]) -> list[list[Any]]:
    """The ends of a batch folded to one row per job, as applying them one by one would leave
    it: the last end's status and error, the failures summed, and the status decided by the
    first end that left no other run in flight (a status once ended is kept)."""
    folded: dict[str, list[Any]] = {}
    for end in ends:
        ending = end.others_in_flight == 0
        row = folded.get(end.job_id)
        if row is None:
            folded[end.job_id] = [
                end.job_id,
                end.status._value_,
                end.error,
                int(end.failed),
                ending,
                end.recurring_end._value_,
                end.one_shot_end._value_,
            ]
            continue
        row[1], row[2], row[3] = end.status._value_, end.error, row[3] + int(end.failed)
        if ending and not row[4]:
            row[4:7] = [True, end.recurring_end._value_, end.one_shot_end._value_]
    return _columns_of(list(folded.values()), 7)


def _scoped(sql: str, params: list[Any], owner: str | None) -> tuple[str, list[Any]]:
    return sql_builders.scoped(POSTGRES, sql, params, owner)
