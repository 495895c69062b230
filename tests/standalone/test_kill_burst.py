"""Both processes killed with SIGKILL in the middle of a burst, then restarted: every job ends
with exactly one run (one SQLite file, a real scheduler and a real non-firing server)."""

from __future__ import annotations

import signal
import sqlite3
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.server.live_server import LiveServer
from tests.standalone.scheduler_process import SchedulerProcess
from tests.standalone.test_standalone import NOT_FIRING, wait_until

pytestmark = pytest.mark.slow

JOBS = 200
BURST_START = 6.0
"""Seconds from creation to the first job's instant (the server's REST takes its time)."""
BURST_SECONDS = 4.0


def runs_per_job(db: Path) -> dict[str, list[str]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT job_id, status FROM runs").fetchall()
    found: dict[str, list[str]] = {}
    for job_id, status in rows:
        found.setdefault(job_id, []).append(status)
    return found


def burst(start: datetime) -> dict:
    step = BURST_SECONDS / JOBS
    return {
        "jobs": [
            {
                "when": (start + timedelta(seconds=i * step)).isoformat(timespec="milliseconds"),
                "action": {"type": "notification", "message": f"job {i}"},
            }
            for i in range(JOBS)
        ]
    }


def test_both_processes_killed_mid_burst_leave_one_run_per_job(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    db = tmp_path / "recall.sqlite"
    scheduler = SchedulerProcess(root, db).start()
    server = LiveServer(root, db, args=NOT_FIRING)
    try:
        server.start()
        start = datetime.now(UTC) + timedelta(seconds=BURST_START)
        created = server.request("POST", "/api/recall/jobs", burst(start))["jobs"]
        job_ids = {job["id"] for job in created}
        # Mid-burst: some jobs have run, not all.
        wait_until(lambda: len(runs_per_job(db)) >= JOBS // 4, timeout=40)
        fired_before = len(runs_per_job(db))
    finally:
        scheduler.stop(signal.SIGKILL)
        if server.process is not None:
            server.stop(signal.SIGKILL)
    assert fired_before < JOBS, "the burst ended before the kill: nothing was tested"

    scheduler = SchedulerProcess(root, db).start()
    server.start()
    try:

        def settled() -> bool:
            runs = runs_per_job(db)
            return set(runs) == job_ids and all("running" not in s for s in runs.values())

        wait_until(settled, timeout=45)
        time.sleep(2)  # a duplicate would come now, if ever
        final = runs_per_job(db)
        listed = server.request("GET", f"/api/recall/jobs/{created[0]['id']}/runs")["runs"]
    finally:
        server.stop()
        scheduler.stop()
    duplicated = {job: statuses for job, statuses in final.items() if len(statuses) != 1}
    assert not duplicated
    assert set(final) == job_ids
    assert len(listed) == 1
