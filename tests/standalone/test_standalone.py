"""The standalone scheduler and a server with run_scheduler=False on one SQLite file.

Jobs are created over the server's REST; the server is then stopped and the scheduler, a real
`jupyter recall scheduler` process, fires and executes them; the restarted server shows the runs.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

from jupyter_recall.store.urls import open_store, sqlite_url
from tests.engine.receivers import Hook, http_receiver
from tests.server.live_server import TOKEN, LiveServer
from tests.standalone.scheduler_process import SchedulerProcess

pytestmark = pytest.mark.slow

NOT_FIRING = ("--RecallApp.run_scheduler=False",)


@pytest.fixture
def hook() -> Iterator[Hook]:
    with http_receiver() as receiver:
        yield receiver


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "root"
    path.mkdir()
    return path


def final_runs(server: LiveServer, job_id: str) -> list[dict]:
    runs = server.request("GET", f"/api/recall/jobs/{job_id}/runs")["runs"]
    return [run for run in runs if run["status"] != "running"]


def create_then_stop(server: LiveServer, body: dict) -> dict:
    """Create a job over REST, then stop the server before it is due."""
    try:
        job = server.request("POST", "/api/recall/jobs", body)
    finally:
        server.stop()
    return job


def history_after_restart(server: LiveServer, job_id: str) -> list[dict]:
    server.start()
    try:
        return server.wait_for(lambda: final_runs(server, job_id), timeout=30)
    finally:
        server.stop()


def wait_until(predicate, timeout: float = 45.0):
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        assert time.monotonic() < deadline, f"condition not met in {timeout} s"
        time.sleep(0.2)
    return value


def engine_of(db: Path, run_id: str) -> str:
    """Which engine executed a run (not in the REST answer)."""
    store = open_store(sqlite_url(str(db)))
    try:
        return store.get_run(run_id, owner=None).engine_id or ""
    finally:
        store.close()


def headless_code(code: str) -> dict:
    return {
        "when": "in 4 seconds",
        "action": {"type": "code", "code": code},
        "target": {"type": "headless", "kernel_name": "python3"},
    }


def test_a_headless_job_runs_while_its_server_is_down(tmp_path, root):
    db = tmp_path / "recall.sqlite"
    scheduler = SchedulerProcess(root, db).start()
    try:
        server = LiveServer(root, db, args=NOT_FIRING).start()
        marker = root / "ran.txt"
        job = create_then_stop(server, headless_code(f"open({str(marker)!r}, 'w').write('ran')"))
        assert wait_until(marker.exists)
        (run,) = history_after_restart(server, job["id"])
    finally:
        scheduler.stop()
    assert run["status"] == "succeeded"
    assert engine_of(db, run["id"]).startswith("scheduler@")
    assert marker.read_text() == "ran"


def test_a_notification_job_reaches_its_webhook_while_the_server_is_down(tmp_path, root, hook):
    db = tmp_path / "recall.sqlite"
    channels = {"ops": {"type": "webhook", "url": hook.url}}
    scheduler = SchedulerProcess(root, db, config={"notification_channels": channels}).start()
    try:
        server = LiveServer(root, db, args=NOT_FIRING).start()
        body = {
            "when": "in 4 seconds",
            "action": {"type": "notification", "message": "backup done", "channel": "ops"},
        }
        job = create_then_stop(server, body)
        (received,) = hook.wait(1, timeout=45)
        (run,) = history_after_restart(server, job["id"])
    finally:
        scheduler.stop()
    assert "backup done" in json.dumps(received)
    assert run["status"] == "succeeded"


def test_a_notebook_job_runs_while_the_server_is_down(tmp_path, root):
    db = tmp_path / "recall.sqlite"
    marker = root / "from_notebook.txt"
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(f"open({str(marker)!r}, 'w').write('nb')")]
    nbformat.write(notebook, root / "report.ipynb")
    scheduler = SchedulerProcess(root, db).start()
    try:
        server = LiveServer(root, db, args=NOT_FIRING).start()
        body = {
            "when": "in 4 seconds",
            "action": {"type": "notebook", "path": "report.ipynb"},
            "target": {"type": "headless"},
        }
        job = create_then_stop(server, body)
        assert wait_until(marker.exists)
        (run,) = history_after_restart(server, job["id"])
    finally:
        scheduler.stop()
    assert run["status"] == "succeeded"
    assert marker.read_text() == "nb"


def stream_events(
    server: LiveServer, into: list[str], stop: threading.Event, query: str = ""
) -> None:
    """Read the server's /api/recall/events stream line by line until ``stop``."""
    request = urllib.request.Request(
        server.url + "/api/recall/events" + query, headers={"Authorization": f"token {TOKEN}"}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        for line in response:
            into.append(line.decode())
            if stop.is_set():
                return


def test_a_non_firing_server_streams_the_runs_the_scheduler_executes(tmp_path, root):
    db = tmp_path / "recall.sqlite"
    scheduler = SchedulerProcess(root, db).start()
    server = LiveServer(root, db, args=NOT_FIRING).start()
    lines: list[str] = []
    stop = threading.Event()
    reader = threading.Thread(target=stream_events, args=(server, lines, stop), daemon=True)
    reader.start()
    try:
        wait_until(lambda: any("event: open" in line for line in lines), timeout=20)
        body = {"when": "in 3 seconds", "action": {"type": "notification", "message": "hello"}}
        job = server.request("POST", "/api/recall/jobs", body)

        def finished() -> list[dict]:
            documents = [json.loads(line[5:]) for line in lines if line.startswith("data: {")]
            return [
                d
                for d in documents
                if d.get("type") == "run.finished" and d["run"]["job_id"] == job["id"]
            ]

        (event,) = wait_until(finished, timeout=30)
    finally:
        stop.set()
        server.stop()
        scheduler.stop()
    assert event["run"]["status"] == "succeeded"
    assert engine_of(db, event["run"]["id"]).startswith("scheduler@")


def test_the_scheduler_deletes_executed_copies_with_their_pruned_runs(tmp_path, root):
    db = tmp_path / "recall.sqlite"
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("print('report')")]
    nbformat.write(notebook, root / "report.ipynb")
    scheduler = SchedulerProcess(root, db, config={"prune_interval": 1}).start()
    server = LiveServer(root, db, args=NOT_FIRING).start()
    try:
        body = {
            "when": "every 2 seconds",
            "action": {"type": "notebook", "path": "report.ipynb"},
            "policies": {"keep_runs": 1},
        }
        job = server.request("POST", "/api/recall/jobs", body)

        def copies_of_kept_runs_only() -> bool:
            fired = server.request("GET", f"/api/recall/jobs/{job['id']}")["run_count"]
            runs = server.request("GET", f"/api/recall/jobs/{job['id']}/runs")["runs"]
            kept = {f"report.recall-{run['id']}.ipynb" for run in runs}
            copies = {path.name for path in root.glob("report.recall-*.ipynb")}
            return fired >= 4 and bool(copies) and copies <= kept

        assert wait_until(copies_of_kept_runs_only, timeout=60)
        server.request("DELETE", f"/api/recall/jobs/{job['id']}")
    finally:
        server.stop()
        scheduler.stop()


def test_a_notification_the_scheduler_buffers_reaches_the_listening_kernel_live(tmp_path, root):
    """The scheduler hosts no kernel's stream: what it sends to a session is buffered in the
    store, and the server where that session's kernel listens delivers it on the stream
    (not only at the kernel's next reconnection)."""
    db = tmp_path / "recall.sqlite"
    scheduler = SchedulerProcess(root, db).start()
    server = LiveServer(root, db, args=NOT_FIRING)
    lines: list[str] = []
    stop = threading.Event()
    try:
        server.start()
        listening = threading.Thread(
            target=stream_events, args=(server, lines, stop, "?session=nb.ipynb"), daemon=True
        )
        listening.start()
        server.wait_for(lambda: any("event: open" in line for line in lines), timeout=30)
        note = {"type": "notification", "message": "built", "channel": "session"}
        server.request(
            "POST",
            "/api/recall/jobs",
            {"when": "in 2 seconds", "action": note, "session": "nb.ipynb"},
        )
        delivered = wait_until(
            lambda: [
                line
                for line in lines
                if line.startswith("data: ")
                and '"message": "built"' in line
                and '"delivered_to": "session"' in line
            ],
            timeout=45,
        )
    finally:
        stop.set()
        server.stop()
        scheduler.stop()
    assert len(delivered) == 1
