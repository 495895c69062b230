"""Pause after failures (``policies.pause_after_failures``), on the store side of the end of
runs: in the transaction that settles the ends, each job that asks counts its consecutive
failed occurrences (``Job.failure_streak``) and is paused, with the reason, when the count
reaches its limit. Only an occurrence's final outcome counts: an attempt followed by a retry
(``Run.retry_at``) says nothing yet. The decisions are ``core/lifecycle.py``'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from jupyter_recall.core.errors import NotFoundError
from jupyter_recall.core.lifecycle import pause_reason, streak_after
from jupyter_recall.core.model import Job, JobStatus, Run
from jupyter_recall.store.base import Store


def watches_failures(job: Job) -> bool:
    return job.policies.pause_after_failures is not None


def count_failures(
    store: Store, outcomes: Sequence[tuple[Run, Job]], *, now: datetime
) -> list[Job]:
    """Apply the final outcomes of occurrences (in their order) to their jobs' failure
    streaks, inside the caller's transaction; returns the jobs this pauses. A job is read as
    it is now (a pause or an edit made meanwhile is kept) and written only if it changed."""
    current: dict[str, Job] = {}
    changed: set[str] = set()
    paused: dict[str, Job] = {}
    for run, fired in outcomes:
        if not (watches_failures(fired) and run.is_final_for_occurrence):
            continue
        job = current.get(run.job_id) or _read(store, run.job_id)
        if job is None:
            continue
        streak = streak_after(job.failure_streak, run.status)
        if streak != job.failure_streak:
            job = job.evolve(failure_streak=streak)
            changed.add(job.id)
        limit = job.policies.pause_after_failures
        if limit is not None and streak >= limit and job.status is JobStatus.ACTIVE:
            job = job.paused(paused_reason=pause_reason(streak, run.error), updated_at=now)
            paused[job.id] = job
        current[job.id] = job
    if changed:
        store.update_jobs([current[job_id] for job_id in changed])
    return list(paused.values())


def _read(store: Store, job_id: str) -> Job | None:
    try:
        return store.get_job_for_update(job_id, owner=None)
    except NotFoundError:  # deleted while its run was in flight
        return None
