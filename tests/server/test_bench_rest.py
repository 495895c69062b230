"""bench/rest.py and bench/listing.py run end to end at a tiny size (their figures are
printed, not asserted: only that each is there and is a positive number)."""

from __future__ import annotations

import http.client
import json
import sqlite3
import sys

import pytest

from tests.bench_script import BENCH
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
def test_rest_bench_measures_the_floor_route_beside_them() -> None:
    result = run_bench("rest.py", "--requests", "30", "--rounds", "2", "--floor")
    for figure in ("floor_per_s", "floor_ratio", "create_to_floor_ratio"):
        assert isinstance(result[figure], float)
        assert result[figure] > 0
    assert isinstance(result["server_cpu_us_per_floor"], int)


@pytest.mark.slow
def test_the_floor_route_writes_one_job_row_per_request_and_answers_it() -> None:
    """The floor is a floor of the real work: each request commits a row of the jobs table
    (in a file of its own) and answers a creation's document for it."""
    sys.path.insert(0, str(BENCH))
    try:
        from floor_route import DB_ENV, PATH
        from served import HEADERS, live_server
    finally:
        sys.path.remove(str(BENCH))
    with live_server(floor=True) as server:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        ids = []
        for _ in range(3):
            connection.request("POST", PATH, body=b'{"when": "in 1 day"}', headers=HEADERS)
            response = connection.getresponse()
            answer = json.loads(response.read())
            assert response.status == 201
            assert answer["name"] == "bench"
            ids.append(answer["id"])
        connection.close()
        with sqlite3.connect(server.env[DB_ENV]) as db:
            stored = [row[0] for row in db.execute("SELECT id FROM jobs ORDER BY rowid")]
    assert stored == ids
    assert len(set(ids)) == 3


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
