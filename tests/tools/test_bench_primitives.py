"""bench/primitives.py runs end to end at a small size (its figures are printed, not asserted)."""

from __future__ import annotations

import pytest

from tests.bench_script import run_bench


@pytest.mark.slow  # about 12 s: a server, 20 watchers for a second, repeated parallel runs
def test_primitives_bench_reports_every_figure():
    small = ["--actions", "10", "--seconds", "0.1", "--repeats", "2", "--json"]
    small += ["--watchers", "20", "--watch-seconds", "1"]
    result = run_bench("primitives.py", *small, timeout=60)
    assert set(result["run_parallel"]) == {
        "actions",
        "action_seconds",
        "median_s",
        "max_s",
        "target_s",
        "within_target",
    }
    assert result["run_parallel"]["actions"] == 10
    for side in ("noop", "sleep"):
        assert set(result["overhead_vs_gather"][side]) == {
            "gather_median_s",
            "run_parallel_median_s",
            "overhead_per_call_us",
        }
    watchers = result["watchers"]
    assert watchers["watchers"] == 20
    assert watchers["notifications"] >= 20  # on_change: each watcher's first check notifies
    assert isinstance(watchers["cpu_percent_of_one_core"], float)
