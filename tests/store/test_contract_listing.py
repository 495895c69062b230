"""The contract of listing pages (``JobStore.list_jobs`` with sort, search and ``after``;
``count_jobs_by_status``; ``list_runs`` with ``after``): every store pages the same way. Each
test runs on every kind of store in ``conftest.STORES``.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

import pytest

from jupyter_recall.core.model import Job, JobStatus, RunStatus
from jupyter_recall.store.base import (
    JOB_SORT_KEYS,
    JobCount,
    JobCursor,
    JobFilter,
    RunCursor,
    RunFilter,
    Store,
)
from tests.store.factories import T0, ids, make_job, make_run, minutes


def _jobs(store: Store) -> list[Job]:
    """Nine jobs with ties in every sort key and missing next fires and last runs."""
    jobs = []
    for n in range(9):
        job = make_job(when=f"in {30 + n % 3}m", created_at=T0 + minutes(n % 4))
        job = job.evolve(
            name=f"Job {n % 5}",
            next_fire_at=None if n % 4 == 0 else job.next_fire_at,
            last_run_at=None if n % 3 == 0 else T0 + minutes(n % 2),
        )
        jobs.append(job)
    store.insert_jobs(jobs)
    return jobs


def _key(job: Job, sort: str) -> tuple[int, object]:
    """The documented order: no next fire after every instant, never run before every one."""
    value = getattr(job, sort)
    if value is None:
        return (1, 0) if sort == "next_fire_at" else (-1, 0)
    return (0, value)


def _walk(store: Store, where: JobFilter) -> list[Job]:
    pages: list[Job] = []
    while True:
        page = store.list_jobs(owner="alice", where=where)
        pages += page
        if len(page) < (where.limit or 0):
            return pages
        last = page[-1]
        where = replace(where, after=JobCursor(getattr(last, where.sort), last.id))


@pytest.mark.parametrize("sort", JOB_SORT_KEYS)
@pytest.mark.parametrize("descending", [False, True])
def test_pages_walk_every_job_once_in_sort_then_id_order(
    store: Store, sort: str, descending: bool
) -> None:
    jobs = _jobs(store)
    expected = sorted(jobs, key=lambda job: (_key(job, sort), job.id), reverse=descending)
    walked = _walk(store, JobFilter(sort=sort, descending=descending, limit=2))
    assert ids(walked) == ids(expected)


def test_default_order_is_newest_first(store: Store) -> None:
    jobs = _jobs(store)
    expected = sorted(jobs, key=lambda job: (job.created_at, job.id), reverse=True)
    assert ids(store.list_jobs(owner="alice")) == ids(expected)


def test_a_page_keeps_the_filters_and_the_owner(store: Store) -> None:
    mine = [make_job(status=JobStatus.PAUSED, created_at=T0 + minutes(n)) for n in range(3)]
    others = [make_job(owner="bob", status=JobStatus.PAUSED), make_job()]
    store.insert_jobs(mine + others)
    where = JobFilter(status=[JobStatus.PAUSED], limit=2)
    first = store.list_jobs(owner="alice", where=where)
    after = JobCursor(first[-1].created_at, first[-1].id)
    second = store.list_jobs(owner="alice", where=replace(where, after=after))
    assert ids(first + second) == ids(mine[::-1])


def test_search_matches_id_name_when_and_session_case_insensitively(store: Store) -> None:
    named = make_job(name="Nightly REPORT")
    timed = make_job(when="every 7 minutes")
    placed = make_job(session="work/Report.ipynb")
    literal = make_job(name="100% done_now")
    store.insert_jobs([named, timed, placed, literal, make_job(name="other")])

    def found(text: str) -> set[str]:
        return set(ids(store.list_jobs(owner="alice", where=JobFilter(search=text))))

    assert found("report") == {named.id, placed.id}
    assert found("7 MIN") == {timed.id}
    assert found(placed.id[:8]) == {placed.id}
    # LIKE's wildcards are the user's characters here, not patterns.
    assert found("0% d") == {literal.id}
    assert found("e_n") == {literal.id}


def test_counts_by_status_with_running_and_filters(store: Store) -> None:
    store.insert_jobs(
        [
            make_job(),
            make_job(last_status=RunStatus.RUNNING),
            make_job(status=JobStatus.PAUSED),
            make_job(status=JobStatus.COMPLETED, name="report"),
            make_job(owner="bob"),
        ]
    )
    assert store.count_jobs_by_status(owner="alice") == [
        JobCount(JobStatus.ACTIVE, 2, 1),
        JobCount(JobStatus.COMPLETED, 1, 0),
        JobCount(JobStatus.PAUSED, 1, 0),
    ]
    assert store.count_jobs_by_status(owner="alice", where=JobFilter(search="report")) == [
        JobCount(JobStatus.COMPLETED, 1, 0)
    ]
    assert store.count_jobs_by_status(owner="carol") == []


def test_run_pages_walk_newest_first_with_ties(store: Store) -> None:
    job = make_job(when="every 5m")
    store.insert_jobs([job])
    at: list[datetime] = [T0 + minutes(n // 2) for n in range(7)]
    runs = [make_run(job, T0 + minutes(n), created_at=at[n]) for n in range(7)]
    store.insert_runs(runs)
    expected = sorted(runs, key=lambda run: (run.scheduled_for, run.created_at, run.id))[::-1]
    walked, where = [], RunFilter(job_id=job.id, limit=3)
    while True:
        page = store.list_runs(owner="alice", where=where)
        walked += page
        if len(page) < 3:
            break
        last = page[-1]
        where = replace(where, after=RunCursor(last.scheduled_for, last.created_at, last.id))
    assert ids(walked) == ids(expected)
