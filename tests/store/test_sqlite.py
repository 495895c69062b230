"""The SQLite store: the store contract, plus what only SQLite has (pragmas, migrations, plans)."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import FrozenInstanceError
from datetime import datetime
from pathlib import Path

import pytest

from jupyter_recall.core.errors import ConflictError, StoreBusy, StoreError, ValidationError
from jupyter_recall.core.model import Job, JobKind, JobStatus
from jupyter_recall.core.records import HeadlessTarget, JobOptions, NotificationAction, ToolAction
from jupyter_recall.store import codec
from jupyter_recall.store.base import JOB_STATE_FIELDS
from jupyter_recall.store.migrations import latest_version
from jupyter_recall.store.rows import TABLES, JobRow, JobStateRow, RunRow, RunStateRow
from jupyter_recall.store.sqlite import SQLiteStore, bounded_output, truncation_marker
from tests.store.factories import T0, closing_all, make_job, make_run, minutes


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "recall.db"


@pytest.fixture
def open_sqlite(db_path: Path) -> Iterator[Callable[[], SQLiteStore]]:
    with closing_all(lambda: SQLiteStore(db_path)) as open_one:
        yield open_one


@pytest.fixture
def store(open_sqlite: Callable[[], SQLiteStore]) -> SQLiteStore:
    return open_sqlite()


def raw(store: SQLiteStore, sql: str, *params: object) -> list[tuple[object, ...]]:
    return list(store.db.execute(sql, params).fetchall())


# --- connection settings -----------------------------------------------------------------------


def test_wal_synchronous_normal_and_busy_timeout(db_path: Path) -> None:
    store = SQLiteStore(db_path, busy_timeout=2.5)
    try:
        assert store.db.journal_mode == "wal"
        assert raw(store, "PRAGMA synchronous") == [(1,)]  # NORMAL
        assert raw(store, "PRAGMA busy_timeout") == [(2500,)]
        assert raw(store, "PRAGMA foreign_keys") == [(1,)]
    finally:
        store.close()


def test_an_in_memory_store_works() -> None:
    store = SQLiteStore(":memory:")
    job = make_job()
    store.insert_jobs([job])
    assert store.get_job(job.id, owner="alice") == job
    store.close()


def test_an_unopenable_path_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="missing-dir"):
        SQLiteStore(tmp_path / "missing-dir" / "recall.db")


# --- migrations --------------------------------------------------------------------------------


def test_migrations_are_recorded_and_applied_once(
    open_sqlite: Callable[[], SQLiteStore], db_path: Path
) -> None:
    first = open_sqlite()
    assert [m.version for m in first.applied_migrations] == list(range(1, latest_version() + 1))
    rows = raw(first, "SELECT version, name, applied_at FROM migrations ORDER BY version")
    assert [row[0] for row in rows] == list(range(1, latest_version() + 1))
    for _, name, applied_at in rows:
        assert name
        assert datetime.fromisoformat(str(applied_at)).tzinfo is not None
    assert {"jobs", "runs", "leases", "migrations"} <= set(first.db.table_names())

    second = open_sqlite()
    assert second.applied_migrations == []
    assert raw(second, "SELECT version, name, applied_at FROM migrations ORDER BY version") == rows


def test_migration_9_takes_the_next_fire_of_jobs_paused_before_it(
    open_sqlite: Callable[[], SQLiteStore],
) -> None:
    first = open_sqlite()
    paused = make_job(status=JobStatus.PAUSED, when="every 5m")
    active = make_job(when="every 5m")
    first.insert_jobs([paused, active])  # as a release before it paused: next fire kept
    assert first.get_job(paused.id, owner=None).next_fire_at is not None
    with first.atomic():
        first.db.execute("DELETE FROM migrations WHERE version = 9")
    second = open_sqlite()
    assert [m.version for m in second.applied_migrations] == [9]
    read = second.get_job(paused.id, owner=None)
    assert (read.next_fire_at, read.next_occurrence) == (None, paused.next_occurrence)
    assert second.get_job(active.id, owner=None) == active


def test_stores_opening_a_new_file_at_once_migrate_it_once(db_path: Path) -> None:
    stores: list[SQLiteStore] = []
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            stores.append(SQLiteStore(db_path))
        except BaseException as exc:  # reported to the main thread below
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert errors == []
        assert sum(len(store.applied_migrations) for store in stores) == latest_version()
        assert raw(stores[0], "SELECT count(*) FROM migrations") == [(latest_version(),)]
    finally:
        for store in stores:
            store.close()


def test_a_database_from_a_newer_release_is_refused(db_path: Path) -> None:
    SQLiteStore(db_path).close()
    with sqlite3.connect(db_path) as conn:
        conn.execute(
            "INSERT INTO migrations (version, name, applied_at) VALUES (?, ?, ?)",
            (latest_version() + 1, "from the future", T0.isoformat()),
        )
    conn.close()
    with pytest.raises(StoreError, match=f"schema version {latest_version() + 1}"):
        SQLiteStore(db_path)


# --- storage format ----------------------------------------------------------------------------


def test_instants_are_integer_microseconds_and_payloads_carry_a_version(
    store: SQLiteStore,
) -> None:
    job = make_job(options=JobOptions.from_json({"exclusive": True}))
    store.insert_jobs([job])
    row = raw(store, "SELECT created_at, action, options, schedule, version FROM jobs")[0]
    created_at, action, options, schedule, version = row
    assert created_at == int(T0.timestamp()) * 1_000_000
    assert str(action).startswith('{"version":1,"type":"code"')
    assert options == '{"version":1,"exclusive":true}'
    assert '"version":' in str(schedule)
    assert version == job.version
    assert "version" not in store.get_job(job.id, owner=None).action.to_json()


def test_a_payload_may_not_use_the_reserved_version_key(store: SQLiteStore) -> None:
    with pytest.raises(ValidationError, match=r"options\.version"):
        store.insert_jobs([make_job(options=JobOptions.from_json({"version": 2}))])


def test_a_naive_instant_is_refused_by_field_name(store: SQLiteStore) -> None:
    naive = datetime(2030, 1, 1, 12, 0)
    with pytest.raises(ValidationError, match="last_run_at"):
        store.insert_jobs([make_job(last_run_at=naive)])
    job = make_job()
    store.insert_jobs([job])
    with pytest.raises(ValidationError, match="finished_at"):
        store.insert_runs([make_run(job, T0, finished_at=naive)])
    assert store.list_runs(owner=None) == []


def test_a_payload_that_is_not_json_is_refused(store: SQLiteStore) -> None:
    with pytest.raises(ValidationError, match="options"):
        store.insert_jobs([make_job(options=JobOptions.from_json({"when": T0}))])


# --- indexes -----------------------------------------------------------------------------------


def plan(store: SQLiteStore, sql: str, *params: object) -> str:
    return " | ".join(str(row[-1]) for row in raw(store, f"EXPLAIN QUERY PLAN {sql}", *params))


def traced(store: SQLiteStore, call: Callable[[], object]) -> list[str]:
    """The statements ``call`` runs on the store's connection."""
    statements: list[str] = []
    store.db.conn.set_trace_callback(statements.append)
    try:
        call()
    finally:
        store.db.conn.set_trace_callback(None)
    return statements


def test_due_jobs_and_next_fire_at_search_the_partial_index(store: SQLiteStore) -> None:
    store.insert_jobs([make_job(when="now") for _ in range(50)])
    for call in (lambda: store.due_jobs(T0, limit=10), store.next_fire_at):
        (statement,) = traced(store, call)
        query_plan = plan(store, statement)
        assert "SEARCH jobs USING INDEX jobs_due" in query_plan
        assert "TEMP B-TREE" not in query_plan


def test_running_runs_search_the_partial_index(store: SQLiteStore) -> None:
    job = make_job()
    store.insert_jobs([job])
    store.insert_runs([make_run(job, T0 + minutes(i)) for i in range(20)])
    (statement,) = traced(store, lambda: store.running_runs(job_id=job.id))
    assert "USING INDEX runs_running" in plan(store, statement)


def test_the_declared_indexes_exist(store: SQLiteStore) -> None:
    jobs = {index.name: index for index in store.db.table("jobs").indexes}
    runs = {index.name: index for index in store.db.table("runs").indexes}
    assert jobs["jobs_due"].columns == ["next_fire_at", "id"]
    assert jobs["jobs_one_pending_recall"].unique
    assert jobs["jobs_by_owner"].columns == ["owner", "created_at"]
    assert runs["runs_one_per_attempt"].unique
    assert runs["runs_one_per_attempt"].columns == ["job_id", "scheduled_for", "attempt"]
    assert "runs_one_per_occurrence" not in runs  # replaced by migration 6 (retries)
    assert runs["runs_retry_due"].columns == ["retry_at"]
    assert runs["runs_by_owner"].columns == ["owner", "created_at"]


# --- locking -----------------------------------------------------------------------------------


@contextmanager
def write_lock_held(holder: SQLiteStore) -> Iterator[threading.Event]:
    """``holder`` keeps a write transaction open in a thread until the event yielded is set."""
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with holder.atomic():
            holder.insert_jobs([make_job()])
            holding.set()
            release.wait(30)

    thread = threading.Thread(target=hold)
    thread.start()
    try:
        assert holding.wait(30)
        yield release
    finally:
        release.set()
        thread.join()


@pytest.mark.parametrize("after_run_now", [False, True])
def test_a_writer_waits_for_another_connection_within_the_busy_timeout(
    store: SQLiteStore, open_sqlite: Callable[[], SQLiteStore], after_run_now: bool
) -> None:
    """Also right after ``run_now``, which left the connection's busy timeout at 0."""
    if after_run_now:
        store.run_now(lambda: store.insert_jobs([make_job()]))
    with write_lock_held(open_sqlite()) as release:
        threading.Timer(0.3, release.set).start()
        started = time.monotonic()
        store.insert_jobs([make_job()])  # waits for the holder's commit
        waited = time.monotonic() - started
    assert waited >= 0.1
    assert store.count_jobs(owner=None) == 2 + after_run_now


def test_a_lock_held_past_the_busy_timeout_is_a_store_error(db_path: Path) -> None:
    holder, waiter = SQLiteStore(db_path), SQLiteStore(db_path, busy_timeout=0.05)
    try:
        with holder.atomic():
            holder.insert_jobs([make_job()])
            with pytest.raises(StoreError, match="locked"):
                waiter.insert_jobs([make_job()])
        assert waiter.count_jobs(owner=None) == 1
    finally:
        holder.close()
        waiter.close()


def busy_timeout_ms(store: SQLiteStore) -> int:
    ((value,),) = raw(store, "PRAGMA busy_timeout")
    return int(str(value))


def test_run_now_runs_the_call_on_the_calling_thread(store: SQLiteStore) -> None:
    job = make_job()
    assert store.run_now(lambda: store.insert_jobs([job])) is None
    assert store.run_now(lambda: store.get_job(job.id, owner=None)).id == job.id
    assert busy_timeout_ms(store) == 0  # left so for the next inline call
    assert store.count_jobs(owner=None) == 1
    assert busy_timeout_ms(store) == 10_000  # set back by the first other call


def test_run_now_refuses_at_once_while_another_connection_writes(
    store: SQLiteStore, open_sqlite: Callable[[], SQLiteStore]
) -> None:
    with write_lock_held(open_sqlite()):
        started = time.monotonic()
        with pytest.raises(StoreBusy, match="locked"):
            store.run_now(lambda: store.insert_jobs([make_job()]))
        assert time.monotonic() - started < 5  # not the 10 s busy timeout
    assert store.count_jobs(owner=None) == 1  # the holder's: nothing of the refused call
    assert busy_timeout_ms(store) == 10_000
    store.run_now(lambda: store.insert_jobs([make_job()]))
    assert store.count_jobs(owner=None) == 2


def test_run_now_refuses_while_another_thread_holds_the_store(store: SQLiteStore) -> None:
    with write_lock_held(store), pytest.raises(StoreBusy, match="another thread"):
        store.run_now(lambda: store.count_jobs(owner=None))
    assert store.run_now(lambda: store.count_jobs(owner=None)) == 1


def test_run_now_lets_other_errors_through(store: SQLiteStore) -> None:
    job = make_job()
    store.insert_jobs([job])
    with pytest.raises(ConflictError):
        store.run_now(lambda: store.insert_jobs([job]))
    assert store.count_jobs(owner=None) == 1


def test_transactions_end_as_they_began_whatever_fails(
    store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``atomic()``: a failing block rolls back (its savepoint only, when nested) and reports a
    ``StoreError``; a failure before the transaction began (setting the busy timeout back after
    a ``run_now`` call) leaves nothing to end: the store stays usable from another thread."""
    first, second, third = make_job(), make_job(), make_job()

    def insert_then(job: Job, fail: Callable[[], object]) -> None:
        with store.atomic():
            store.insert_jobs([job])
            fail()

    def boom() -> None:
        raise ValueError("boom")

    with store.atomic():
        store.insert_jobs([first])
        with pytest.raises(StoreError):
            insert_then(second, lambda: store._conn.execute("SELECT nothing FROM jobs"))
    assert {job.id for job in store.list_jobs(owner=None)} == {first.id}
    with pytest.raises(ValueError, match="boom"):
        insert_then(third, boom)
    assert store.count_jobs(owner=None) == 1

    def refuse(waits: bool) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    store.run_now(lambda: store.count_jobs(owner=None))  # leaves the busy timeout at 0
    monkeypatch.setattr(store, "_wait_for_locks", refuse)
    with pytest.raises(StoreError, match="disk I/O error"), store.atomic():
        pytest.fail("the block of a transaction that could not begin ran")
    store._waits = True
    with store.atomic():  # nested, it must not end the transaction it is in
        store.insert_jobs([third])
        store._waits = False  # as if a run_now call had just left it so
        with pytest.raises(StoreError, match="disk I/O error"), store.atomic():
            pytest.fail("the block of a transaction that could not begin ran")
        assert store._depth == 1
    monkeypatch.undo()
    assert store._depth == 0
    counted: list[int] = []
    worker = threading.Thread(target=lambda: counted.append(store.count_jobs(owner=None)))
    worker.start()
    worker.join(timeout=10)
    assert counted == [2]  # the lock was let go; the outer transaction committed


def test_a_closed_store_reports_a_store_error(store: SQLiteStore) -> None:
    store.close()
    with pytest.raises(StoreError):
        store.count_jobs(owner=None)


# --- bounded output ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("chunks", "limit"),
    [
        (["x" * 100], 100),
        (["x" * 101], 100),
        (["abc"] * 40, 100),
        (["a" * 99, "b" * 2, "c" * 10_000], 100),
        (["é" * 500, "ü" * 5], 80),
    ],
)
def test_bounded_output_never_exceeds_the_limit_and_counts_every_character(
    chunks: list[str], limit: int
) -> None:
    output, dropped = "", 0
    for chunk in chunks:
        output, dropped = bounded_output(output, dropped, chunk, limit)
        assert len(output) <= limit
    full = "".join(chunks)
    if dropped:
        head = output.removesuffix(truncation_marker(dropped))
        assert full.startswith(head)
        assert len(head) + dropped == len(full)
    else:
        assert output == full


def test_a_limit_shorter_than_the_marker_keeps_only_the_marker() -> None:
    assert bounded_output("", 0, "x" * 100, 5) == (truncation_marker(100), 100)
    assert bounded_output("xyz", 0, "", 5) == ("xyz", 0)


def test_jobs_read_together_share_flat_records_and_own_nested_ones(store: SQLiteStore) -> None:
    flat = NotificationAction("shared")
    nested = ToolAction("http.get", {"url": "https://x.org", "extra": {"tags": ["a"]}})
    made = [make_job(action=flat), make_job(action=flat), make_job(action=nested)]
    made.append(make_job(action=nested))
    store.insert_jobs(made)
    read = {job.id: job for job in store.list_jobs(owner=None)}
    first, second, third, fourth = (read[job.id] for job in made)
    # Decoded once, shared: nothing in a flat record can change.
    assert first.action == flat
    assert first.action is second.action
    with pytest.raises(FrozenInstanceError):
        first.action.message = "changed by a caller"  # type: ignore[misc]
    assert isinstance(third.action, ToolAction)
    assert isinstance(fourth.action, ToolAction)
    assert third.action is not fourth.action
    third.action.params["extra"]["tags"].append("b")
    assert fourth.action.params["extra"] == {"tags": ["a"]}
    assert store.get_job(third.id, owner=None).action == nested


def test_a_row_of_the_previous_format_decodes(store: SQLiteStore) -> None:
    """The JSON texts the stores held before the payloads became records (session 4's rows)
    read back as the same records, and are written back byte for byte."""
    job = make_job()
    store.insert_jobs([job])
    texts = {
        "action": '{"version":1,"type":"tool","name":"http.get","params":{"url":"https://x.org"}}',
        "target": '{"version":1,"type":"headless","kernel_name":"python3","cwd":"work"}',
        "options": '{"version":1,"exclusive":true,"exclusive_timeout":30,"output_channel":"ui"}',
    }
    with store.atomic():
        store.db.execute(
            "UPDATE jobs SET action = ?, target = ?, options = ? WHERE id = ?",
            [texts["action"], texts["target"], texts["options"], job.id],
        )
    read = store.get_job(job.id, owner=None)
    assert read.action == ToolAction("http.get", {"url": "https://x.org"})
    assert read.target == HeadlessTarget(kernel_name="python3", cwd="work")
    assert read.options.exclusive is True
    assert read.options.exclusive_timeout == 30.0
    assert read.options.output_channel == "ui"
    row = codec.job_row(read)
    assert (row.action, row.target, row.options) == (
        texts["action"],
        texts["target"],
        texts["options"],
    )


def test_a_stored_target_with_a_field_of_another_type_still_reads(store: SQLiteStore) -> None:
    """Targets refuse unknown fields at the edge; a row written before they did still lists,
    its stray field dropped."""
    job = make_job()
    store.insert_jobs([job])
    stray = '{"version":1,"type":"headless","kernel_name":"python3","path":"nb.ipynb"}'
    with store.atomic():
        store.db.execute("UPDATE jobs SET target = ? WHERE id = ?", [stray, job.id])
    assert store.get_job(job.id, owner=None).target == HeadlessTarget(kernel_name="python3")


# --- one column list per table -------------------------------------------------------------------


def test_every_table_has_the_columns_of_its_row_class(store: SQLiteStore) -> None:
    tables = {
        name
        for (name,) in raw(store, "SELECT name FROM sqlite_master WHERE type = 'table'")
        if not str(name).startswith("sqlite_")
    }
    assert tables == set(TABLES)
    for table, fields in TABLES.items():
        assert [row[1] for row in raw(store, f"PRAGMA table_info({table})")] == list(fields)


def test_the_state_projections_name_columns_of_their_tables() -> None:
    assert JobStateRow._fields == JOB_STATE_FIELDS
    assert set(JobStateRow._fields) <= set(JobRow._fields)
    assert set(RunStateRow._fields) <= set(RunRow._fields)


def test_migration_two_applies_to_a_file_made_by_version_one(db_path: Path) -> None:
    store = SQLiteStore(db_path)
    job = make_job(kind=JobKind.WATCHER, when="every 5s")
    with store.atomic():
        store.insert_jobs([job])
        store.db.execute("DROP TABLE watcher_results")
        store.db.execute("DROP TABLE watcher_state")
        store.db.execute("DROP TABLE notification_buffer")
        store.db.execute("DELETE FROM migrations WHERE version = 2")
    store.close()
    reopened = SQLiteStore(db_path)
    try:
        assert [m.version for m in reopened.applied_migrations] == [2]
        assert reopened.get_job(job.id, owner=None).id == job.id
        reopened.create_watcher(job.id, job.owner, {"checks": 0}, now=T0)
        watcher = reopened.get_watcher(job.id)
        assert watcher is not None
        assert watcher.checks == 0
    finally:
        reopened.close()
