"""bench/rest.py and bench/listing.py run end to end at a tiny size (their figures are
printed, not asserted: only that each is there and is a positive number)."""

from __future__ import annotations

import pytest

from tests.engine.test_bench import run_bench


@pytest.mark.slow
def test_rest_bench_measures_job_creation_beside_the_status_route() -> None:
    result = run_bench("rest.py", "--requests", "30", "--rounds", "3")
    assert result["requests"] == 30
    for figure in ("create_job_per_s", "status_per_s", "ratio"):
        value = result[figure]
        assert isinstance(value, float)
        assert value > 0
    # CPU time is read in ticks of 10 ms: at this size a figure may round to 0.
    for figure in ("server_cpu_us_per_create", "server_cpu_us_per_status"):
        assert isinstance(result[figure], int)
        assert result[figure] >= 0


@pytest.mark.slow
def test_listing_bench_times_every_kind_of_page() -> None:
    result = run_bench("listing.py", "--jobs", "1200", "--limit", "50", "--rounds", "2")
    assert result["jobs"] == 1200
    pages = result["pages"]
    assert isinstance(pages, dict)
    assert set(pages) == {
        "first_page",
        "sort_next_fire_at",
        "sort_name",
        "sort_last_run_at",
        "search",
        "filter_interval",
        "page_21",
        "counts",
    }
    for name, figure in pages.items():
        assert figure["median_ms"] > 0
        assert figure["items"] == (0 if name == "counts" else 50)
