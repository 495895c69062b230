"""A real `jupyter recall scheduler` process, for tests that stop, restart or kill it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


class SchedulerProcess:
    def __init__(
        self,
        root: Path,
        db_path: Path,
        *,
        config: dict[str, Any] | None = None,
        db_url: str | None = None,
        args: tuple[str, ...] = (),
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.root = root
        self.db_path = db_path
        self.db_url = db_url or f"sqlite:///{db_path}"
        self.config_file = root.parent / "scheduler_config.json"
        self.config_file.write_text(json.dumps({"RecallScheduler": config or {}}))
        self.args = args
        self.cwd = cwd
        self.env = env or {}
        self.log = root.parent / "scheduler.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 60.0) -> SchedulerProcess:
        bin_dir = Path(sys.executable).parent
        command = [
            str(bin_dir / "jupyter"),
            "recall",
            "scheduler",
            f"--db-url={self.db_url}",
            f"--root={self.root}",
            f"--config={self.config_file}",
            "--RecallScheduler.default_timezone=UTC",
            "--log-level=DEBUG",
            *self.args,
        ]
        env = {
            **os.environ,
            "JUPYTER_PLATFORM_DIRS": "1",
            "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
            **self.env,
        }
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=log, env=env, cwd=self.cwd)
        deadline = time.monotonic() + timeout
        while "jobs in" not in self.log.read_text():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop(signal.SIGKILL)
                raise AssertionError(f"scheduler did not start:\n{self.log.read_text()[-3000:]}")
            time.sleep(0.1)
        return self

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 60.0) -> int | None:
        process, self.process = self.process, None
        if process is None:
            return None
        if process.poll() is None:
            process.send_signal(sig)
        return process.wait(timeout)


def run_scheduler_command(
    cwd: Path, *args: str, timeout: float = 60.0, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``jupyter recall scheduler ARGS`` run to its end (a refusal at start), with a clean
    environment whose home is ``cwd`` (plus ``env``)."""
    jupyter = Path(sys.executable).parent / "jupyter"
    return subprocess.run(
        [str(jupyter), "recall", "scheduler", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env={
            "PATH": str(jupyter.parent),
            "JUPYTER_PLATFORM_DIRS": "1",
            "HOME": str(cwd),
            **(env or {}),
        },
    )
