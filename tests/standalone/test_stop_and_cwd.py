"""The standalone scheduler as a system service: kernels' connection files go to the Jupyter
runtime dir, not its working directory (which may be unwritable), and it stops cleanly after a
kernel failed to start."""

from __future__ import annotations

import json
from pathlib import Path

from tests.server.live_server import LiveServer
from tests.standalone.scheduler_process import SchedulerProcess
from tests.standalone.test_standalone import (
    NOT_FIRING,
    create_then_stop,
    headless_code,
    history_after_restart,
)

REPORT_CONNECTION_FILE = """
import ipykernel
open({marker!r}, "w").write(ipykernel.get_connection_file())
"""


def test_kernel_connection_files_go_to_the_runtime_dir(tmp_path: Path):
    root = tmp_path / "root"
    root.mkdir()
    cwd = tmp_path / "service_cwd"
    cwd.mkdir()
    runtime = tmp_path / "runtime"
    db = tmp_path / "recall.sqlite"
    env = {"JUPYTER_RUNTIME_DIR": str(runtime)}
    scheduler = SchedulerProcess(root, db, cwd=cwd, env=env).start()
    try:
        server = LiveServer(root, db, args=NOT_FIRING).start()
        marker = root / "connection_file.txt"
        code = REPORT_CONNECTION_FILE.format(marker=str(marker))
        job = create_then_stop(server, headless_code(code))
        (run,) = history_after_restart(server, job["id"])
    finally:
        scheduler.stop()
    assert run["status"] == "succeeded", run.get("error")
    connection_file = Path(marker.read_text())
    assert connection_file.is_absolute(), connection_file
    assert connection_file.parent == runtime
    assert list(cwd.iterdir()) == []


def broken_kernel_spec(jupyter_path: Path) -> dict[str, str]:
    """A kernel spec both processes see (the server accepts the job) that cannot start."""
    spec_dir = jupyter_path / "kernels" / "broken"
    spec_dir.mkdir(parents=True)
    spec = {"argv": [str(jupyter_path / "no-such-kernel"), "{connection_file}"], "language": "x"}
    (spec_dir / "kernel.json").write_text(json.dumps({**spec, "display_name": "broken"}))
    return {"JUPYTER_PATH": str(jupyter_path)}


def test_sigterm_after_a_kernel_failed_to_start_stops_cleanly(tmp_path: Path):
    root = tmp_path / "root"
    root.mkdir()
    db = tmp_path / "recall.sqlite"
    env = broken_kernel_spec(tmp_path / "jupyter")
    scheduler = SchedulerProcess(root, db, env=env).start()
    try:
        server = LiveServer(root, db, args=NOT_FIRING, env=env).start()
        target = {"type": "headless", "kernel_name": "broken"}
        body = {**headless_code("print(1)"), "target": target}
        job = create_then_stop(server, body)
        (run,) = history_after_restart(server, job["id"])
    finally:
        returncode = scheduler.stop()
    assert run["status"] == "failed"
    log = scheduler.log.read_text()
    stopping = log[log.index("stopping: runs in flight end interrupted") :]
    assert returncode == 0, stopping
    assert "Traceback" not in stopping
    assert "stopped" in stopping
