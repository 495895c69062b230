"""Runs a script under ``bench/`` the way its tests do, and says why when it fails."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parents[1] / "bench"


def run_bench(script: str, *args: str, timeout: float = 120) -> Any:
    """The JSON object the script prints last; on a non-zero exit, fails with its stderr.

    ``check=True`` would fail with the command line only, and a bench that fails under a loaded
    CI machine leaves nothing to read.
    """
    done = subprocess.run(
        [sys.executable, str(BENCH / script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).splitlines()[-40:])
        raise AssertionError(f"bench/{script} exited {done.returncode}:\n{tail}")
    return json.loads(done.stdout.strip().splitlines()[-1])
