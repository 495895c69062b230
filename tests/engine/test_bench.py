"""The benchmarks run end to end at a small size (their figures are printed, not asserted)."""

from __future__ import annotations

import pytest

from tests import bench_script


def run_bench(*args: str) -> dict[str, object]:
    result: dict[str, object] = bench_script.run_bench(*args, "--json")
    return result


@pytest.mark.slow
def test_burst_runs_both_schedulers_and_reports_every_figure() -> None:
    result = run_bench("burst.py", "--jobs", "200", "--window", "1", "--lead", "0.5")
    assert result["jobs"] == 200
    for side in ("recall", "apscheduler"):
        figures = result[side]
        assert isinstance(figures, dict)
        assert set(figures) == {"create_per_s", "p50_ms", "p99_ms", "fired"}
    recall = result["recall"]
    assert isinstance(recall, dict)
    assert recall["fired"] == 200


@pytest.mark.slow
def test_idle_cpu_reports_cpu_seconds() -> None:
    result = run_bench("idle_cpu.py", "--jobs", "1000", "--seconds", "1")
    assert result["jobs"] == 1000
    assert isinstance(result["cpu_seconds"], float)


@pytest.mark.slow
def test_watchers_reports_checks_and_cpu() -> None:
    result = run_bench("watchers.py", "--watchers", "10", "--seconds", "5")
    assert result["watchers"] == 10
    assert result["checks"] >= 5  # 10 watchers every 5 s over 5 s, give or take an interval
    assert isinstance(result["cpu_seconds"], float)
