"""bench/watchers.py runs end to end at a small size (its figures are printed, not asserted)."""

from __future__ import annotations

import pytest

from tests.bench_script import run_bench


@pytest.mark.slow
def test_watchers_bench_reports_its_figures() -> None:
    result = run_bench("watchers.py", "--watchers", "20", "--seconds", "5")
    assert result["watchers"] == 20
    assert result["notifications"] == 20, "one baseline each, the file never changes"
    assert result["checks"] >= 20
    assert isinstance(result["cpu_percent_of_one_core"], float)
