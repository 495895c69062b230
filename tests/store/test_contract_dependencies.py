"""The contract of dependencies (``DependencyStore``): a row per downstream job, found by its
upstream; the upstream's ends after the cursor (final for their occurrence, executed, oldest
first); two store objects firing the same upstream ends at once record each once. Runs on
every kind of store."""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest

from jupyter_recall.core.dependency import AfterOn, Dependency
from jupyter_recall.core.model import Job, RunStatus, RunTrigger
from jupyter_recall.core.policy import InFlight
from jupyter_recall.engine.dependencies import fire_dependents
from jupyter_recall.store.base import RunFilter, Store
from tests.store.factories import T0, OpenStore, make_job, make_run, minutes


@pytest.fixture
def upstream(store: Store) -> Job:
    job = make_job(when="every 1h")
    store.insert_jobs([job])
    return job


def downstream_of(store: Store, upstream: Job, on: AfterOn = AfterOn.SUCCEEDED) -> Job:
    job = make_job(when=f"after {upstream.id} {on.verb}", next_occurrence=None, next_fire_at=None)
    store.insert_jobs([job])
    store.put_dependency(Dependency(job.id, job.owner, upstream.id, on, T0))
    return job


def ended(store: Store, job: Job, at: int, status: RunStatus = RunStatus.SUCCEEDED) -> str:
    """A run of ``job`` that ended ``at`` minutes after T0; its id."""
    run = make_run(job, T0 + minutes(at), status=status, finished_at=T0 + minutes(at))
    store.insert_runs([run])
    return run.id


def test_a_dependency_reads_back_and_is_found_by_its_upstream(store: Store, upstream: Job) -> None:
    job = downstream_of(store, upstream, AfterOn.FAILED)
    dependency = store.get_dependency(job.id)
    assert dependency == Dependency(job.id, "alice", upstream.id, AfterOn.FAILED, T0, "")
    assert store.dependents_of([upstream.id, "nope"]) == [dependency]
    assert store.dependents_of(["nope"]) == []
    with store.atomic():
        assert store.list_dependencies(after=None, limit=10) == [dependency]
    assert store.list_dependencies(after=job.id, limit=10) == []
    assert store.list_dependencies(after=None, limit=10, owner="bob") == []
    store.put_dependency(replace(dependency, on=AfterOn.FINISHED))
    assert store.get_dependency(job.id) == replace(dependency, on=AfterOn.FINISHED)
    store.delete_dependency(job.id)
    assert store.get_dependency(job.id) is None


def test_deleting_the_downstream_job_deletes_its_dependency(store: Store, upstream: Job) -> None:
    job = downstream_of(store, upstream)
    store.delete_job(job.id, owner="alice")
    assert store.dependents_of([upstream.id]) == []


def test_upstream_ends_after_the_cursor_oldest_first(store: Store, upstream: Job) -> None:
    job = downstream_of(store, upstream)
    first = ended(store, upstream, 2, RunStatus.FAILED)
    second = ended(store, upstream, 1)
    ended(store, upstream, 3, RunStatus.SKIPPED)  # did not run: never an upstream end
    store.insert_runs([make_run(upstream, T0 + minutes(4))])  # still running
    dependency = store.get_dependency(job.id)
    assert dependency is not None
    ends = store.upstream_ends(dependency, limit=10)
    assert [(end.run_id, end.status) for end in ends] == [
        (second, RunStatus.SUCCEEDED),
        (first, RunStatus.FAILED),
    ]
    assert store.upstream_ends(dependency.past(ends[0]), limit=10) == ends[1:]
    assert store.upstream_ends(dependency, limit=1) == ends[:1]
    latest = store.latest_upstream_end(upstream.id)
    assert latest is not None
    assert latest.finished_at == T0 + minutes(3)


def test_an_attempt_followed_by_a_retry_is_not_an_upstream_end(store: Store, upstream: Job) -> None:
    job = downstream_of(store, upstream, AfterOn.FINISHED)
    at = T0 + minutes(1)
    retrying = make_run(
        upstream, at, status=RunStatus.FAILED, finished_at=at, retry_at=at + minutes(1)
    )
    store.insert_runs([retrying])
    dependency = store.get_dependency(job.id)
    assert dependency is not None
    assert store.upstream_ends(dependency, limit=10) == []
    # The retry fired: the first attempt's retry_at is cleared, a later attempt exists.
    store.clear_retries([retrying.id])
    later = make_run(
        upstream, at, attempt=2, status=RunStatus.SUCCEEDED, finished_at=at + minutes(2)
    )
    store.insert_runs([later])
    assert [end.run_id for end in store.upstream_ends(dependency, limit=10)] == [later.id]


def test_two_stores_firing_the_same_ends_at_once_record_each_once(
    open_store: OpenStore, store: Store, upstream: Job
) -> None:
    job = downstream_of(store, upstream, AfterOn.FINISHED)
    for minute in range(1, 6):
        ended(store, upstream, minute)
    stores = [open_store(), open_store()]
    start = threading.Barrier(2)
    errors: list[BaseException] = []

    def work(other: Store, number: int) -> None:
        try:
            start.wait()
            fire_dependents(
                other,
                [upstream.id],
                now=T0 + minutes(6),
                engine_id=f"engine-{number}",
                in_flight=lambda _job_id: InFlight(),
                catching_up=True,
            )
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(s, n)) for n, s in enumerate(stores)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    runs = store.list_runs(owner="alice", where=RunFilter(job_id=job.id))
    # Caught up (as after a restart), with coalesce=latest (the default): the five ends are
    # four missed rows and one run.
    assert sorted(run.status.value for run in runs) == ["missed"] * 4 + ["running"]
    assert {run.trigger for run in runs} == {RunTrigger.AFTER}
    assert len({run.scheduled_for for run in runs}) == 5
    dependency = store.get_dependency(job.id)
    assert dependency is not None
    assert dependency.cursor_at == T0 + minutes(5)
    assert store.get_job(job.id, owner=None).run_count == 1


def test_a_burst_of_ended_upstreams_is_looked_up_in_chunks(store: Store, upstream: Job) -> None:
    job = downstream_of(store, upstream)
    ended(store, upstream, 1)
    heard = [f"gone{number}" for number in range(1200)] + [upstream.id]
    fired, _ = fire_dependents(
        store, heard, now=T0 + minutes(2), engine_id="e", in_flight=lambda _job_id: InFlight()
    )
    assert [run.job_id for _job, run in fired.fired] == [job.id]
