"""The contract of a store shared by several engines (``JobStore.due_jobs`` and
``next_fire_at``): an engine may fire one user's jobs only, and two firing passes open at
once never get the same due job. Each test runs on every kind of store in ``conftest.STORES``.
"""

from __future__ import annotations

import threading

from jupyter_recall.core.model import JobStatus
from jupyter_recall.store.base import JobState, Store
from tests.store.factories import T0, OpenStore, ids, make_job, minutes


def test_due_jobs_and_next_fire_at_of_one_owner(store: Store) -> None:
    alice = [make_job(owner="alice", when=f"in {n}m") for n in (1, 3)]
    bob = [make_job(owner="bob", when=f"in {n}m") for n in (2, 4)]
    store.insert_jobs([*alice, *bob])
    now = T0 + minutes(10)
    assert ids(store.due_jobs(now, limit=10, owner="alice")) == ids(alice)
    assert ids(store.due_jobs(now, limit=10, owner="bob")) == ids(bob)
    assert ids(store.due_jobs(now, limit=10)) == ids([alice[0], bob[0], alice[1], bob[1]])
    assert store.due_jobs(now, limit=10, owner="carol") == []
    assert store.next_fire_at(owner="bob") == T0 + minutes(2)
    assert store.next_fire_at(after=T0 + minutes(2), owner="bob") == T0 + minutes(4)
    assert store.next_fire_at(after=T0 + minutes(3), owner="alice") is None
    assert store.next_fire_at(owner="carol") is None


def _fired(store: Store, limit: int, before_commit: threading.Event | None = None) -> list[str]:
    """A firing pass: take due jobs and move them past their occurrence, in one transaction."""
    with store.atomic():
        due = store.due_jobs(T0 + minutes(10), limit=limit)
        states = [JobState.of(job) for job in due]
        for state in states:
            state.next_fire_at = state.next_occurrence = None
            state.status = JobStatus.COMPLETED
        store.update_job_states(states)
        if before_commit is not None:
            before_commit.wait(timeout=30)
    return ids(due)


def test_two_passes_open_at_once_take_different_due_jobs(open_store: OpenStore) -> None:
    first, second = open_store(), open_store()
    jobs = [make_job(when=f"in {n}m") for n in range(1, 7)]
    first.insert_jobs(jobs)
    release = threading.Event()
    taken: dict[str, list[str]] = {}
    holder = threading.Thread(target=lambda: taken.update(first=_fired(first, 3, release)))
    holder.start()
    try:
        # The first pass holds its transaction open; the second comes while it does (SQLite
        # makes it wait for the first's commit, PostgreSQL skips the jobs the first holds).
        other = threading.Thread(target=lambda: taken.update(second=_fired(second, 3)))
        other.start()
        other.join(timeout=2)
    finally:
        release.set()
        holder.join(timeout=30)
    other.join(timeout=30)
    assert sorted(taken["first"] + taken["second"]) == sorted(ids(jobs))
