"""The embedded store: one SQLite file through sqlite-utils.

The connection runs in WAL mode with ``synchronous=NORMAL`` (a commit does not wait for fsync;
a power loss may drop the last transactions, never corrupt the file) and a busy timeout, so
several store objects or processes can share one file. The engine calls the store from worker
threads: one connection per store object, opened with ``check_same_thread=False``, and an
``RLock`` held for every read and for a whole ``atomic()`` block.

Every write goes through ``atomic()``: ``BEGIN IMMEDIATE`` takes the write lock up front (so two
writers never deadlock upgrading a read lock), a nested block is a SAVEPOINT, and each write
method runs in its own nested block so a refused batch leaves nothing behind.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from functools import lru_cache
from itertools import compress, islice, repeat
from operator import is_not, itemgetter
from types import TracebackType
from typing import Any, TypeVar

import sqlite_utils

from jupyter_recall.core.errors import ConflictError, NotFoundError, StoreBusy, StoreError
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
from jupyter_recall.store.dependency_tables import DependencyTables
from jupyter_recall.store.lifecycle_tables import RetentionTables
from jupyter_recall.store.migrations import Migration, migrate
from jupyter_recall.store.owner_tables import DisabledOwnerTables
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
from jupyter_recall.store.sql_builders import LONG_AGO, SQLITE, BatchConflicts
from jupyter_recall.store.sqlite_checkpoint import BACKSTOP_PAGES, Checkpointer
from jupyter_recall.store.sqlite_watchers import SQLiteWatcherTables

T = TypeVar("T")

# SQLite's default limit of bound parameters was 999 before 3.32; stay below it.
_IN_CHUNK = 900

_JOB_SELECT = f"SELECT {columns(JobRow._fields)} FROM jobs"
_RUN_SELECT = f"SELECT {columns(RunRow._fields)} FROM runs"


def _update_by_id(table: str, fields: Sequence[str], changed: Sequence[str]) -> str:
    """An UPDATE of the ``changed`` columns of one row, whose parameters are a whole row of
    ``fields`` (numbered parameters: the columns left out are bound but unused)."""
    number = {name: index for index, name in enumerate(fields, start=1)}
    assignments = ", ".join(f"{name} = ?{number[name]}" for name in changed)
    return f"UPDATE {table} SET {assignments} WHERE id = ?{number['id']}"


# Identity columns are fixed at insert: an update never moves a job to another owner, and
# leaving them out of SET spares SQLite the upkeep of the indexes that only they feed.
_JOB_FIXED = frozenset({"id", "owner", "kind", "created_at"})
_UPDATE_JOB = _update_by_id(
    "jobs", JobRow._fields, [name for name in JobRow._fields if name not in _JOB_FIXED]
)
_RUN_OCCURRENCE_TAKEN = "ON CONFLICT (job_id, scheduled_for, attempt) DO NOTHING"
# Output belongs to append_output: the engine's copy of a run does not hold what was streamed.
_RUN_FIXED = frozenset({"id", "output", "output_dropped"})
_UPDATE_RUN = _update_by_id(
    "runs", RunRow._fields, [name for name in RunRow._fields if name not in _RUN_FIXED]
)

# Literal 'active' (not a bound parameter): SQLite only uses the partial index jobs_due when
# the query's WHERE visibly implies the index's WHERE.
_DUE_JOBS = (
    f"{_JOB_SELECT} WHERE status = 'active' AND next_fire_at <= ? ORDER BY next_fire_at, id LIMIT ?"
)
# The engine's hot path writes only what changes: an UPDATE that names a column maintains every
# index on it, even when the value is the same, so full-row updates cost several times more.
_DUE_JOBS_OF_OWNER = (
    f"{_JOB_SELECT} WHERE status = 'active' AND next_fire_at <= ? AND owner = ? "
    "ORDER BY next_fire_at, id LIMIT ?"
)
_UPDATE_JOB_STATE = _update_by_id("jobs", JobStateRow._fields, STATE_FIELDS)
# The end of a run, applied in SQL so that the job need not be read first (see RunEnd).
_SETTLE_JOB_STATE = (
    "UPDATE jobs SET last_status = ?1, last_error = ?2, updated_at = ?3, "
    "failure_count = failure_count + ?4, "
    "status = CASE WHEN status IN ('active', 'paused') AND next_occurrence IS NULL AND ?5 = 0 "
    "AND schedule_kind <> 'after' "
    "THEN CASE WHEN schedule_kind IN ('interval', 'cron') THEN ?6 ELSE ?7 END "
    "ELSE status END "
    "WHERE id = ?8"
)
_SELECT_JOB_STATE = f"SELECT {columns(JobStateRow._fields)} FROM jobs"
_UPDATE_RUN_STATE = _update_by_id("runs", RunStateRow._fields, RunStateRow._fields[1:])
_NEXT_FIRE_AT = (
    "SELECT next_fire_at FROM jobs WHERE status = 'active' AND next_fire_at > ? "
    "ORDER BY next_fire_at LIMIT 1"
)
_NEXT_FIRE_AT_OF_OWNER = (
    "SELECT next_fire_at FROM jobs WHERE status = 'active' AND next_fire_at > ? AND owner = ? "
    "ORDER BY next_fire_at LIMIT 1"
)
_RENEW_LEASE = (
    f"INSERT INTO leases ({columns(LeaseRow._fields)}) VALUES (?, ?, ?) "
    "ON CONFLICT (engine_id) DO UPDATE SET until = excluded.until"
)
_CLAIM_LEASE = (
    f"INSERT INTO leases ({columns(LeaseRow._fields)}) VALUES (?, ?, ?) "
    "ON CONFLICT (engine_id) DO UPDATE SET acquired_at = excluded.acquired_at, "
    "until = excluded.until WHERE leases.until <= ?"
)
"""A lease taken only if absent or ending by an instant: one row changed when it was."""
_RUNNING_WITH_LEASES = (
    f"SELECT {columns(RunRow._fields, prefix='runs.')}, leases.until "
    "FROM runs LEFT JOIN leases ON leases.engine_id = runs.engine_id "
    "WHERE runs.status = 'running'"
)
_ANY_JOB = JobFilter()
_ANY_RUN = RunFilter()


def truncation_marker(dropped: int) -> str:
    return f"\n[... output truncated: {dropped} characters dropped]"


# Room kept for the marker whatever count it will show, so the head never moves once cut.
_MARKER_ROOM = len(truncation_marker(10**15))


def bounded_output(stored: str, dropped: int, text: str, limit: int) -> tuple[str, int]:
    """Append ``text`` to a stored output of which ``dropped`` characters were already cut.

    Returns the new stored text and count of cut characters. Once over ``limit``, the stored
    text is a fixed head and a marker with the count; it never exceeds ``limit`` unless the
    limit is shorter than the marker itself.
    """
    if dropped:
        head = stored[: len(stored) - len(truncation_marker(dropped))]
        dropped += len(text)
        return head + truncation_marker(dropped), dropped
    total = len(stored) + len(text)
    if total <= limit:
        return stored + text, 0
    keep = max(0, limit - _MARKER_ROOM)
    head = stored[:keep] if len(stored) >= keep else stored + text[: keep - len(stored)]
    return head + truncation_marker(total - keep), total - keep


def _insert_statement(
    table: str, fields: tuple[str, ...], rows: Sequence[tuple[Any, ...]], tail: str = ""
) -> tuple[str, Iterable[tuple[Any, ...]]]:
    """The INSERT of a batch of rows (their first column never NULL), with NULL written in the
    statement for the columns that are None in every row (a new job has seven, a new run
    three): the sqlite3 module binds None only after looking for an adapter, which costs about
    1 µs, more than the rest of the parameter.

    The shorter rows are made one at a time as they are bound: made all at once, they would
    cost more in garbage collection than making them.
    """
    if len(rows) == 1:  # one REST creation: the columns kept read off the row at once
        row = rows[0]
        kept = (0, *compress(range(1, len(row)), map(is_not, islice(row, 1, None), repeat(None))))
    else:
        kept = (  # the id is never NULL, which keeps a parameter in each row
            0,
            *(
                index
                for index in range(1, len(fields))
                if any(map(is_not, map(itemgetter(index), rows), repeat(None)))
            ),
        )
    sql, pick = _insert_sql(table, fields, kept, tail)
    return sql, rows if pick is None else map(pick, rows)


@lru_cache(maxsize=256)
def _insert_sql(
    table: str, fields: tuple[str, ...], kept: tuple[int, ...], tail: str
) -> tuple[str, Callable[[tuple[Any, ...]], Any] | None]:
    """The statement for rows whose columns ``kept`` hold values (the others NULL), and what
    picks those values from a row (None: all of them); made once for each set of columns, as a
    few sets cover the rows of a store."""
    values = ", ".join("?" if index in kept else "NULL" for index in range(len(fields)))
    sql = f"INSERT INTO {table} ({columns(fields)}) VALUES ({values})"
    sql += f" {tail}" if tail else ""
    if len(kept) == len(fields):
        return sql, None
    # itemgetter of one index gives the item itself; of a slice, a tuple.
    return sql, itemgetter(*kept) if len(kept) > 1 else itemgetter(slice(0, 1))


WAL_SWITCH_RETRY = 0.005
"""Seconds between two tries of switching a new file to WAL (``SQLiteStore._enable_wal``)."""


class _Held:
    """``SQLiteStore._errors()``: the store's lock held, with the busy timeout back unless a
    ``run_now`` call runs; an ``sqlite3.Error`` leaving it becomes a ``StoreError``."""

    __slots__ = ("_store",)

    def __init__(self, store: SQLiteStore) -> None:
        self._store = store

    def __enter__(self) -> None:
        store = self._store
        store._lock.acquire()
        if store._waits or store._now:
            return
        try:
            store._wait_for_locks(True)
        except BaseException as exc:
            # _Held's own exit, not an _Atomic's: no transaction was begun to end.
            _Held.__exit__(self, type(exc), exc, exc.__traceback__)
            raise

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            if isinstance(exc, sqlite3.Error):
                raise self._store._failure(exc) from exc
        finally:
            self._store._lock.release()


class _Atomic(_Held):
    """``SQLiteStore.atomic()``: the lock held (``_Held``) and a transaction, BEGIN IMMEDIATE
    ... COMMIT (ROLLBACK when the block fails), or inside one a savepoint; ``held``: inside a
    transaction, none of its own (``_transaction_held``)."""

    __slots__ = ("_held", "_savepoint")

    def __init__(self, store: SQLiteStore, *, held: bool) -> None:
        self._store = store
        self._held = held
        self._savepoint: str | None = None

    def __enter__(self) -> None:
        _Held.__enter__(self)
        try:
            self._begin()
        except BaseException as exc:
            _Held.__exit__(self, type(exc), exc, exc.__traceback__)
            raise

    def _begin(self) -> None:
        store = self._store
        if store._depth == 0:
            store._conn.execute("BEGIN IMMEDIATE")
            store._depth = 1
        elif not self._held:
            self._savepoint = f"sp{store._depth}"
            store._conn.execute(f"SAVEPOINT {self._savepoint}")
            store._depth += 1
        else:
            self._savepoint = ""  # the transaction open is the caller's: nothing to end

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            self._end(exc)
        except BaseException as error:
            _Held.__exit__(self, type(error), error, error.__traceback__)
            raise
        _Held.__exit__(self, kind, exc, tb)

    def _end(self, exc: BaseException | None) -> None:
        store, name = self._store, self._savepoint
        if name == "":
            return
        conn = store._conn
        if name is None:
            store._depth = 0
            if exc is not None:
                if conn.in_transaction:  # an error may have ended it already
                    conn.execute("ROLLBACK")
                return
            try:
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            return
        store._depth -= 1
        if exc is None:
            conn.execute(f"RELEASE {name}")
        elif conn.in_transaction:
            # An error that already ended the whole transaction took the savepoint with it.
            conn.execute(f"ROLLBACK TO {name}")
            conn.execute(f"RELEASE {name}")


class SQLiteStore(
    SQLiteWatcherTables,
    ApprovalTables,
    DependencyTables,
    RetentionTables,
    RetryTables,
    RowTables,
    BatchConflicts,
    DisabledOwnerTables,
):
    """The Store protocol on one SQLite file. ``path`` may be ``":memory:"`` for tests.

    Watchers and the notification buffer are in ``SQLiteWatcherTables``."""

    _dialect = SQLITE
    _integrity_error = sqlite3.IntegrityError

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout: float = 10.0,
        background_checkpoints: bool = False,
    ) -> None:
        """``background_checkpoints``: the log is checkpointed by a ``Checkpointer`` thread,
        not by the commits (a server's store: writes wait on no disk sync)."""
        self.path = os.fspath(path)
        self.busy_timeout = busy_timeout
        self._checkpointer: Checkpointer | None = None
        self._lock = threading.RLock()
        self._depth = 0
        self._waits = True
        """The connection waits out other connections' locks (its busy timeout). ``run_now``
        makes it not wait, and leaves it so for the next such call (two PRAGMAs cost an inline
        creation about 10 µs); any other call sets the timeout back first (``_errors``)."""
        self._now = False
        """A ``run_now`` call is running (its calls must not wait)."""
        try:
            # isolation_level=None: the module never opens transactions behind our back;
            # atomic() issues BEGIN IMMEDIATE / SAVEPOINT itself.
            self._conn = sqlite3.connect(
                self.path, timeout=busy_timeout, check_same_thread=False, isolation_level=None
            )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the SQLite database {self.path!r}: {exc}") from exc
        self.db = sqlite_utils.Database(self._conn, execute_plugins=False)
        try:
            with self._errors():
                self._configure()
                self.applied_migrations: list[Migration] = migrate(self.db, self.atomic)
                if background_checkpoints and self.path != ":memory:":
                    self._conn.execute(f"PRAGMA wal_autocheckpoint = {BACKSTOP_PAGES}")
                    self._checkpointer = Checkpointer(self.path, busy_timeout=busy_timeout)
        except BaseException:
            self._conn.close()
            raise

    def _configure(self) -> None:
        self._conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
        if self.path != ":memory:":
            self._enable_wal()
        self._conn.execute("PRAGMA synchronous = NORMAL")
        self._conn.execute("PRAGMA foreign_keys = ON")

    def _enable_wal(self) -> None:
        """Switch the file to WAL. Two connections switching a new file at once: SQLite answers
        one of them "database is locked" at once, without its busy timeout (the switch needs an
        exclusive lock, and waiting could deadlock), so that one tries again, for at most as
        long as the busy timeout."""
        deadline = time.monotonic() + self.busy_timeout
        while True:
            try:
                self.db.enable_wal()
                return
            except sqlite3.OperationalError as exc:
                if "database is locked" not in str(exc) or time.monotonic() >= deadline:
                    raise
            time.sleep(WAL_SWITCH_RETRY)

    def __repr__(self) -> str:
        return f"SQLiteStore({self.path!r})"

    def run_now(self, func: Callable[[], T]) -> T:
        """``RunsNow``: ``func()`` on this thread if the store's lock is free, with no busy
        timeout: where a statement would wait for another connection's write, SQLite fails it
        at once, the transaction is rolled back and ``StoreBusy`` says so."""
        if not self._lock.acquire(blocking=False):
            raise StoreBusy(f"SQLite store {self.path!r}: a call of another thread is running")
        try:
            if self._waits:
                with self._errors():
                    self._wait_for_locks(False)
            self._now = True
            try:
                return func()
            except (StoreError, sqlite3.OperationalError) as exc:
                if _busy(exc):
                    raise StoreBusy(f"SQLite store {self.path!r}: {exc}") from exc
                raise
            finally:
                self._now = False
        finally:
            self._lock.release()

    def _wait_for_locks(self, waits: bool) -> None:
        timeout = int(self.busy_timeout * 1000) if waits else 0
        self._conn.execute(f"PRAGMA busy_timeout = {timeout}")
        self._waits = waits

    # --- transactions -------------------------------------------------------------------
    # Context manager classes rather than @contextmanager generators: an inline REST
    # creation enters four of them, and generators cost as much again as the BEGIN and
    # COMMIT they wrap (11 µs against 5.5, hot).

    def _errors(self) -> _Held:
        """Hold the lock; report SQLite failures as StoreError."""
        return _Held(self)

    def _failure(self, exc: sqlite3.Error) -> StoreError:
        return StoreError(f"SQLite store {self.path!r}: {exc}")

    def atomic(self) -> _Atomic:
        return _Atomic(self, held=False)

    def _transaction_held(self) -> _Atomic:
        """A transaction, or the one open: an insert's conflicts are looked up in the
        transaction of the insert that failed, which a savepoint of its own would not change
        (the insert's own savepoint has taken back its rows)."""
        return _Atomic(self, held=True)

    def close(self) -> None:
        if self._checkpointer is not None:
            self._checkpointer.close()
        with self._lock:
            self._conn.close()

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._errors():
            return self._conn.execute(sql, params).fetchall()

    def _jobs(self, sql: str, params: Sequence[Any] = ()) -> list[Job]:
        """The jobs a SELECT of ``JobRow``'s columns finds."""
        return list(map(codec.job_from_row, map(JobRow._make, self._rows(sql, params))))

    def _runs(self, sql: str, params: Sequence[Any] = ()) -> list[Run]:
        """The runs a SELECT of ``RunRow``'s columns finds."""
        return list(map(codec.run_from_row, map(RunRow._make, self._rows(sql, params))))

    def _existing_ids(self, table: str, ids: Iterable[str]) -> set[str]:
        found: set[str] = set()
        unique = list(dict.fromkeys(ids))
        for start in range(0, len(unique), _IN_CHUNK):
            chunk = unique[start : start + _IN_CHUNK]
            marks = ", ".join("?" * len(chunk))
            sql = f"SELECT id FROM {table} WHERE id IN ({marks})"
            found.update(ident for (ident,) in self._conn.execute(sql, chunk))
        return found

    # --- jobs ---------------------------------------------------------------------------

    def insert_jobs(self, jobs: Sequence[Job]) -> None:
        if not jobs:
            return
        sql, rows = _insert_statement("jobs", JobRow._fields, codec.job_rows(jobs))
        with self._transaction_held():
            try:
                if len(jobs) > 1:
                    with self.atomic():
                        self._conn.executemany(sql, rows)
                else:
                    # SQLite takes back the one statement that fails: one row needs no savepoint
                    # (its failure still becomes a StoreError here, to be named as a conflict).
                    with self._errors():
                        self._conn.execute(sql, next(iter(rows)))
            except StoreError as exc:
                raise self._job_conflict(jobs, exc, inserting=True) from None

    def update_jobs(self, jobs: Sequence[Job]) -> None:
        if not jobs:
            return
        rows = codec.job_rows(jobs)
        with self.atomic():
            try:
                with self.atomic():
                    changed = self._conn.executemany(_UPDATE_JOB, rows).rowcount
                    if changed != len(rows):
                        ids = [job.id for job in jobs]
                        existing = self._existing_ids("jobs", ids)
                        raise NotFoundError("job", next(i for i in ids if i not in existing))
            except StoreError as exc:
                raise self._job_conflict(jobs, exc, inserting=False) from None

    def get_job_states(self, job_ids: Sequence[str]) -> dict[str, JobState]:
        states: dict[str, JobState] = {}
        unique = list(dict.fromkeys(job_ids))
        with self._errors():
            for start in range(0, len(unique), _IN_CHUNK):
                chunk = unique[start : start + _IN_CHUNK]
                sql = f"{_SELECT_JOB_STATE} WHERE id IN ({', '.join('?' * len(chunk))})"
                for values in self._conn.execute(sql, chunk):
                    state = _state_from_row(JobStateRow._make(values))
                    states[state.id] = state
        return states

    def settle_job_states(self, ends: Sequence[RunEnd], *, now: datetime) -> None:
        if not ends:
            return
        at = codec.encode_instant(now, "now")
        rows = [
            (
                end.status._value_,
                end.error,
                at,
                int(end.failed),
                end.others_in_flight,
                end.recurring_end._value_,
                end.one_shot_end._value_,
                end.job_id,
            )
            for end in ends
        ]
        with self.atomic():
            self._conn.executemany(_SETTLE_JOB_STATE, rows)

    def update_job_states(self, states: Sequence[JobState]) -> None:
        if not states:
            return
        rows = [_state_row(state) for state in states]
        with self.atomic():
            try:
                with self.atomic():
                    changed = self._conn.executemany(_UPDATE_JOB_STATE, rows).rowcount
            except StoreError as exc:
                if isinstance(exc.__cause__, sqlite3.IntegrityError):
                    raise ConflictError(
                        "a job state change would make a second pending recall in a session"
                    ) from None
                raise
            if changed != len(rows):
                ids = [state.id for state in states]
                existing = self._existing_ids("jobs", ids)
                raise NotFoundError("job", next(i for i in ids if i not in existing))

    def get_job(self, job_id: str, *, owner: str | None) -> Job:
        sql, params = _scoped(f"{_JOB_SELECT} WHERE id = ?", [job_id], owner)
        jobs = self._jobs(sql, params)
        if not jobs:
            raise NotFoundError("job", job_id)
        return jobs[0]

    def get_job_for_update(self, job_id: str, *, owner: str | None) -> Job:
        # The transaction's BEGIN IMMEDIATE holds the database's write lock already.
        return self.get_job(job_id, owner=owner)

    def list_jobs(self, *, owner: str | None, where: JobFilter = _ANY_JOB) -> list[Job]:
        return self._jobs(*sql_builders.job_listing(SQLITE, _JOB_SELECT, where, owner))

    def owned_jobs_for_update(self, owner: str, plugin_owner: str) -> list[Job]:
        # The transaction's BEGIN IMMEDIATE holds the database's write lock already.
        return self.list_jobs(owner=owner, where=JobFilter(plugin_owner=plugin_owner))

    def count_jobs_by_status(
        self, *, owner: str | None, where: JobFilter = _ANY_JOB
    ) -> list[JobCount]:
        rows = self._rows(*sql_builders.job_counts(SQLITE, where, owner))
        return [JobCount(JobStatus(status), int(n), int(running)) for status, n, running in rows]

    def delete_job(self, job_id: str, *, owner: str | None) -> None:
        sql, params = _scoped("DELETE FROM jobs WHERE id = ?", [job_id], owner)
        with self.atomic():
            if self._conn.execute(sql, params).rowcount == 0:
                raise NotFoundError("job", job_id)
            # Explicit rather than left to ON DELETE CASCADE, which a connection with
            # foreign keys switched off would not apply.
            self._conn.execute("DELETE FROM runs WHERE job_id = ?", (job_id,))

    def due_jobs(self, now: datetime, *, limit: int, owner: str | None = None) -> list[Job]:
        at = codec.encode_instant(now, "now")
        if owner is None:
            return self._jobs(_DUE_JOBS, (at, limit))
        return self._jobs(_DUE_JOBS_OF_OWNER, (at, owner, limit))

    def next_fire_at(
        self, *, after: datetime | None = None, owner: str | None = None
    ) -> datetime | None:
        bound = LONG_AGO if after is None else codec.encode_instant(after, "after")
        if owner is None:
            rows = self._rows(_NEXT_FIRE_AT, (bound,))
        else:
            rows = self._rows(_NEXT_FIRE_AT_OF_OWNER, (bound, owner))
        return codec.decode_instant(rows[0][0]) if rows else None

    def count_jobs(self, *, owner: str | None) -> int:
        sql, params = _scoped("SELECT count(*) FROM jobs WHERE 1", [], owner)
        return int(self._rows(sql, params)[0][0])

    # --- runs ---------------------------------------------------------------------------

    def insert_runs(self, runs: Sequence[Run]) -> list[Run]:
        if not runs:
            return []
        sql, rows = _insert_statement(
            "runs", RunRow._fields, [codec.run_row(r) for r in runs], _RUN_OCCURRENCE_TAKEN
        )
        with self._transaction_held():
            try:
                with self.atomic():
                    inserted = self._conn.executemany(sql, rows).rowcount
            except StoreError as exc:
                raise self._run_conflict(runs, exc) from None
            if inserted == len(runs):
                return list(runs)
            # Some occurrences existed already: the runs stored under our ids are ours.
            kept = self._existing_ids("runs", [run.id for run in runs])
            mine: set[str] = set()
            result: list[Run] = []
            for run in runs:
                if run.id in kept and run.id not in mine:
                    mine.add(run.id)
                    result.append(run)
            return result

    def delete_runs(self, run_ids: Sequence[str]) -> None:
        with self.atomic():
            self._conn.executemany("DELETE FROM runs WHERE id = ?", [(i,) for i in run_ids])

    def update_runs(self, runs: Sequence[Run]) -> None:
        if not runs:
            return
        rows = [codec.run_row(run) for run in runs]
        with self.atomic():
            changed = self._conn.executemany(_UPDATE_RUN, rows).rowcount
            if changed != len(rows):
                ids = [run.id for run in runs]
                existing = self._existing_ids("runs", ids)
                raise NotFoundError("run", next(i for i in ids if i not in existing))

    def update_run_states(self, runs: Sequence[Run]) -> None:
        if not runs:
            return
        rows = [codec.run_state_row(run) for run in runs]
        with self.atomic():
            changed = self._conn.executemany(_UPDATE_RUN_STATE, rows).rowcount
            if changed != len(rows):
                ids = [run.id for run in runs]
                existing = self._existing_ids("runs", ids)
                raise NotFoundError("run", next(i for i in ids if i not in existing))

    def append_output(self, run_id: str, text: str, *, limit: int) -> None:
        if not text:
            return
        with self.atomic():
            row = self._conn.execute(
                "SELECT output, output_dropped FROM runs WHERE id = ?", (run_id,)
            ).fetchone()
            if row is None:
                raise NotFoundError("run", run_id)
            stored, dropped = row
            output, dropped = bounded_output(stored, dropped, text, limit)
            self._conn.execute(
                "UPDATE runs SET output = ?, output_dropped = ? WHERE id = ?",
                (output, dropped, run_id),
            )

    def get_run(self, run_id: str, *, owner: str | None) -> Run:
        sql, params = _scoped(f"{_RUN_SELECT} WHERE id = ?", [run_id], owner)
        runs = self._runs(sql, params)
        if not runs:
            raise NotFoundError("run", run_id)
        return runs[0]

    def list_runs(self, *, owner: str | None, where: RunFilter = _ANY_RUN) -> list[Run]:
        return self._runs(*sql_builders.run_listing(SQLITE, _RUN_SELECT, where, owner))

    def running_runs(self, *, job_id: str | None = None) -> list[Run]:
        sql = f"{_RUN_SELECT} WHERE status = 'running'"
        params: list[Any] = []
        if job_id is not None:
            sql += " AND job_id = ?"
            params.append(job_id)
        return self._runs(sql, params)

    # --- engine leases ------------------------------------------------------------------

    def renew_lease(self, engine_id: str, *, now: datetime, until: datetime) -> None:
        with self.atomic():
            self._conn.execute(_RENEW_LEASE, _lease_row(engine_id, now, until))

    def claim_lease(
        self,
        engine_id: str,
        *,
        now: datetime,
        until: datetime,
        ending_by: datetime | None = None,
    ) -> bool:
        row = _lease_row(engine_id, now, until)
        ending = codec.encode_instant(now if ending_by is None else ending_by, "ending_by")
        with self.atomic():
            return self._conn.execute(_CLAIM_LEASE, (*row, ending)).rowcount == 1

    def release_lease(self, engine_id: str) -> None:
        with self.atomic():
            self._conn.execute("DELETE FROM leases WHERE engine_id = ?", (engine_id,))

    def lease_until(self, engine_id: str) -> datetime | None:
        with self._errors():
            row = self._conn.execute(
                "SELECT until FROM leases WHERE engine_id = ?", (engine_id,)
            ).fetchone()
        return None if row is None else codec.decode_instant(row[0])

    def interrupt_orphaned_runs(self, *, now: datetime, engine_id: str) -> list[Run]:
        stamp = codec.encode_instant(now, "now")
        with self.atomic():
            orphans: list[Run] = []
            for *values, until in self._conn.execute(_RUNNING_WITH_LEASES).fetchall():
                row = RunRow._make(values)
                reason = _orphan_reason(row.engine_id, until, stamp, engine_id)
                if reason is not None:
                    run = codec.run_from_row(row)
                    orphans.append(
                        run.evolve(status=RunStatus.INTERRUPTED, finished_at=now, error=reason)
                    )
            self._conn.executemany(
                "UPDATE runs SET status = 'interrupted', finished_at = ?, error = ? WHERE id = ?",
                [(stamp, run.error, run.id) for run in orphans],
            )
        return orphans


def _lease_row(engine_id: str, now: datetime, until: datetime) -> LeaseRow:
    return LeaseRow(
        engine_id=engine_id,
        acquired_at=codec.encode_instant(now, "now"),
        until=codec.encode_instant(until, "until"),
    )


def _busy(exc: BaseException) -> bool:
    """Whether SQLite refused for a lock held elsewhere (SQLITE_BUSY and its extended codes)."""
    cause = exc if isinstance(exc, sqlite3.Error) else exc.__cause__
    code = getattr(cause, "sqlite_errorcode", None)
    return isinstance(cause, sqlite3.OperationalError) and (code or 0) & 0xFF == sqlite3.SQLITE_BUSY


def _orphan_reason(
    run_engine: str | None, until: int | None, now: int, engine_id: str
) -> str | None:
    """Why a ``running`` run has nobody left to finish it, or None when its engine is alive."""
    if run_engine is None:
        return "interrupted: no engine was recorded as running it"
    if run_engine == engine_id:
        return f"interrupted: engine {run_engine} restarted before the run finished"
    if until is None:
        return f"interrupted: engine {run_engine} stopped (it holds no lease)"
    if until <= now:
        expired = codec.decode_instant(until).isoformat()
        return f"interrupted: engine {run_engine} stopped renewing its lease (expired {expired})"
    return None


def _state_row(state: JobState) -> JobStateRow:
    encode = codec.encode_optional_instant
    last_status = state.last_status
    return JobStateRow(  # enums by their ``_value_``: see codec's note on binding enums
        id=state.id,
        schedule_kind=state.schedule_kind,
        status=state.status._value_,
        next_occurrence=encode(state.next_occurrence, "next_occurrence"),
        next_fire_at=encode(state.next_fire_at, "next_fire_at"),
        run_count=state.run_count,
        failure_count=state.failure_count,
        last_run_at=encode(state.last_run_at, "last_run_at"),
        last_run_id=state.last_run_id,
        last_status=None if last_status is None else last_status._value_,
        last_error=state.last_error,
        updated_at=codec.encode_instant(state.updated_at, "updated_at"),
    )


def _state_from_row(row: JobStateRow) -> JobState:
    decode = codec.decode_optional_instant
    last_status = row.last_status
    return JobState(
        id=row.id,
        schedule_kind=row.schedule_kind,
        status=JobStatus(row.status),
        next_occurrence=decode(row.next_occurrence),
        next_fire_at=decode(row.next_fire_at),
        run_count=row.run_count,
        failure_count=row.failure_count,
        last_run_at=decode(row.last_run_at),
        last_run_id=row.last_run_id,
        last_status=None if last_status is None else RunStatus(last_status),
        last_error=row.last_error,
        updated_at=codec.decode_instant(row.updated_at),
    )


def _scoped(sql: str, params: list[Any], owner: str | None) -> tuple[str, list[Any]]:
    return sql_builders.scoped(SQLITE, sql, params, owner)
