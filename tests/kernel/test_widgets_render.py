"""What the cards show, without a kernel: the HTML of jobs, runs, countdowns and charts, and the
progress and approval cards' state (ipywidgets objects work without a frontend)."""

from __future__ import annotations

import re
import threading
import time
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from jupyter_recall.kernel.widgets import render
from jupyter_recall.kernel.widgets.approval import ApprovalCard
from jupyter_recall.kernel.widgets.progress import ProgressCard

NOW = datetime(2026, 6, 1, 12, 0, 0, tzinfo=timezone.utc)


def iso(delta: float) -> str:
    return (NOW + timedelta(seconds=delta)).isoformat()


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0.042, "0.042 s"),
        (2.26, "2.3 s"),
        (12.4, "12 s"),
        (185, "3 min 05 s"),
        (7380, "2 h 03 min"),
        (None, "-"),
        (-1, "-"),
        (True, "-"),
    ],
)
def test_durations(seconds, text):
    assert render.format_duration(seconds) == text


@pytest.mark.parametrize(
    ("data", "value"),
    [
        (3, 3.0),
        (2.5, 2.5),
        (True, None),
        (float("nan"), None),
        ("temperature 21.5 C\nlevel 7\n\n", 7.0),
        ("no number", None),
        ("", None),
        ({"content": "load 0.75\n", "size": 9}, 0.75),
        ({"status_code": 200, "body": "ok"}, 200.0),
        ({"size": 9}, None),
        (["1"], None),
        ("1e400", None),
    ],
)
def test_numeric_values(data, value):
    assert render.numeric_value(data) == value


def test_output_is_clipped_to_its_tail():
    text = "".join(f"line {i}\n" for i in range(10000))
    clipped = render.clip_output(text, limit=100)
    assert clipped.endswith("line 9999\n")
    assert clipped.startswith(f"[… {len(text) - 100} earlier characters not shown]")
    assert render.clip_output("short") == "short"


@pytest.fixture
def utc_here(monkeypatch):
    """This process's zone is UTC (cards show times in the user's zone: the kernel's)."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_times_are_shown_as_on_every_surface_without_the_hint():
    paris = ZoneInfo("Europe/Paris")
    assert render.local_time(iso(0), paris, now=NOW) == "14:00:00 CEST"
    assert render.local_time(iso(86400 * 3), paris, now=NOW) == "2026-06-04 14:00 CEST"
    assert render.local_time("not a time", paris) == "-"
    shown = render.time_html(iso(0), paris, now=NOW)
    assert shown == (
        '<time datetime="2026-06-01T12:00:00+00:00" title="2026-06-01T12:00:00+00:00">'
        "14:00:00 CEST</time>"
    )


def test_countdown_ticks_in_css_for_less_than_a_day(utc_here):
    job = {"status": "active", "next_fire_at": iso(3723.2), "tz": "Europe/Paris"}
    shown = render.countdown_html(job, NOW, "u1")
    assert re.search(r"next run <time [^>]+>13:02:03 UTC</time> \(in <style>", shown), shown
    assert 'data-seconds="3724"' in shown
    assert "@keyframes jr-cd-u1{from{--jr-left:3724}to{--jr-left:0}}" in shown
    assert "animation:jr-cd-u1 3724s steps(3724,end) forwards" in shown


@pytest.mark.parametrize(
    ("job", "text"),
    [
        ({"status": "paused", "next_fire_at": iso(60)}, "paused: nothing fires until resumed"),
        ({"status": "completed", "next_fire_at": None}, "ended (completed)"),
        ({"status": "active", "next_fire_at": None}, "no run ahead"),
        ({"status": "active", "next_fire_at": iso(-2)}, "due now"),
        ({"status": "active", "next_fire_at": iso(3 * 86400 + 5)}, "(in 3 d)"),
        ({"status": "active", "next_fire_at": iso(86400)}, "(in 24 h)"),
    ],
)
def test_countdown_without_a_clock(job, text, utc_here):
    shown = render.countdown_html(job, NOW, "u")
    assert text in shown
    assert "@keyframes" not in shown


def test_job_text_is_escaped():
    job = {"id": "j1", "name": "<script>x</script>", "status": "active", "description": "a&b"}
    header = render.job_header_html(job)
    assert "<script>" not in header
    assert "&lt;script&gt;" in header
    assert "a&amp;b" in header


def test_run_titles_say_outcome_duration_and_trigger():
    run = {"status": "failed", "started_at": iso(0), "duration": 1.5, "trigger": "manual"}
    assert render.run_title(run, timezone.utc, NOW) == "✗ 12:00:00 UTC failed in 1.5 s (manual)"
    running = {"status": "running", "started_at": iso(0), "trigger": "schedule"}
    assert render.run_title(running, timezone.utc, NOW) == "▶ 12:00:00 UTC running"
    header = render.run_header_html({**run, "id": "r1", "error": "boom <x>"}, timezone.utc, NOW)
    assert 'data-status="failed"' in header
    assert "boom &lt;x&gt;" in header
    assert render.run_header_html(None, timezone.utc, NOW).endswith("no run yet</div>")


def test_cards_show_the_time_limit_and_timed_out_runs():
    job = {
        "run_count": 2,
        "failure_count": 1,
        "last_status": "timed_out",
        "policies": {"timeout": 30},
    }
    counters = render.counters_html(job)
    assert "time limit 30 s" in counters
    assert render.RUN_COLOURS["timed_out"] in counters
    run = {"status": "timed_out", "started_at": iso(0), "duration": 30.2, "trigger": "schedule"}
    assert render.run_title(run, timezone.utc, NOW).startswith("⧗ 12:00:00 UTC timed_out in 30 s")
    assert "time limit" not in render.counters_html({**job, "policies": {"timeout": None}})


def test_cards_show_the_attempt_of_a_retried_run_and_a_pending_retry():
    job = {"run_count": 1, "policies": {"retries": {"max": 2, "backoff": 5.0}}}
    assert render.attempts_of(job) == 3
    assert render.attempts_of({"policies": {"retries": None}}) is None
    # Seconds as the time limit shows them: "5", not the JSON float's "5.0".
    assert "retries 2 (backoff 5 s)" in render.counters_html(job)
    halves = {"policies": {"retries": {"max": 1, "backoff": 2.5}}}
    assert "retries 1 (backoff 2.5 s)" in render.counters_html(halves)
    assert "retries" not in render.counters_html({"policies": {"retries": None}})
    failed = {
        "status": "failed",
        "started_at": iso(0),
        "duration": 1.0,
        "trigger": "schedule",
        "attempt": 2,
        "retry_at": iso(10),
    }
    title = render.run_title(failed, timezone.utc, NOW, 3)
    assert title == "✗ 12:00:00 UTC failed in 1.0 s · attempt 2/3 · retry at 12:00:10 UTC"
    header = render.run_header_html(failed, timezone.utc, NOW, 3)
    assert "attempt 2/3" in header
    # Without the job's policy, a retry still says which attempt it is; a first run says nothing.
    assert render.run_title({**failed, "retry_at": None}, timezone.utc, NOW).endswith("· attempt 2")
    first = {**failed, "attempt": 1, "retry_at": None}
    assert "attempt" not in render.run_title(first, timezone.utc, NOW)


def test_sparkline_scales_the_values():
    assert render.sparkline_svg([1.0]) == ""
    svg = render.sparkline_svg([3.0, 5.0, 4.0], width=108, height=36)
    points = re.search(r'points="([^"]+)"', svg)
    assert points is not None
    assert points.group(1) == "4.0,32.0 54.0,4.0 104.0,18.0"
    assert "min 3, max 5, last 4" in svg
    flat = render.sparkline_svg([2.0, 2.0])
    assert "min 2, max 2" in flat


def test_watcher_results_newest_first_with_their_numbers():
    checks = [
        {"checked_at": iso(20), "success": True, "result": {"data": {"content": "7\n"}}},
        {"checked_at": iso(10), "success": False, "result": {"error": "gone"}, "notified": True},
        {"checked_at": iso(0), "success": True, "result": {"data": 3}},
    ]
    entries = [render.check_entry(check, timezone.utc, NOW) for check in checks]
    assert entries[0] == ("✓ 12:00:20 UTC", "7", 7.0)
    assert entries[1] == ("✗ 12:00:10 UTC notified", "gone", None)
    shown = render.results_html(entries)
    assert "min 3, max 7, last 7" in shown
    assert shown.index("12:00:20") < shown.index("12:00:10")
    no_value = {"success": True, "result": {"data": {"size": 9}}}
    assert render.check_entry(no_value, timezone.utc, NOW)[1:] == ("size=9", None)
    assert render.results_html([]) == '<div class="jupyter-recall-results">no results yet</div>'
    run = {"status": "succeeded", "output": "x\n42\n", "started_at": iso(0), "duration": 0.1}
    assert render.run_entry(run, timezone.utc, NOW)[1:] == ("42", 42.0)


def test_timeline_places_runs_of_the_window_on_their_jobs_line():
    rows = [("a", "first"), ("b", "second")]
    runs = [
        {"id": "r1", "job_id": "a", "status": "succeeded", "started_at": iso(-1800)},
        {"id": "r2", "job_id": "b", "status": "failed", "started_at": iso(-60)},
        {"id": "r3", "job_id": "a", "status": "failed", "started_at": iso(-7200)},
        {"id": "r4", "job_id": "zzz", "status": "failed", "started_at": iso(-60)},
    ]
    svg = render.timeline_svg(rows, runs, start=NOW - timedelta(hours=1), end=NOW, width=640)
    dots = re.findall(r'data-status="(\w+)" cx="([\d.]+)" cy="(\d+)"', svg)
    assert dots == [("succeeded", "408.0", "25"), ("failed", "628.4", "43")]
    assert render.RUN_COLOURS["failed"] in svg
    assert render.timeline_svg([], runs, start=NOW, end=NOW).endswith("no jobs</div>")


def test_progress_counts_what_is_done_from_any_thread():
    card = ProgressCard("run_parallel: 40 actions", [f"#{i}" for i in range(40)])
    assert (card.bar.value, card.bar.max, card.count.value) == (0, 40, "0/40")
    threads = [
        threading.Thread(target=card.set_status, args=(f"#{i}", "succeeded", f"result {i}"))
        for i in range(30)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    card.set_status("#30", "running")
    card.set_status("#31", "failed", "HTTP 500")
    assert card.done == 31
    assert (card.bar.value, card.count.value, card.bar.bar_style) == (31, "31/40", "danger")
    assert "HTTP 500" in card.table.value
    card.log("first\n")
    card.log("second\n")
    assert card.output.outputs == (
        {"output_type": "stream", "name": "stdout", "text": "first\nsecond\n"},
    )
    card.finish("failed", "1 of 40 failed")
    assert "1 of 40 failed" in card.header.value
    assert "#31: failed HTTP 500" in card.summary()


def test_progress_cancel_calls_back_once_and_not_after_the_end():
    cancelled: list[bool] = []
    card = ProgressCard("task", ["shell.run"], on_cancel=lambda: cancelled.append(True))
    assert card.cancel_button.layout.display != "none"
    card.cancel_button.click()
    assert cancelled == [True]
    assert card.cancel_button.disabled
    card.finish("cancelled")
    assert card.cancel_button.layout.display == "none"
    card.cancel()
    assert cancelled == [True]
    assert ProgressCard("no cancel").cancel_button.layout.display == "none"


def test_approval_card_answers_once_and_shows_the_outcome():
    answers: list[bool] = []
    card = ApprovalCard("shell.run(command='ls')", answers.append)
    bundle = card._repr_mimebundle_()
    assert bundle["text/plain"] == "[APPROVAL NEEDED] shell.run(command='ls')"
    assert "application/vnd.jupyter.widget-view+json" in bundle
    card.approve.click()
    assert answers == [True]
    assert card.approve.disabled
    assert card.deny.disabled
    card.settle("approved")
    card.deny.click()
    assert answers == [True]
    assert card.buttons.layout.display == "none"
    assert ">approved<" in card.status.value


def test_a_job_paused_after_its_failures_shows_why_and_its_count():
    reason = "paused after 2 consecutive failed occurrences; last error: ValueError: <b>"
    job = {
        "status": "paused",
        "paused_reason": reason,
        "failure_streak": 2,
        "policies": {"pause_after_failures": 2},
        "next_fire_at": iso(60),
    }
    shown = render.countdown_html(job, NOW, "u")
    assert "paused after 2 consecutive failed occurrences" in shown
    assert "ValueError: &lt;b&gt;" in shown  # escaped
    assert "failures in a row 2/2" in render.counters_html(job)
    by_hand = render.countdown_html({**job, "paused_reason": None}, NOW, "u")
    assert "paused: nothing fires until resumed" in by_hand
    assert "failures in a row" not in render.counters_html({"policies": {}})
