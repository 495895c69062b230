"""Retention of runs (``policies.keep_runs``, ``policies.keep_runs_for`` and the engine's
defaults): the runs of jobs past their retention are deleted a page of jobs at a time, each
page in its own short transaction, so that a firing pass never waits long for the store
thread. The engine sweeps in the background only while the firing loop has room
(``Scheduler``), and ``Scheduler.prune_runs`` does it on demand (``jupyter recall prune``).

A run going is never deleted, nor an ended attempt whose retry is pending. Deleting runs
changes no count and no occurrence: those live on the job row (``store/lifecycle_tables.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from jupyter_recall.core.errors import NotFoundError
from jupyter_recall.core.lifecycle import Retention
from jupyter_recall.core.model import Job
from jupyter_recall.core.records import NotebookAction
from jupyter_recall.store.base import JobCursor, JobFilter, RunCursor, RunFilter, Store

JOBS_PER_PAGE = 50
"""Jobs looked at per transaction."""

RUNS_PER_JOB = 200
"""Runs of one job deleted per transaction; a job with more is taken again by the next page."""

COUNT_ALL = 1_000_000_000
"""The limit of a dry run, which deletes nothing and so counts everything at once."""


@dataclass(slots=True)
class PrunePage:
    counts: dict[str, int] = field(default_factory=dict)
    """Runs deleted (or, in a dry run, that would be) per job id."""
    more: bool = False
    """A job had more runs to delete than one page takes: take the same jobs again."""
    after: JobCursor | None = None
    """Where the next page of jobs starts; None when this was the last one."""
    deleted: list[DeletedRuns] = field(default_factory=list)
    """The runs deleted of jobs whose runs leave files (``leaving_files``), by job (none in a
    dry run)."""


@dataclass(frozen=True, slots=True)
class DeletedRuns:
    """Runs of one job deleted: what they left outside the store (a notebook's executed
    copies) can go too."""

    job: Job
    run_ids: tuple[str, ...]


def retention_of(job: Job, defaults: Retention) -> Retention:
    return Retention(job.policies.keep_runs, job.policies.keep_runs_for).over(defaults)


def prune_jobs(
    store: Store,
    jobs: Sequence[Job],
    *,
    defaults: Retention,
    now: datetime,
    dry_run: bool,
    per_job: int = RUNS_PER_JOB,
) -> PrunePage:
    """Delete (or count) the runs of ``jobs`` past their retention, in one transaction: at
    most ``per_job`` runs of each (``more`` says when one had more)."""
    page = PrunePage()
    limit = COUNT_ALL if dry_run else per_job
    with store.atomic():
        for job in jobs:
            retention = retention_of(job, defaults)
            if not retention.bounded:
                continue
            ids = store.prunable_runs(
                job.id, keep=retention.keep_runs, ended_before=retention.cutoff(now), limit=limit
            )
            if not ids:
                continue
            page.counts[job.id] = len(ids)
            page.more = page.more or len(ids) >= limit
            if not dry_run:
                store.delete_runs(ids)
                if leaving_files(job):
                    page.deleted.append(DeletedRuns(job, tuple(ids)))
    return page


def prune_page(
    store: Store,
    *,
    defaults: Retention,
    now: datetime,
    after: JobCursor | None,
    owner: str | None,
    dry_run: bool,
    size: int = JOBS_PER_PAGE,
    per_job: int = RUNS_PER_JOB,
) -> PrunePage:
    """One page of ``size`` jobs (``owner``'s, or all with None) in creation order."""
    where = JobFilter(sort="created_at", descending=False, after=after, limit=size)
    jobs = store.list_jobs(owner=owner, where=where)
    page = prune_jobs(store, jobs, defaults=defaults, now=now, dry_run=dry_run, per_job=per_job)
    if len(jobs) == size:
        page.after = JobCursor(jobs[-1].created_at, jobs[-1].id)
    return page


def prune_ids(
    store: Store,
    job_ids: Sequence[str],
    *,
    defaults: Retention,
    now: datetime,
    per_job: int = RUNS_PER_JOB,
) -> PrunePage:
    """The jobs of these ids (those still there), as ``prune_jobs``."""
    jobs = []
    for job_id in job_ids:
        try:
            jobs.append(store.get_job(job_id, owner=None))
        except NotFoundError:
            continue
    return prune_jobs(store, jobs, defaults=defaults, now=now, dry_run=False, per_job=per_job)


def merge(total: dict[str, int], page: PrunePage) -> None:
    for job_id, count in page.counts.items():
        total[job_id] = total.get(job_id, 0) + count


def leaving_files(job: Job) -> bool:
    """Whether the job's runs leave something outside the store: a notebook's executed copy."""
    return isinstance(job.action, NotebookAction)


def runs_leaving_files(store: Store, jobs: Sequence[Job]) -> list[DeletedRuns]:
    """The runs of those of ``jobs`` whose runs leave files, read before the jobs are deleted
    with them; a job without runs is left out."""
    found = [DeletedRuns(job, run_ids_of(store, job.id)) for job in jobs if leaving_files(job)]
    return [runs for runs in found if runs.run_ids]


def run_ids_of(store: Store, job_id: str, *, page: int = RUNS_PER_JOB) -> tuple[str, ...]:
    """Every run id of a job, read a page at a time."""
    ids: list[str] = []
    after: RunCursor | None = None
    while True:
        runs = store.list_runs(owner=None, where=RunFilter(job_id=job_id, limit=page, after=after))
        ids.extend(run.id for run in runs)
        if len(runs) < page:
            return tuple(ids)
        last = runs[-1]
        after = RunCursor(last.scheduled_for, last.created_at, last.id)
