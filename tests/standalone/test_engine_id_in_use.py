"""A second scheduler under the engine id of one that is running refuses to start (it would
interrupt the first one's runs as a predecessor's); a restart after a crash takes over at once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from jupyter_recall.standalone.app import LEASE_SECONDS, RENEWAL_MARGIN
from tests.standalone.scheduler_process import SchedulerProcess


def scheduler_in(tmp_path: Path, name: str, db: Path) -> SchedulerProcess:
    root = tmp_path / name / "root"
    root.mkdir(parents=True)
    return SchedulerProcess(root, db)


def run_second(db: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    bin_dir = Path(sys.executable).parent
    return subprocess.run(
        [
            str(bin_dir / "jupyter"),
            "recall",
            "scheduler",
            f"--db-url=sqlite:///{db}",
            "--RecallScheduler.default_timezone=UTC",
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=90,
        cwd=cwd,
        env={**os.environ, "JUPYTER_PLATFORM_DIRS": "1"},
    )


def test_a_second_scheduler_with_a_live_engine_id_refuses_to_start(tmp_path: Path):
    db = tmp_path / "recall.sqlite"
    first = scheduler_in(tmp_path, "first", db).start()
    try:
        second = run_second(db, tmp_path)
        assert first.process is not None
        assert first.process.poll() is None
    finally:
        first.stop()
    assert second.returncode == 2, second.stderr[-2000:]
    assert "another --engine-id" in second.stderr
    assert "is in use" in second.stderr
    assert "Traceback" not in second.stderr
    assert "jobs in" not in second.stderr
    refusal = next(line for line in second.stderr.splitlines() if "is in use" in line)
    assert refusal.startswith("jupyter recall scheduler: error: engine id 'scheduler@"), refusal
    assert "now until 20" in refusal  # the holder's lease expiry, an ISO instant


def test_a_restart_after_a_crash_takes_the_engine_id_over_without_waiting_for_the_lease(
    tmp_path: Path,
):
    db = tmp_path / "recall.sqlite"
    crashed = scheduler_in(tmp_path, "crashed", db).start()
    crashed.stop(signal.SIGKILL)
    started = time.monotonic()
    restarted = scheduler_in(tmp_path, "restarted", db).start()
    took = time.monotonic() - started
    restarted.stop()
    # At most one renewal period and its margin, not the whole lease.
    assert took < LEASE_SECONDS / 3 + RENEWAL_MARGIN + 5, took
