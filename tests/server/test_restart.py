"""Server restarts: jobs are kept; runs cut short by a stop or a crash end `interrupted`."""

from __future__ import annotations

import signal

import pytest

from tests.server.live_server import LiveServer

LONG_RUN = {
    "when": "now",
    "action": {
        "type": "code",
        "code": "import time\nprint('started', flush=True)\ntime.sleep(120)",
    },
    "target": {"type": "headless", "kernel_name": "python3"},
}
LATER = {"when": "every day at 09:00", "action": {"type": "notification", "message": "later"}}


def _running_run(server: LiveServer, job_id: str):
    runs = server.request("GET", f"/api/recall/jobs/{job_id}/runs")["runs"]
    return next((r for r in runs if r["status"] == "running" and "started" in r["output"]), None)


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGKILL], ids=["stop", "crash"])
def test_restart_keeps_jobs_and_interrupts_runs(tmp_path, stop_signal):
    root = tmp_path / "root"
    root.mkdir()
    server = LiveServer(root, tmp_path / "recall.sqlite").start()
    try:
        kept = server.request("POST", "/api/recall/jobs", LATER)
        long = server.request("POST", "/api/recall/jobs", LONG_RUN)
        run = server.wait_for(lambda: _running_run(server, long["id"]), timeout=60)
    finally:
        server.stop(stop_signal)

    server = LiveServer(root, tmp_path / "recall.sqlite", port=server.port).start()
    try:
        jobs = {j["id"]: j for j in server.request("GET", "/api/recall/jobs")["jobs"]}
        assert kept["id"] in jobs
        assert jobs[kept["id"]]["next_fire_at"] == kept["next_fire_at"]
        after = server.request("GET", f"/api/recall/runs/{run['id']}")
        assert after["status"] == "interrupted"
        assert after["finished_at"] is not None
        assert "started" in after["output"]
    finally:
        server.stop()
