"""bench/watchers.py runs end to end at a small size (its figures are printed, not asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "watchers.py"


@pytest.mark.slow
def test_watchers_bench_reports_its_figures() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--watchers", "20", "--seconds", "5"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["watchers"] == 20
    assert result["notifications"] == 20, "one baseline each, the file never changes"
    assert result["checks"] >= 20
    assert isinstance(result["cpu_percent_of_one_core"], float)
