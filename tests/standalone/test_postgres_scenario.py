"""Two servers with run_scheduler=False and one standalone scheduler on one PostgreSQL database.

Real processes throughout: two `jupyter server` processes and a `jupyter recall scheduler`, on a
new database of the session's throwaway PostgreSQL cluster (tests/pg_cluster.py).
"""

from __future__ import annotations

import json
import signal
import socket
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import nbformat
import psycopg
import pytest

from jupyter_recall.store.urls import open_store
from tests.server.live_server import LiveServer
from tests.standalone.scheduler_process import SchedulerProcess
from tests.standalone.test_kill_burst import JOBS, burst
from tests.standalone.test_standalone import (
    NOT_FIRING,
    final_runs,
    headless_code,
    stream_events,
    wait_until,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

GRACE = 20.0


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "root"
    path.mkdir()
    nbformat.write(nbformat.v4.new_notebook(), path / "live.ipynb")
    return path


def server_on(root: Path, db_url: str) -> LiveServer:
    """A non-firing server on ``db_url`` (the SQLite path it is also given is never opened)."""
    args = (*NOT_FIRING, f"--RecallApp.db_url={db_url}", f"--RecallApp.live_kernel_grace={GRACE}")
    return LiveServer(root, root.parent / "unused.sqlite", args=args)


def scheduler_on(root: Path, db_url: str) -> SchedulerProcess:
    config = {"live_kernel_grace": GRACE}
    return SchedulerProcess(root, root.parent / "unused.sqlite", config=config, db_url=db_url)


def engine_of(db_url: str, run_id: str) -> str:
    store = open_store(db_url)
    try:
        return store.get_run(run_id, owner=None).engine_id or ""
    finally:
        store.close()


def runs_per_job(db_url: str) -> dict[str, list[str]]:
    with psycopg.connect(db_url) as conn:
        rows = conn.execute("SELECT job_id, status FROM runs").fetchall()
    found: dict[str, list[str]] = {}
    for job_id, status in rows:
        found.setdefault(job_id, []).append(status)
    return found


class EventReader:
    """The lines of a server's /api/recall/events stream, read in a thread."""

    def __init__(self, server: LiveServer) -> None:
        self.lines: list[str] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(
            target=stream_events, args=(server, self.lines, self.stop), daemon=True
        )
        self.thread.start()
        wait_until(lambda: any("event: open" in line for line in self.lines), timeout=20)

    def finished(self, job_id: str) -> list[dict]:
        documents = [json.loads(line[5:]) for line in self.lines if line.startswith("data: {")]
        return [
            d for d in documents if d.get("type") == "run.finished" and d["run"]["job_id"] == job_id
        ]


@pytest.fixture
def processes(root: Path, postgres_db_url: str) -> Iterator[list]:
    """Started processes, each stopped after the test even when it fails."""
    started: list = []
    yield started
    for process in reversed(started):
        if process.process is not None:
            process.stop(signal.SIGKILL)


def test_two_servers_and_a_scheduler_share_one_postgres_database(root, postgres_db_url, processes):
    scheduler = scheduler_on(root, postgres_db_url)
    processes.append(scheduler.start())
    server_a = server_on(root, postgres_db_url)
    server_b = server_on(root, postgres_db_url)
    processes += [server_a, server_b]

    # A headless job created over A's REST, due while both servers are down.
    server_a.start()
    marker = root / "ran.txt"
    job = server_a.request("POST", "/api/recall/jobs", headless_code(f"open({str(marker)!r}, 'w')"))
    server_a.stop()
    assert wait_until(marker.exists, timeout=45)

    # B, which never saw the job, shows its run.
    server_b.start()
    (run,) = server_b.wait_for(lambda: final_runs(server_b, job["id"]), timeout=30)
    assert run["status"] == "succeeded"
    assert engine_of(postgres_db_url, run["id"]).startswith("scheduler@")

    # A live-kernel job for a notebook B hosts: B executes it, A's event stream sees it.
    server_a.start()
    events = EventReader(server_a)
    try:
        session = {"path": "live.ipynb", "type": "notebook", "kernel": {"name": "python3"}}
        server_b.request("POST", "/api/sessions", session)
        live = server_a.request(
            "POST",
            "/api/recall/jobs",
            {
                "when": "in 4 seconds",
                "action": {"type": "code", "code": "1 + 1"},
                "target": {"type": "kernel", "path": "live.ipynb"},
                "options": {"on_missing_kernel": "fail"},
            },
        )
        notice = server_a.request(
            "POST",
            "/api/recall/jobs",
            {"when": "in 3 seconds", "action": {"type": "notification", "message": "hello"}},
        )
        (live_event,) = wait_until(lambda: events.finished(live["id"]), timeout=45)
        (notice_event,) = wait_until(lambda: events.finished(notice["id"]), timeout=45)
    finally:
        events.stop.set()
    assert live_event["run"]["status"] == "succeeded"
    assert engine_of(postgres_db_url, live_event["run"]["id"]) == f"server@{host_of(server_b)}"
    assert notice_event["run"]["status"] == "succeeded"
    assert engine_of(postgres_db_url, notice_event["run"]["id"]).startswith("scheduler@")


def host_of(server: LiveServer) -> str:
    return f"{socket.gethostname()}:{server.port}"


def test_a_scheduler_and_a_server_killed_mid_burst_leave_one_run_per_job(
    root, postgres_db_url, processes
):
    scheduler = scheduler_on(root, postgres_db_url)
    processes.append(scheduler.start())
    server_a = server_on(root, postgres_db_url)
    server_b = server_on(root, postgres_db_url)
    processes += [server_a, server_b]
    server_a.start()
    server_b.start()
    start = datetime.now(UTC) + timedelta(seconds=6)
    created = server_a.request("POST", "/api/recall/jobs", burst(start))["jobs"]
    job_ids = {job["id"] for job in created}
    wait_until(lambda: len(runs_per_job(postgres_db_url)) >= JOBS // 4, timeout=40)
    scheduler.stop(signal.SIGKILL)
    server_a.stop(signal.SIGKILL)
    fired_before = len(runs_per_job(postgres_db_url))
    assert fired_before < JOBS, "the burst ended before the kill: nothing was tested"

    scheduler.start()
    server_a.start()

    def settled() -> bool:
        runs = runs_per_job(postgres_db_url)
        return set(runs) == job_ids and all("running" not in s for s in runs.values())

    wait_until(settled, timeout=45)
    time.sleep(2)  # a duplicate would come now, if ever
    final = runs_per_job(postgres_db_url)
    listed = server_b.request("GET", f"/api/recall/jobs/{created[-1]['id']}/runs")["runs"]
    duplicated = {job: statuses for job, statuses in final.items() if len(statuses) != 1}
    assert not duplicated
    assert set(final) == job_ids
    assert len(listed) == 1
