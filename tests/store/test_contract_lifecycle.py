"""The store contract of pause after failures and retention, on every kind of store: a job's
failure streak and paused reason round trip with the job (and a state write leaves them
alone); the runs a retention lets go, by count and by age, never a run going nor an attempt
whose retry is pending; deleting them changes no count of the job."""

from __future__ import annotations

from jupyter_recall.core.dependency import AfterOn, Dependency
from jupyter_recall.core.model import JobStatus, RunStatus
from jupyter_recall.store.base import JobState, Store
from tests.store.factories import T0, make_job, make_run, minutes


def test_failure_streak_and_paused_reason_round_trip(store: Store) -> None:
    job = make_job(failure_streak=2, status=JobStatus.PAUSED, paused_reason="paused after 2")
    store.insert_jobs([job])
    stored = store.get_job(job.id, owner="alice")
    assert (stored.failure_streak, stored.paused_reason) == (2, "paused after 2")
    # A state write (firing, the end of runs) leaves them as they are.
    state = JobState.of(stored)
    state.run_count = 5
    store.update_job_states([state])
    again = store.get_job(job.id, owner="alice")
    assert (again.run_count, again.failure_streak, again.paused_reason) == (5, 2, "paused after 2")
    store.update_jobs([again.evolve(failure_streak=0, paused_reason=None)])
    cleared = store.get_job(job.id, owner="alice")
    assert (cleared.failure_streak, cleared.paused_reason) == (0, None)


def test_prunable_runs_by_count_keep_the_newest_and_skip_runs_going(store: Store) -> None:
    job = make_job(run_count=6)
    store.insert_jobs([job])
    ended = [
        make_run(job, T0 + minutes(i), status=RunStatus.SUCCEEDED, finished_at=T0 + minutes(i))
        for i in range(5)
    ]
    going = make_run(job, T0 - minutes(10))  # the oldest occurrence, still running
    retrying = make_run(
        job,
        T0 - minutes(5),
        status=RunStatus.FAILED,
        finished_at=T0 - minutes(5),
        retry_at=T0 + minutes(60),
    )
    store.insert_runs([*ended, going, retrying])
    found = store.prunable_runs(job.id, keep=2, ended_before=None, limit=100)
    assert found == [run.id for run in ended[:3]]
    assert store.prunable_runs(job.id, keep=2, ended_before=None, limit=2) == found[:2]
    assert store.prunable_runs(job.id, keep=None, ended_before=None, limit=100) == []
    store.delete_runs(found)
    left = {run.id for run in store.list_runs(owner="alice")}
    assert left == {ended[3].id, ended[4].id, going.id, retrying.id}
    assert store.get_job(job.id, owner="alice").run_count == 6


def test_prunable_runs_by_age(store: Store) -> None:
    job = make_job()
    other = make_job()
    store.insert_jobs([job, other])
    runs = [
        make_run(job, T0 + minutes(i), status=RunStatus.FAILED, finished_at=T0 + minutes(i))
        for i in range(4)
    ]
    store.insert_runs([*runs, make_run(other, T0, status=RunStatus.FAILED, finished_at=T0)])
    found = store.prunable_runs(job.id, keep=None, ended_before=T0 + minutes(2), limit=100)
    assert found == [runs[0].id, runs[1].id]
    # Either bound lets a run go.
    either = store.prunable_runs(job.id, keep=3, ended_before=T0 + minutes(1), limit=100)
    assert either == [runs[0].id]
    both = store.prunable_runs(job.id, keep=1, ended_before=T0 + minutes(1), limit=100)
    assert both == [run.id for run in runs[:3]]


def test_prunable_runs_keep_the_upstream_runs_a_dependent_has_not_handled(store: Store) -> None:
    upstream, downstream = make_job(), make_job()
    store.insert_jobs([upstream, downstream])
    runs = [
        make_run(upstream, T0 + minutes(i), status=RunStatus.SUCCEEDED, finished_at=T0 + minutes(i))
        for i in range(4)
    ]
    store.insert_runs(runs)
    # The dependent handled the first two runs (its cursor is the second's end).
    store.put_dependency(
        Dependency(
            downstream.id, "alice", upstream.id, AfterOn.SUCCEEDED, T0 + minutes(1), runs[1].id
        )
    )
    found = store.prunable_runs(upstream.id, keep=0, ended_before=None, limit=100)
    assert found == [runs[0].id, runs[1].id]
