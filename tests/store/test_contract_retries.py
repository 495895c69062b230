"""The contract of attempts and pending retries (``policies.retries``): runs unique per
``(job_id, scheduled_for, attempt)``, ``retry_at`` written with a run's end, the retries due,
the earliest one, clearing, and which jobs have one pending. Runs on every kind of store."""

from __future__ import annotations

from dataclasses import replace

import pytest

from jupyter_recall.core.model import Job, JobStatus, RunStatus
from jupyter_recall.store.base import JobState, Store
from tests.store.factories import T0, make_job, make_run, minutes


@pytest.fixture
def job(store: Store) -> Job:
    job = make_job()
    store.insert_jobs([job])
    return job


def test_an_occurrence_has_one_run_per_attempt(store: Store, job: Job) -> None:
    first = make_run(job, T0)
    again = make_run(job, T0)
    second = make_run(job, T0, attempt=2)
    assert store.insert_runs([first]) == [first]
    # The same attempt of the same occurrence is refused (a second engine, a replay)...
    assert store.insert_runs([again]) == []
    # ...another attempt is a run of its own.
    assert store.insert_runs([second]) == [second]
    assert store.insert_runs([make_run(job, T0, attempt=2)]) == []
    stored = sorted(store.running_runs(job_id=job.id), key=lambda run: run.attempt)
    assert [(run.id, run.attempt) for run in stored] == [(first.id, 1), (second.id, 2)]


def test_a_run_is_its_first_attempt_unless_told(store: Store, job: Job) -> None:
    run = make_run(job, T0)
    store.insert_runs([run])
    stored = store.get_run(run.id, owner=None)
    assert (stored.attempt, stored.retry_at) == (1, None)


def test_retry_at_is_written_with_the_end_and_read_back(store: Store, job: Job) -> None:
    run = make_run(job, T0)
    store.insert_runs([run])
    ended = replace(run, status=RunStatus.FAILED, finished_at=T0, retry_at=T0 + minutes(1))
    store.update_run_states([ended])
    assert store.get_run(run.id, owner=None).retry_at == T0 + minutes(1)
    assert store.next_retry_at() == T0 + minutes(1)
    assert store.next_retry_at(owner="bob") is None
    assert store.pending_retries([job.id, "nope"]) == {job.id: T0 + minutes(1)}
    # Not due before its instant; due at it.
    assert store.due_retries(T0 + minutes(1) - minutes(0.5), limit=10) == []
    with store.atomic():
        (due,) = store.due_retries(T0 + minutes(1), limit=10)
    assert (due.id, due.attempt, due.status) == (run.id, 1, RunStatus.FAILED)
    store.clear_retries([run.id])
    assert store.get_run(run.id, owner=None).retry_at is None
    assert store.next_retry_at() is None
    assert store.pending_retries([job.id]) == {}


def test_due_retries_are_earliest_first_bounded_and_scoped(store: Store) -> None:
    alice, bob = make_job(), make_job(owner="bob")
    store.insert_jobs([alice, bob])
    runs = [
        make_run(alice, T0, status=RunStatus.FAILED, finished_at=T0, retry_at=T0 + minutes(3)),
        make_run(
            alice,
            T0 + minutes(1),
            status=RunStatus.FAILED,
            finished_at=T0,
            retry_at=T0 + minutes(2),
        ),
        make_run(bob, T0, status=RunStatus.TIMED_OUT, finished_at=T0, retry_at=T0 + minutes(1)),
    ]
    store.insert_runs(runs)
    later = T0 + minutes(10)
    with store.atomic():
        assert [run.id for run in store.due_retries(later, limit=10)] == [
            runs[2].id,
            runs[1].id,
            runs[0].id,
        ]
        assert [run.id for run in store.due_retries(later, limit=1)] == [runs[2].id]
        assert [run.id for run in store.due_retries(later, limit=10, owner="alice")] == [
            runs[1].id,
            runs[0].id,
        ]
    assert store.next_retry_at(owner="alice") == T0 + minutes(2)


def test_a_paused_jobs_retry_is_pending_but_not_due(store: Store, job: Job) -> None:
    run = make_run(job, T0, status=RunStatus.FAILED, finished_at=T0, retry_at=T0 + minutes(1))
    store.insert_runs([run])
    state = JobState.of(job)
    state.status = JobStatus.PAUSED
    store.update_job_states([state])
    with store.atomic():
        assert store.due_retries(T0 + minutes(5), limit=10) == []
    assert store.next_retry_at() is None
    assert store.pending_retries([job.id]) == {job.id: T0 + minutes(1)}


def test_a_deleted_jobs_retries_go_with_it(store: Store, job: Job) -> None:
    run = make_run(job, T0, status=RunStatus.FAILED, finished_at=T0, retry_at=T0 + minutes(1))
    store.insert_runs([run])
    store.delete_job(job.id, owner=None)
    assert store.next_retry_at() is None
