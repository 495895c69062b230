"""policies.retries on a real server: attempts of one occurrence in a live kernel, retries
exhausted, and a retry pending while the server crashes fires once after its restart."""

from __future__ import annotations

import asyncio
import signal
import time
from datetime import datetime

import pytest

from tests.server import test_live_jobs
from tests.server.live_server import LiveServer
from tests.server.rest import call
from tests.server.test_live_jobs import NB

user = test_live_jobs.user
"""A user's notebook session with its kernel (the fixture of the live-job tests)."""

FLAKY = """\
try:
    _recall_attempts += 1
except NameError:
    _recall_attempts = 1
if _recall_attempts <= 2:
    raise RuntimeError(f"attempt {_recall_attempts} fails")
print(f"attempt {_recall_attempts} works")
"""
"""Code failing in its first two runs in a kernel (the namespace is the kernel's: it counts)."""


async def runs_when(jp_fetch, job_id, done, timeout=60.0):
    """The job's runs, oldest attempt first, once ``done(runs)`` holds."""
    deadline = time.monotonic() + timeout
    while True:
        runs = (await call(jp_fetch, "GET", f"api/recall/jobs/{job_id}/runs"))["runs"]
        runs.sort(key=lambda run: (run["scheduled_for"], run["attempt"]))
        if done(runs):
            return runs
        assert time.monotonic() < deadline, runs
        await asyncio.sleep(0.1)


def all_final(count):
    return lambda runs: len(runs) >= count and all(run["status"] != "running" for run in runs)


async def test_a_job_failing_twice_then_succeeding_has_three_runs_of_one_occurrence(jp_fetch, user):
    body = {
        "when": "now",
        "action": {"type": "code", "code": FLAKY},
        "target": {"type": "kernel", "path": NB},
        "policies": {"retries": {"max": 2, "backoff": 0.2, "factor": 2}},
    }
    job = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201)
    assert job["policies"]["retries"] == {
        "max": 2,
        "backoff": 0.2,
        "factor": 2.0,
        "jitter": 0.0,
        "on": ["failed", "timed_out", "interrupted"],
    }
    runs = await runs_when(jp_fetch, job["id"], all_final(3))
    assert [(run["attempt"], run["status"]) for run in runs] == [
        (1, "failed"),
        (2, "failed"),
        (3, "succeeded"),
    ]
    assert len({run["scheduled_for"] for run in runs}) == 1
    assert "attempt 1 fails" in runs[0]["error"]
    assert runs[2]["output"] == "attempt 3 works\n"
    assert all(run["retry_at"] is None for run in runs)
    # Each retry waited its backoff after the previous attempt: 0.2 s, then 0.4 s.
    for before, after, backoff in ((runs[0], runs[1], 0.2), (runs[1], runs[2], 0.4)):
        assert after["created_at"] >= before["finished_at"], (before, after)
        assert _seconds(before["finished_at"], after["created_at"]) >= backoff - 0.01
    settled = await call(jp_fetch, "GET", f"api/recall/jobs/{job['id']}")
    assert (settled["status"], settled["run_count"], settled["failure_count"]) == (
        "completed",
        1,
        0,
    )


def _seconds(earlier: str, later: str) -> float:
    return (datetime.fromisoformat(later) - datetime.fromisoformat(earlier)).total_seconds()


async def test_retries_exhausted_leave_the_occurrence_failed(jp_fetch, user):
    body = {
        "when": "now",
        "action": {"type": "code", "code": "raise ValueError('never works')"},
        "target": {"type": "kernel", "path": NB},
        "policies": {"retries": {"max": 1, "backoff": 0.1}},
    }
    job = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201)
    runs = await runs_when(jp_fetch, job["id"], all_final(2))
    assert [(run["attempt"], run["status"]) for run in runs] == [(1, "failed"), (2, "failed")]
    settled = await call(jp_fetch, "GET", f"api/recall/jobs/{job['id']}")
    assert (settled["status"], settled["failure_count"]) == ("failed", 1)
    assert "never works" in settled["last_error"]


async def test_a_bare_count_is_max_with_the_defaults(jp_fetch):
    body = {"when": "in 1h", "action": {"type": "notification", "message": "x"}}
    job = await call(
        jp_fetch, "POST", "api/recall/jobs", {**body, "policies": {"retries": 3}}, expect=201
    )
    assert job["policies"]["retries"] == {
        "max": 3,
        "backoff": 10.0,
        "factor": 2.0,
        "jitter": 0.0,
        "on": ["failed", "timed_out", "interrupted"],
    }
    cleared = await call(
        jp_fetch, "PATCH", f"api/recall/jobs/{job['id']}", {"policies": {"retries": None}}
    )
    assert cleared["policies"]["retries"] is None


@pytest.fixture
def long_sleep(recall_config):
    """The engine re-reads the clock only every 10 minutes while nothing is due."""
    recall_config["max_sleep"] = 600.0
    return recall_config


async def test_resuming_fires_a_retry_due_during_the_pause_at_once(long_sleep, jp_fetch):
    """The loop sleeps towards another job an hour ahead (at most ``max_sleep``, 10 minutes):
    the retry whose instant passed during the pause fires because resuming wakes the loop."""
    notify = {"type": "notification", "message": "later"}
    await call(jp_fetch, "POST", "api/recall/jobs", {"when": "in 1h", "action": notify}, expect=201)
    body = {
        "when": "now",
        "action": {"type": "tool", "name": "filesystem.read", "params": {"path": "gone.txt"}},
        "policies": {"retries": {"max": 1, "backoff": 5}},
    }
    job = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201)
    (first,) = await runs_when(jp_fetch, job["id"], lambda runs: runs and runs[0]["retry_at"])
    await call(jp_fetch, "POST", f"api/recall/jobs/{job['id']}/pause")
    retry_at = datetime.fromisoformat(first["retry_at"])
    await asyncio.sleep(max(0.0, (retry_at - datetime.now(retry_at.tzinfo)).total_seconds()) + 1)
    runs = (await call(jp_fetch, "GET", f"api/recall/jobs/{job['id']}/runs"))["runs"]
    assert [run["attempt"] for run in runs] == [1]
    await call(jp_fetch, "POST", f"api/recall/jobs/{job['id']}/resume")
    # Well before the loop's next pass on its own (10 minutes), on a loaded machine too.
    runs = await runs_when(jp_fetch, job["id"], all_final(2), timeout=60)
    assert [(run["attempt"], run["status"]) for run in runs] == [(1, "failed"), (2, "failed")]


def test_a_retry_pending_when_the_server_crashes_fires_once_after_the_restart(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    tried, executions = tmp_path / "tried", tmp_path / "executions"
    code = (
        "import pathlib\n"
        f"with open({str(executions)!r}, 'a') as log: log.write('ran\\n')\n"
        f"marker = pathlib.Path({str(tried)!r})\n"
        "if not marker.exists():\n"
        "    marker.write_text('1')\n"
        "    raise RuntimeError('the first attempt fails')\n"
        "print('the retry works', flush=True)\n"
    )
    body = {
        "when": "now",
        "action": {"type": "code", "code": code},
        "target": {"type": "headless", "kernel_name": "python3"},
        "policies": {"retries": {"max": 2, "backoff": 8}},
    }
    server = LiveServer(root, tmp_path / "recall.sqlite").start()
    try:
        job = server.request("POST", "/api/recall/jobs", body)

        def pending():
            runs = server.request("GET", f"/api/recall/jobs/{job['id']}/runs")["runs"]
            return runs if runs and runs[0]["retry_at"] else None

        (first,) = server.wait_for(pending, timeout=90)
    finally:
        server.stop(signal.SIGKILL)
    assert first["status"] == "failed"

    server = LiveServer(root, tmp_path / "recall.sqlite", port=server.port).start()
    try:

        def retried():
            runs = server.request("GET", f"/api/recall/jobs/{job['id']}/runs")["runs"]
            final = len(runs) == 2 and all(run["status"] != "running" for run in runs)
            return sorted(runs, key=lambda run: run["attempt"]) if final else None

        runs = server.wait_for(retried, timeout=120)
        assert [(run["attempt"], run["status"]) for run in runs] == [
            (1, "failed"),
            (2, "succeeded"),
        ]
        assert runs[1]["scheduled_for"] == first["scheduled_for"]
        # Not before its instant, set before the crash.
        assert runs[1]["created_at"] >= first["retry_at"]
        assert "the retry works" in runs[1]["output"]

        def completed():
            found = server.request("GET", f"/api/recall/jobs/{job['id']}")
            return found if found["status"] == "completed" else None

        assert server.wait_for(completed)["failure_count"] == 0
    finally:
        server.stop()
    # Exactly once: two executions in all (the failed attempt and its retry).
    assert executions.read_text() == "ran\nran\n"
