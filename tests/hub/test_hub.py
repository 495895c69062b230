"""A real JupyterHub on loopback: the standalone scheduler as a Hub-managed service, the user's
server spawned with run_scheduler=False on the same store. The server is stopped through the
Hub's REST API, as the idle culler stops it; the headless job still fires; the server spawned
again shows the run."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.hub.hub_process import Hub
from tests.standalone.test_standalone import engine_of, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

USER = "alice"


def scheduler_service(db_url: str, root: Path) -> dict:
    """The documented services entry (docs/deploy.md)."""
    return {
        "name": "recall-scheduler",
        "command": [
            str(Path(sys.executable).parent / "jupyter"),
            "recall",
            "scheduler",
            f"--db-url={db_url}",
            f"--root={root}",
            "--RecallScheduler.default_timezone=UTC",
        ],
    }


def server_args(db_url: str, root: Path) -> list[str]:
    """The documented spawner args (docs/deploy.md), --allow-root as the tests run as root."""
    return [
        "--allow-root",
        f"--ServerApp.root_dir={root}",
        "--ServerApp.jpserver_extensions=jupyter_recall=True",
        "--RecallApp.run_scheduler=False",
        f"--RecallApp.db_url={db_url}",
        f"--RecallApp.fire_owner={USER}",
        "--RecallApp.default_timezone=UTC",
    ]


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[Hub]:
    root = tmp_path / "root"
    root.mkdir()
    db_url = f"sqlite:///{tmp_path / 'recall.sqlite'}"
    workdir = tmp_path / "hub"
    workdir.mkdir()
    hub = Hub(
        workdir,
        services=[scheduler_service(db_url, root)],
        spawner_args=server_args(db_url, root),
    )
    try:
        yield hub.start()
    finally:
        hub.stop()


def spawn(hub: Hub) -> None:
    hub.api("POST", f"/users/{USER}/server")
    wait_until(lambda: hub.server_ready(USER), timeout=60)


def recall(hub: Hub, token: str, method: str, path: str, body: dict | None = None):
    return hub.request(method, f"/user/{USER}/api/recall{path}", body, token=token)


def test_a_headless_job_fires_while_the_hub_has_stopped_the_users_server(hub, tmp_path):
    hub.api("POST", f"/users/{USER}")
    token = hub.api("POST", f"/users/{USER}/tokens", {"note": "recall test"})["token"]
    spawn(hub)
    marker = tmp_path / "root" / "fired.txt"
    body = {
        # The Hub took up to 60 s to stop a server on a loaded 2-core machine.
        "when": "in 75 seconds",
        "action": {"type": "code", "code": f"open({str(marker)!r}, 'w')"},
        "target": {"type": "headless", "kernel_name": "python3"},
    }
    job = recall(hub, token, "POST", "/jobs", body)
    due = datetime.fromisoformat(job["next_fire_at"])

    hub.api("DELETE", f"/users/{USER}/server")  # what the idle culler does
    wait_until(lambda: hub.server_gone(USER), timeout=60)
    assert not marker.exists(), "the job fired before the server was stopped: nothing tested"
    # Up to 60 s after the job is due, however long the Hub took to stop the server.
    until_due = (due - datetime.now(timezone.utc)).total_seconds()
    assert wait_until(marker.exists, timeout=max(until_due, 0) + 60)

    spawn(hub)

    def finished() -> list[dict]:
        runs = recall(hub, token, "GET", f"/jobs/{quote(job['id'])}/runs")["runs"]
        return [run for run in runs if run["status"] != "running"]

    (run,) = wait_until(finished, timeout=30)
    assert run["status"] == "succeeded"
    assert engine_of(tmp_path / "recall.sqlite", run["id"]).startswith("scheduler@")
