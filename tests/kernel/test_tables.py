"""Instants of the API as the magics, widgets and command line read and show them."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from jupyter_recall.client.tables import job_details, job_row, now, result_text, short_instant
from jupyter_recall.client.tool_specs import job_summary
from jupyter_recall.core.timefmt import format_time, parse_instant
from jupyter_recall.kernel.widgets.render import counters_html

UTC = timezone.utc


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-06-01T12:00:00+00:00", datetime(2026, 6, 1, 12, tzinfo=UTC)),
        ("2026-06-01T12:00:00Z", datetime(2026, 6, 1, 12, tzinfo=UTC)),
        (
            "2026-06-01T14:00:00.250000+02:00",
            datetime(2026, 6, 1, 12, 0, 0, 250000, tzinfo=UTC),
        ),
        ("2026-06-01T12:00:00", datetime(2026, 6, 1, 12, tzinfo=UTC)),  # naive: taken as UTC
        ("soon", None),
        ("", None),
        (None, None),
        (1717243200, None),
    ],
)
def test_parse_instant(text: object, expected: datetime | None) -> None:
    parsed = parse_instant(text)
    assert parsed == expected
    if parsed is not None:
        assert parsed.utcoffset() is not None


def test_tables_show_instants_as_every_surface_does() -> None:
    soon = datetime.now(UTC) + timedelta(minutes=29, seconds=30)
    assert short_instant(soon.isoformat()) == format_time(soon, now(), None)
    assert short_instant(soon.isoformat()).endswith("(in 29 min)")
    assert short_instant(None) == "-"
    row = job_row({"id": "j1", "name": "n", "next_fire_at": soon.isoformat(), "status": "active"})
    assert row[6].endswith("(in 29 min)")


@pytest.mark.parametrize(
    ("data", "shown"),
    [
        ("level 3\n", "level 3"),
        ("first\n\nlast line\n", "last line"),
        ("", '""'),
        (42, "42"),
        (2.5, "2.5"),
        (None, "-"),
        (True, "true"),
        ({"path": "a.txt", "content": "ready\n", "size": 6}, "ready"),
        ({"status_code": 200, "body": "ok", "headers": {"x": "y"}}, "HTTP 200: ok"),
        ({"status_code": 503}, "HTTP 503"),
        ({"value": {"temp": 21.5}}, "temp=21.5"),
        ({"size": 9, "tags": ["a", "b"]}, 'size=9, tags=["a", "b"]'),
        ({}, "{}"),
        ([1, 2, 3], "3 items: [1, 2, 3]"),
        ("x" * 200, "x" * 79 + "…"),
    ],
)
def test_results_are_shown_as_values_not_raw_json(data: object, shown: str) -> None:
    assert result_text(data) == shown


def test_job_details_show_each_runs_attempt_and_pending_retry() -> None:
    soon = (datetime.now(UTC) + timedelta(minutes=5)).isoformat()
    job = {"id": "j1", "name": "n", "kind": "job", "action": {"type": "code", "code": "f()"}}
    runs = [
        {"id": "r2", "status": "failed", "attempt": 2, "retry_at": soon, "error": "boom"},
        {"id": "r1", "status": "failed", "attempt": 1, "retry_at": None},
    ]
    lines = job_details(job, runs).splitlines()
    assert lines[-2].endswith(f": failed (attempt 2), retry at {short_instant(soon)} - boom")
    assert lines[-1].endswith(": failed")


def test_a_job_paused_after_its_failures_says_so_in_rows_and_details() -> None:
    job = {
        "id": "j1",
        "name": "n",
        "status": "paused",
        "paused_reason": "paused after 3 consecutive failed occurrences",
    }
    assert "paused (failures)" in job_row(job)
    assert "paused" in job_row({**job, "paused_reason": None})
    assert "paused (failures)" not in job_row({**job, "paused_reason": None})
    details = job_details(job, [])
    assert "  paused:   paused after 3 consecutive failed occurrences" in details


def test_an_agents_job_summary_carries_the_paused_reason() -> None:
    summary = job_summary({"id": "j1", "status": "paused", "paused_reason": "paused after 2"})
    assert (summary["status"], summary["paused_reason"]) == ("paused", "paused after 2")


@pytest.mark.parametrize(
    ("status", "error", "shown"),
    [
        ("timed_out", "timed_out: still running after 30 s", "timed_out: still running after 30 s"),
        ("missed", "missed: catch-up is off", "missed: catch-up is off"),
        ("failed", "ValueError: bad", "failed: ValueError: bad"),
        ("succeeded", None, "succeeded"),
        (None, None, "-"),
    ],
)
def test_the_last_column_says_the_status_once(status: str, error: str | None, shown: str):
    assert job_row({"id": "j1", "last_status": status, "last_error": error})[-1] == shown


def test_a_paused_job_does_not_fire_in_rows_and_details() -> None:
    stale = (datetime.now(UTC) - timedelta(seconds=10)).isoformat()
    job = {
        "id": "j1",
        "name": "n",
        "status": "paused",
        "next_fire_at": stale,
        "paused_reason": "paused after 3 consecutive failed occurrences",
    }
    assert job_row(job)[6] == "paused: does not fire"
    details = job_details(job, [])
    assert "  status:   paused: does not fire" in details
    assert "ago" not in details
    active = {**job, "status": "active", "paused_reason": None}
    assert job_row(active)[6].endswith("(10 s ago)")


def test_runs_by_the_schedule_and_failed_runs_are_told_apart() -> None:
    # After one scheduled failure and a failed Run now: one run fired by the schedule, two
    # failures (docs/engine.md), which "1 (2 failed)" read as a contradiction.
    job = {"id": "j1", "name": "n", "status": "active", "run_count": 1, "failure_count": 2}
    assert "  runs:     1 by the schedule; 2 failed (Run now included)" in job_details(job, [])
    counters = counters_html(job)
    assert "scheduled runs <b>1</b>" in counters
    assert "failed runs <b>2</b>" in counters
    assert "Run now" in counters  # the hover says which runs each counts
