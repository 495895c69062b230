"""A real JupyterHub on loopback: the standalone scheduler as a Hub-managed service, the user's
server spawned with run_scheduler=False on the same store. The server is stopped through the
Hub's REST API, as the idle culler stops it; the headless job still fires; the server spawned
again shows the run."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from datetime import datetime
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


def fired_at(marker: Path) -> list[float]:
    """When each run wrote its line (the job's code appends ``time.time()``)."""
    return [float(line) for line in marker.read_text().split()] if marker.exists() else []


def test_a_headless_job_fires_while_the_hub_has_stopped_the_users_server(hub, tmp_path):
    hub.api("POST", f"/users/{USER}")
    token = hub.api("POST", f"/users/{USER}/tokens", {"note": "recall test"})["token"]
    spawn(hub)
    marker = tmp_path / "root" / "fired.txt"
    # Every few seconds rather than once: a one-shot had to be due after the slowest stop the
    # Hub made (60 s on a loaded machine), so the test waited that long however quick the stop.
    code = (
        "import time\n"
        f"with open({str(marker)!r}, 'a') as out:\n"
        "    out.write(f'{time.time()}\\n')"
    )
    body = {
        "when": "every 4 seconds",
        "action": {"type": "code", "code": code},
        "target": {"type": "headless", "kernel_name": "python3"},
    }
    job = recall(hub, token, "POST", "/jobs", body)

    hub.api("DELETE", f"/users/{USER}/server")  # what the idle culler does
    wait_until(lambda: hub.server_gone(USER), timeout=60)
    stopped = time.time()
    # A run since the server was stopped (it never fires: run_scheduler=False).
    wait_until(lambda: any(at > stopped for at in fired_at(marker)), timeout=60)

    spawn(hub)

    def succeeded_since_the_stop() -> list[dict]:
        runs = recall(hub, token, "GET", f"/jobs/{quote(job['id'])}/runs")["runs"]
        return [
            run
            for run in runs
            if run["status"] == "succeeded"
            and datetime.fromisoformat(run["started_at"]).timestamp() > stopped
        ]

    run = wait_until(succeeded_since_the_stop, timeout=30)[0]
    assert engine_of(tmp_path / "recall.sqlite", run["id"]).startswith("scheduler@")
    recall(hub, token, "DELETE", f"/jobs/{quote(job['id'])}")
