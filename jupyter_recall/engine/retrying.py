"""Retries (``policies.retries``) on the engine's side: deciding at a run's end whether its
occurrence gets another attempt, and firing the attempts that are due.

A retry is decided where the run ends (``Runner``, or the recovery of runs a dead engine left):
the ended attempt is written with ``retry_at``, the instant of the next attempt, in the same
transaction as its end. From then on the retry is the store's, not an engine's: each firing
pass reads the retries due (``Store.due_retries``), inserts their next attempts and clears
their ``retry_at`` in its own transaction, so a restarted engine, or another one on the same
database, fires a pending retry exactly once (the unique ``(job_id, scheduled_for, attempt)``
refuses a second insert). See ``docs/engine.md``, "Retries".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from jupyter_recall.core.model import Job, Overlap, Run, RunStatus, new_id
from jupyter_recall.core.retries import retry_at
from jupyter_recall.store.base import JobState, Store


def with_retry(job: Job, run: Run, *, ended_at: datetime) -> Run:
    """``run`` (final) with ``retry_at`` set when its job's retries call for another attempt.
    A run of an ended job (Run now of a completed, failed or cancelled job) gets none: nothing
    fires for an ended job, so a ``retry_at`` would promise an attempt that never comes."""
    if job.status.is_terminal:
        return run
    at = retry_at(
        job.policies.retries,
        job_id=job.id,
        occurrence=run.scheduled_for,
        attempt=run.attempt,
        status=run.status,
        ended_at=ended_at,
    )
    return run if at is None else run.evolve(retry_at=at)


def next_attempt(previous: Run, *, now: datetime, engine_id: str) -> Run:
    """The run of the attempt after ``previous``: same job, occurrence and trigger."""
    return Run(
        id=new_id(),
        job_id=previous.job_id,
        owner=previous.owner,
        scheduled_for=previous.scheduled_for,
        trigger=previous.trigger,
        status=RunStatus.RUNNING,
        created_at=now,
        engine_id=engine_id,
        attempt=previous.attempt + 1,
    )


@dataclass(frozen=True, slots=True)
class Retried:
    """A next attempt this pass inserted, to execute, and its job as the pass left it."""

    job: Job
    run: Run

    @property
    def serial(self) -> bool:
        return self.job.policies.overlap is not Overlap.ALLOW


@dataclass(slots=True)
class RetryPass:
    retried: list[Retried] = field(default_factory=list)


def fire_retries(
    store: Store, *, now: datetime, engine_id: str, limit: int, owner: str | None
) -> RetryPass:
    """Fire the retries due at ``now``, inside the caller's transaction: each one's next
    attempt is inserted (once: a second engine's insert is refused) and its ``retry_at``
    cleared; the jobs show the new attempt as their last run."""
    result = RetryPass()
    due = store.due_retries(now, limit=limit, owner=owner)
    if not due:
        return result
    attempts = [next_attempt(run, now=now, engine_id=engine_id) for run in due]
    inserted = store.insert_runs(attempts)
    store.clear_retries([run.id for run in due])
    jobs: dict[str, Job] = {}
    for run in inserted:
        job = jobs.get(run.job_id) or store.get_job(run.job_id, owner=None)
        job.last_run_at, job.last_run_id = now, run.id
        job.last_status, job.last_error = RunStatus.RUNNING, None
        job.updated_at = now
        jobs[job.id] = job
        result.retried.append(Retried(job, run))
    store.update_job_states([JobState.of(job) for job in jobs.values()])
    return result


def pending_at(store: Store, job_id: str) -> datetime | None:
    """The instant of the job's pending retry (None: none). A pending retry counts as a run in
    flight (a one-shot job resumed with one is not over), and resuming the job must wake the
    firing loop for it."""
    return store.pending_retries([job_id]).get(job_id)


def dropping_retries(store: Store, job_id: str, change: Callable[[], Job]) -> Job:
    """Apply ``change`` (a cancel) and drop the job's pending retries in one transaction: the
    last attempt of each occurrence is then its outcome."""
    with store.atomic():
        job = change()
        store.drop_job_retries(job_id)
    return job
