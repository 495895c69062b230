"""Live-kernel jobs fired by the standalone scheduler: taken by the server hosting the kernel,
else their on_missing_kernel policy after the grace period (one SQLite file, real processes)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import nbformat
import pytest

from tests.server.live_server import LiveServer
from tests.standalone.scheduler_process import SchedulerProcess
from tests.standalone.test_standalone import (
    NOT_FIRING,
    create_then_stop,
    engine_of,
    history_after_restart,
    wait_until,
)

pytestmark = pytest.mark.slow

GRACE = 3.0


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "root"
    path.mkdir()
    nbformat.write(nbformat.v4.new_notebook(), path / "live.ipynb")
    return path


def live_job(code: str, policy: str) -> dict:
    return {
        "when": "in 4 seconds",
        "action": {"type": "code", "code": code},
        "target": {"type": "kernel", "path": "live.ipynb"},
        "options": {"on_missing_kernel": policy},
    }


def finished_runs(server: LiveServer, job_id: str) -> list[dict]:
    """The job's runs once one has ended (waited for)."""
    return list(
        server.wait_for(
            lambda: [
                run
                for run in server.request("GET", f"/api/recall/jobs/{job_id}/runs")["runs"]
                if run["status"] != "running"
            ],
            timeout=30,
        )
    )


@pytest.mark.parametrize(
    ("policy", "status", "reason"),
    [("fail", "failed", "no running kernel for notebook 'live.ipynb'"), ("skip", "skipped", "")],
)
def test_a_live_kernel_job_due_while_the_server_is_down_follows_its_policy(
    tmp_path, root, policy, status, reason
):
    db = tmp_path / "recall.sqlite"
    scheduler = SchedulerProcess(root, db, config={"live_kernel_grace": GRACE}).start()
    try:
        server = LiveServer(root, db, args=NOT_FIRING).start()
        marker = root / "never.txt"
        job = create_then_stop(server, live_job(f"open({str(marker)!r}, 'w')", policy))
        (run,) = history_after_restart(server, job["id"])
    finally:
        scheduler.stop()
    assert run["status"] == status
    assert reason in (run["error"] or "")
    assert not marker.exists()


@contextmanager
def hosting_the_kernel(tmp_path: Path, root: Path) -> Iterator[tuple[LiveServer, Path]]:
    """A scheduler and a server that fires nothing on one store (yielded with the store's
    path), the server hosting live.ipynb's kernel."""
    db = tmp_path / "recall.sqlite"
    scheduler = SchedulerProcess(root, db, config={"live_kernel_grace": 20.0}).start()
    server = LiveServer(root, db, args=(*NOT_FIRING, "--RecallApp.live_kernel_grace=20"))
    try:
        server.start()
        session = {"path": "live.ipynb", "type": "notebook", "kernel": {"name": "python3"}}
        server.request("POST", "/api/sessions", session)
        yield server, db
    finally:
        server.stop()
        scheduler.stop()


def test_the_server_hosting_the_kernel_takes_the_run(tmp_path, root):
    with hosting_the_kernel(tmp_path, root) as (server, db):
        marker = root / "live.txt"
        code = f"import os\nopen({str(marker)!r}, 'w').write(str(os.getpid()))"
        job = server.request("POST", "/api/recall/jobs", live_job(code, "fail"))
        assert wait_until(marker.exists)
        runs = finished_runs(server, job["id"])
    (run,) = runs
    assert run["status"] == "succeeded"
    assert engine_of(db, run["id"]).startswith("server@")


def test_the_start_policy_runs_the_notebook_in_a_kernel_the_scheduler_starts(tmp_path, root):
    db = tmp_path / "recall.sqlite"
    scheduler = SchedulerProcess(root, db, config={"live_kernel_grace": GRACE}).start()
    try:
        server = LiveServer(root, db, args=NOT_FIRING).start()
        marker = root / "started.txt"
        code = f"import os\nopen({str(marker)!r}, 'w').write(os.getcwd())"
        job = create_then_stop(server, live_job(code, "start"))
        assert wait_until(marker.exists)
        (run,) = history_after_restart(server, job["id"])
    finally:
        scheduler.stop()
    assert run["status"] == "succeeded"
    assert engine_of(db, run["id"]).startswith("scheduler@")
    assert marker.read_text() == str(root)


def test_a_watcher_checking_in_a_notebooks_kernel_is_checked_by_the_server_hosting_it(
    tmp_path, root
):
    with hosting_the_kernel(tmp_path, root) as (server, db):
        (root / "watched.txt").write_text("seen from the kernel")
        watcher = server.request(
            "POST",
            "/api/recall/watchers",
            {
                "tool": "filesystem.read",
                "params": {"path": "watched.txt"},
                "interval": 5,
                "notify_when": "on_change",
                "target": {"type": "kernel", "path": "live.ipynb"},
            },
        )
        path = f"/api/recall/watchers/{watcher['watcher_id']}?last_n=5"
        # The first check runs where the watcher was created; the next ones the scheduler fires.
        status = server.wait_for(
            lambda: (found := server.request("GET", path))["checks"] >= 2 and found, timeout=60
        )
        runs = server.request("GET", f"/api/recall/jobs/{watcher['watcher_id']}/runs")["runs"]
    assert [check["success"] for check in status["history"][:2]] == [True, True], status
    assert "seen from the kernel" in str(status["history"][0]["result"])
    assert status["notifications"] == 1, "on_change: the first check only"
    fired = [run for run in runs if run["trigger"] == "schedule" and run["status"] != "running"]
    assert fired, runs
    assert all(run["status"] == "succeeded" for run in fired), fired
    assert all(engine_of(db, run["id"]).startswith("server@") for run in fired)


def test_an_approve_tool_job_waits_in_the_inbox_and_runs_once_approved(tmp_path, root):
    db = tmp_path / "recall.sqlite"
    policies = {"tool_policies": {"filesystem.write": "approve"}}
    scheduler = SchedulerProcess(root, db, config=policies).start()
    server = LiveServer(root, db, args=NOT_FIRING)
    try:
        server.start()
        params = {"path": "approved.txt", "content": "written once approved"}
        job = server.request(
            "POST",
            "/api/recall/jobs",
            {
                "when": "in 2 seconds",
                "action": {"type": "tool", "name": "filesystem.write", "params": params},
            },
        )
        pending = server.wait_for(
            lambda: server.request("GET", "/api/recall/approvals?status=pending")["approvals"],
            timeout=45,
        )
        (record,) = pending
        assert record["asked_by"].startswith("run:")
        assert not (root / "approved.txt").exists()
        server.request("POST", f"/api/recall/approvals/{record['id']}", {"decision": "approve"})
        assert wait_until((root / "approved.txt").exists)
        runs = finished_runs(server, job["id"])
    finally:
        server.stop()
        scheduler.stop()
    (run,) = runs
    assert run["status"] == "succeeded", run
    assert engine_of(db, run["id"]).startswith("scheduler@")
    assert (root / "approved.txt").read_text() == "written once approved"
