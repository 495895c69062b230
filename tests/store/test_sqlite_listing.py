"""SQLite walks an index for every page of a listing: no sort of all the user's jobs or runs,
first page or deep (migration 4's indexes and the queries of store/sqlite.py agree)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from jupyter_recall.store.base import JOB_SORT_KEYS, JobCursor, JobFilter, RunCursor, RunFilter
from jupyter_recall.store.sqlite import SQLiteStore
from tests.store.factories import T0, make_job, make_run, minutes
from tests.store.test_sqlite import plan, traced


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    store = SQLiteStore(tmp_path / "recall.db")
    yield store
    store.close()


def _plan_of(store: SQLiteStore, call: Callable[[], object]) -> str:
    (statement,) = traced(store, call)
    return plan(store, statement)


@pytest.mark.parametrize("sort", JOB_SORT_KEYS)
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("deep", [False, True])
def test_a_page_of_jobs_searches_an_index_of_its_sort_key(
    store: SQLiteStore, sort: str, descending: bool, deep: bool
) -> None:
    store.insert_jobs([make_job(created_at=T0 + minutes(n)) for n in range(30)])
    after = JobCursor(T0 if sort != "name" else "m", "abc") if deep else None
    where = JobFilter(sort=sort, descending=descending, after=after, limit=10)
    query_plan = _plan_of(store, lambda: store.list_jobs(owner="alice", where=where))
    if sort == "last_run_at":
        # No index: it would be written at the end of every run (migration 4 says why).
        assert "TEMP B-TREE" in query_plan
        return
    assert "SEARCH jobs USING INDEX jobs_by_owner" in query_plan
    if sort != "created_at":
        # created_at's index (migration 1) lacks id: SQLite orders ties by id itself.
        assert "TEMP B-TREE" not in query_plan
    if deep:
        assert "<?" in query_plan or ">?" in query_plan, query_plan


def test_counts_read_a_covering_index(store: SQLiteStore) -> None:
    store.insert_jobs([make_job() for _ in range(10)])
    query_plan = _plan_of(store, lambda: store.count_jobs_by_status(owner="alice"))
    assert "COVERING INDEX jobs_by_owner_status" in query_plan
    assert "TEMP B-TREE" not in query_plan


def test_a_deep_page_of_runs_searches_the_newest_first_index(store: SQLiteStore) -> None:
    job = make_job()
    store.insert_jobs([job])
    store.insert_runs([make_run(job, T0 + minutes(n)) for n in range(20)])
    where = RunFilter(after=RunCursor(T0 + minutes(10), T0, "x"), limit=5)
    query_plan = _plan_of(store, lambda: store.list_runs(owner="alice", where=where))
    assert "SEARCH runs USING INDEX runs_by_owner_newest" in query_plan
    assert "TEMP B-TREE" not in query_plan
