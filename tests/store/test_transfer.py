"""Moving a store: every table copied raw (ids kept) between SQLite files and PostgreSQL
databases, refusing a non-empty target, idempotent when run again; the JSON-lines export round
trip is exact; a bad export names the line and the field."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from jupyter_recall.core.approvals import ApprovalRecord
from jupyter_recall.core.dependency import AfterOn, Dependency
from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.model import JobKind, RunStatus
from jupyter_recall.core.records import NotificationAction
from jupyter_recall.store.base import Store
from jupyter_recall.store.export_lines import load_export, write_export
from jupyter_recall.store.rows import TABLES
from jupyter_recall.store.transfer import (
    COPIED,
    NOT_COPIED,
    copy_store,
    refuse_occupied,
    table_rows,
)
from jupyter_recall.store.urls import open_store, sqlite_url
from jupyter_recall.store.watchers import CheckRecord
from tests.store.factories import T0, make_job, make_recall, make_run, minutes


def _nothing(table: str, count: int) -> None:
    del table, count


def populate(store: Store, *, jobs: int = 3) -> None:
    """A store with a row in every copied table: jobs of every kind, runs with output, a
    watcher with history, a buffered notification, approvals, a disabled owner."""
    made = [make_job(when=f"every {n + 1} minutes") for n in range(jobs)]
    made += [
        make_recall("session-1"),
        make_job(kind=JobKind.WATCHER, when="every 5 minutes"),
        make_job(when="in 2h", owner="bob", action=NotificationAction("x")),
        make_job(when="every day at 09:00", plugin_owner="pkg", key="nightly"),
    ]
    store.insert_jobs(made)
    for job in made[:jobs]:
        run = make_run(job, T0 + minutes(1), status=RunStatus.SUCCEEDED, finished_at=T0)
        store.insert_runs([run])
        store.append_output(run.id, "line one\nline two é\n", limit=10_000)
    watcher = made[jobs + 1]
    store.create_watcher(watcher.id, watcher.owner, {"level": 0}, now=T0)
    for number in (1, 2):
        check = CheckRecord(number, T0 + minutes(number), True, {"value": number}, False, "ok")
        store.record_checks([(watcher.id, watcher.owner, {"level": number}, check)])
    store.buffer_notification("alice", "session-1", {"id": "n1", "text": "hi"}, now=T0)
    for ident, owner in (("a1", "alice"), ("a2", "bob")):
        store.insert_approval(
            ApprovalRecord(
                id=ident,
                owner=owner,
                tool="shell.run",
                summary="shell.run(command='ls')",
                source="config",
                asked_by="run:r1",
                created_at=T0,
                expires_at=T0 + timedelta(minutes=5),
            )
        )
    store.decide_approval("a2", "approved", decided_by="bob", note="fine", now=T0 + minutes(1))
    store.put_disabled_owner("alice", "pkg", [made[-1].id], now=T0)
    store.put_dependency(Dependency(made[1].id, "alice", made[0].id, AfterOn.FINISHED, T0, "r"))


def contents(store: Store) -> dict[str, list[tuple[object, ...]]]:
    return {
        table: [row for rows in table_rows(store, table, batch=2) for row in rows]
        for table in COPIED
    }


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[Store]:
    store = open_store(sqlite_url(tmp_path / "source.sqlite"))
    yield store
    store.close()


@pytest.fixture
def target(store_url: str) -> Iterator[Store]:
    store = open_store(store_url)
    yield store
    store.close()


def test_every_table_is_copied_or_named_as_not_history() -> None:
    assert sorted(COPIED + NOT_COPIED) == sorted(TABLES)


def test_migrate_copies_every_row_exactly(sqlite_store: Store, target: Store) -> None:
    populate(sqlite_store)
    before = contents(sqlite_store)
    assert all(before[table] for table in COPIED), "the fixture fills every table"
    counts = copy_store(sqlite_store, target, batch=2, progress=_nothing)
    assert contents(target) == before
    assert counts == {table: (len(rows), len(rows)) for table, rows in before.items()}


def test_a_second_migrate_adds_nothing_and_changes_nothing(
    sqlite_store: Store, target: Store
) -> None:
    populate(sqlite_store)
    copy_store(sqlite_store, target, progress=_nothing)
    again = copy_store(sqlite_store, target, progress=_nothing)
    assert all(added == 0 for _, added in again.values())
    assert contents(target) == contents(sqlite_store)


def test_a_migrate_cut_off_half_way_completes_when_run_again(
    sqlite_store: Store, target: Store
) -> None:
    populate(sqlite_store, jobs=5)
    first_jobs = next(table_rows(sqlite_store, "jobs", batch=3))
    target.load_rows("jobs", first_jobs)
    copy_store(sqlite_store, target, progress=_nothing)
    assert contents(target) == contents(sqlite_store)


def test_a_non_empty_target_is_refused(sqlite_store: Store, target: Store) -> None:
    refuse_occupied(target, "--to")
    target.insert_jobs([make_job()])
    with pytest.raises(ValidationError, match=r"--to: the target store is not empty.*jobs"):
        refuse_occupied(target, "--to")


def test_a_migrated_occurrence_keeps_its_uniqueness(sqlite_store: Store, target: Store) -> None:
    populate(sqlite_store, jobs=1)
    copy_store(sqlite_store, target, progress=_nothing)
    (run,) = sqlite_store.list_runs(owner="alice")
    again = make_run(target.get_job(run.job_id, owner=None), run.scheduled_for)
    assert target.insert_runs([again]) == []


def test_export_then_import_is_exact(sqlite_store: Store, target: Store) -> None:
    populate(sqlite_store)
    text = io.StringIO()
    written = write_export(sqlite_store, text, now=T0, progress=_nothing, batch=2)
    lines = text.getvalue().splitlines()
    header = json.loads(lines[0])
    assert header["format"] == "jupyter_recall-export"
    assert header["version"] == 1
    assert header["exported_at"] == "2030-01-01T12:00:00.000000+00:00"
    assert written == len(lines) - 1
    first_job = json.loads(lines[1])
    assert first_job["table"] == "jobs"
    assert first_job["row"]["created_at"] == "2030-01-01T12:00:00.000000+00:00"
    load_export(io.StringIO(text.getvalue()), target, progress=_nothing, batch=2)
    assert contents(target) == contents(sqlite_store)
    again = io.StringIO()
    write_export(target, again, now=T0, progress=_nothing)
    assert again.getvalue() == text.getvalue()


def test_attempts_and_pending_retries_are_carried_by_export_and_import(
    sqlite_store: Store, target: Store
) -> None:
    (job,) = [make_job()]
    sqlite_store.insert_jobs([job])
    first = make_run(job, T0, status=RunStatus.FAILED, finished_at=T0)
    second = make_run(
        job, T0, status=RunStatus.FAILED, finished_at=T0, attempt=2, retry_at=T0 + minutes(4)
    )
    sqlite_store.insert_runs([first, second])
    lines = _export(sqlite_store)
    exported = [json.loads(line)["row"] for line in lines[1:] if '"table": "runs"' in line]
    assert sorted((row["attempt"], row["retry_at"]) for row in exported) == [
        (1, None),
        (2, "2030-01-01T12:04:00.000000+00:00"),
    ]
    load_export(io.StringIO("\n".join(lines)), target, progress=_nothing)
    assert target.get_run(second.id, owner=None) == sqlite_store.get_run(second.id, owner=None)
    assert target.pending_retries([job.id]) == {job.id: T0 + minutes(4)}
    # The copy keeps the uniqueness per attempt: attempt 2 cannot be fired again there.
    assert target.insert_runs([make_run(job, T0, attempt=2)]) == []


def _export(store: Store) -> list[str]:
    text = io.StringIO()
    write_export(store, text, now=T0, progress=_nothing)
    return text.getvalue().splitlines()


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda line: "{not json", "line 2: not JSON"),
        (lambda line: line.replace('"jobs"', '"jobz"', 1), "line 2: table: unknown table"),
        (lambda line: line.replace('"run_count": 0', '"run_count": "0"'), "line 2: jobs.run_count"),
        (lambda line: line.replace('"run_count": 0, ', ""), "line 2: jobs.run_count: is missing"),
        (
            lambda line: line.replace(
                '"created_at": "2030-01-01T12:00:00.000000+00:00"', '"created_at": "yesterday"'
            ),
            "line 2: jobs.created_at: must be an ISO 8601 instant",
        ),
        (
            lambda line: line.replace('"run_count": 0', '"run_count": 0, "colour": 1'),
            "line 2: jobs.colour: is not a column",
        ),
    ],
)
def test_a_bad_row_names_its_line_and_field(
    sqlite_store: Store, tmp_path: Path, change: object, named: str
) -> None:
    sqlite_store.insert_jobs([make_job()])
    header, row = _export(sqlite_store)
    assert callable(change)
    bad = [header, change(row)]
    other = open_store(sqlite_url(tmp_path / "other.sqlite"))
    try:
        with pytest.raises(ValidationError, match=named):
            load_export(bad, other, progress=_nothing)
        assert other.count_rows("jobs") == 0
    finally:
        other.close()


@pytest.mark.parametrize(
    ("header", "named"),
    [
        ('{"format": "csv", "version": 1, "schema": 1}', "line 1: format"),
        ('{"format": "jupyter_recall-export", "version": 9, "schema": 1}', "line 1: version"),
        ('{"format": "jupyter_recall-export", "version": 1, "schema": 999}', "line 1: schema"),
        ("[]", "line 1: must be a JSON object"),
    ],
)
def test_a_bad_header_is_named(sqlite_store: Store, header: str, named: str) -> None:
    with pytest.raises(ValidationError, match=named):
        load_export([header], sqlite_store, progress=_nothing)


def test_an_export_of_another_schema_says_how_to_bring_it_here(sqlite_store: Store) -> None:
    header = '{"format": "jupyter_recall-export", "version": 1, "schema": 2}'
    with pytest.raises(ValidationError) as refused:
        load_export([header], sqlite_store, progress=_nothing)
    assert refused.value.field == "line 1: schema"
    assert "import it with the release that wrote it" in str(refused.value)
    assert "open both" not in str(refused.value), "a file is not opened, and not migrated"
