"""Job rows of a batch: payloads encoded once per shared object, one-shot schedules written
directly, and NULL written in the INSERT for the columns no job of the batch fills."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.model import JobStatus, Policies, RunStatus
from jupyter_recall.core.records import JobOptions, NotificationAction
from jupyter_recall.core.when import ScheduleSpec, parse_when
from jupyter_recall.store import codec
from jupyter_recall.store.rows import JobRow, RunRow
from jupyter_recall.store.sqlite import SQLiteStore, _insert_statement
from tests.store.factories import T0, make_job, make_recall, make_run

UTC = timezone.utc


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    store = SQLiteStore(tmp_path / "recall.db")
    yield store
    store.close()


def encoded_by_the_general_encoder(spec: ScheduleSpec) -> str:
    return codec._encode_json(spec.to_dict())


ONE_SHOTS = [
    ("in 30m", "UTC"),
    ("2031-11-22T13:00:01.123456+00:00", "UTC"),
    ("tomorrow at 9:00", "Europe/Paris"),
    ("2031-03-30T02:30", "Europe/Paris"),
    ("on 2030-06-01", "+05:30"),
    ("now", "America/New_York"),
    ("maintenant", "Asia/Kolkata"),
]


@pytest.mark.parametrize(("text", "tz"), ONE_SHOTS)
def test_a_one_shot_schedule_is_written_as_the_general_encoder_writes_it(
    text: str, tz: str
) -> None:
    spec = parse_when(text, now=T0, tz=tz)
    written = codec._encode_schedule(spec)
    assert written == encoded_by_the_general_encoder(spec)
    assert codec._decode_schedule(written) == spec


@settings(max_examples=200, deadline=None)
@given(
    st.datetimes(
        min_value=datetime(2030, 1, 2), max_value=datetime(9998, 1, 1), timezones=st.just(UTC)
    ),
    st.sampled_from(["UTC", "Europe/Paris", "America/Sao_Paulo", "-03:00", "Asia/Kolkata"]),
)
def test_any_one_shot_schedule_is_written_as_the_general_encoder_writes_it(
    at: datetime, tz: str
) -> None:
    spec = parse_when(at.isoformat(), now=T0, tz=tz)
    assert codec._encode_schedule(spec) == encoded_by_the_general_encoder(spec)


@pytest.mark.parametrize("text", ["every 5m", "daily", "*/15 9-17 * * 1-5"])
def test_recurring_schedules_keep_the_general_encoder(text: str) -> None:
    spec = parse_when(text, now=T0, tz="Europe/Paris")
    assert codec._encode_schedule(spec) == encoded_by_the_general_encoder(spec)


def test_rows_of_a_batch_equal_the_rows_of_each_job_alone() -> None:
    shared_action = NotificationAction("shared")
    other_action = NotificationAction("other")
    equal_apart = NotificationAction("shared")
    policies = Policies(jitter=5.0)
    jobs = [
        make_job(action=shared_action),
        make_job(action=other_action, policies=policies),
        make_job(action=shared_action, options=JobOptions.from_json({"exclusive": True})),
        make_job(action=equal_apart, policies=policies, when="every 5m"),
        make_job(action=shared_action, when="every 5m"),
    ]
    rows = codec.job_rows(jobs)
    assert rows == [codec.job_row(job) for job in jobs]
    actions = [row.action for row in rows]
    assert [codec.decode_payload(text, "action")["message"] for text in actions] == [
        "shared",
        "other",
        "shared",
        "shared",
        "shared",
    ]


def test_a_shared_payload_that_cannot_be_written_names_its_field() -> None:
    reserved = JobOptions.from_json({"version": 2})
    jobs = [make_job(), make_job(options=reserved), make_job(options=reserved)]
    with pytest.raises(ValidationError, match=r"options\.version"):
        codec.job_rows(jobs)
    naive = datetime(2030, 1, 1, 12, 0)
    with pytest.raises(ValidationError, match="next_fire_at"):
        codec.job_rows([make_job(), make_job(next_fire_at=naive)])


def test_enumerations_are_written_as_plain_text() -> None:
    job = make_job(status=JobStatus.PAUSED, last_status=RunStatus.FAILED)
    row = codec.job_row(job)
    for column, value in (("kind", "job"), ("status", "paused"), ("last_status", "failed")):
        written = getattr(row, column)
        assert written == value
        assert type(written) is str


def null_columns(sql: str) -> set[str]:
    values = sql[sql.index("VALUES (") + len("VALUES (") : -1].split(", ")
    return {column for column, value in zip(JobRow._fields, values, strict=True) if value == "NULL"}


def test_columns_no_job_fills_are_written_null_in_the_statement(store: SQLiteStore) -> None:
    fresh = [make_job(), make_job(when="every 5m"), make_recall("analysis.ipynb")]
    sql, rows = _insert_statement("jobs", JobRow._fields, codec.job_rows(fresh))
    last_run = {"last_run_at", "last_run_id", "last_status", "last_error"}
    assert null_columns(sql) == last_run | {"plugin_owner", "key", "paused_reason"}
    assert all(len(row) == len(JobRow._fields) - 7 for row in rows)
    store.insert_jobs(fresh)
    assert {job.id: job for job in store.list_jobs(owner=None)} == {job.id: job for job in fresh}


def test_a_batch_mixing_filled_and_empty_columns_round_trips(store: SQLiteStore) -> None:
    ran = make_job(
        last_run_at=T0 + timedelta(minutes=1),
        last_run_id="r1",
        last_status=RunStatus.SUCCEEDED,
        last_error="earlier failure",
        run_count=3,
        failure_count=1,
        plugin_owner="plugin",
        key="nightly",
    )
    batch = [make_job(), ran, make_recall("analysis.ipynb"), make_job(next_occurrence=None)]
    store.insert_jobs(batch)
    assert {job.id: job for job in store.list_jobs(owner=None)} == {job.id: job for job in batch}


def test_rows_whose_only_filled_column_is_the_id_keep_one_parameter() -> None:
    width = len(JobRow._fields)
    rows = [("a", *([None] * (width - 1))), ("b", *([None] * (width - 1)))]
    sql, picked = _insert_statement("jobs", JobRow._fields, rows)
    assert sql.count("?") == 1
    assert list(picked) == [("a",), ("b",)]
    full = [tuple(range(width))]
    sql, picked = _insert_statement("jobs", JobRow._fields, full)
    assert sql.count("?") == width
    assert list(picked) == full


def test_a_new_run_is_inserted_with_its_empty_columns_null_and_unique_per_occurrence(
    store: SQLiteStore,
) -> None:
    job = make_job()
    store.insert_jobs([job])
    run = make_run(job, T0, started_at=None)
    sql, rows = _insert_statement("runs", RunRow._fields, [codec.run_row(run)], "ON CONFLICT")
    assert sql.endswith(") ON CONFLICT")
    values = sql[sql.index("VALUES (") + len("VALUES (") : sql.index(") ON")].split(", ")
    nulls = {c for c, v in zip(RunRow._fields, values, strict=True) if v == "NULL"}
    assert nulls == {"started_at", "finished_at", "error", "engine_id", "retry_at"}
    assert [len(row) for row in rows] == [len(RunRow._fields) - len(nulls)]
    assert store.insert_runs([run]) == [run]
    assert store.insert_runs([make_run(job, T0)]) == []
    assert store.get_run(run.id, owner=None) == run
