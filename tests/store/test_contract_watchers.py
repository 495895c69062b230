"""The contract of watchers' state and results (``WatcherStore``) and of the notification
buffer (``NotificationBuffer``), written against the protocols only; each test runs on every
kind of store in ``conftest.STORES``."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from jupyter_recall.core.model import JobKind, RunStatus
from jupyter_recall.store.base import NotificationBuffer, Store, WatcherStore
from jupyter_recall.store.watchers import (
    BUFFER_LIMIT,
    RESULT_LIMIT,
    RING_SIZE,
    CheckRecord,
    bounded_result,
)
from tests.store.factories import T0, OpenStore, make_job, make_run


def watcher_job(store: Store, owner: str = "alice") -> str:
    job = make_job(owner=owner, kind=JobKind.WATCHER, when="every 5s")
    store.insert_jobs([job])
    return job.id


def check(number: int, *, notified: bool = False, result: Any = None) -> CheckRecord:
    return CheckRecord(
        check=number,
        checked_at=T0 + timedelta(seconds=5 * number),
        success=True,
        result=result if result is not None else {"success": True, "data": number},
        notified=notified,
        reason="changed" if notified else "unchanged",
        run_id=f"run{number}",
    )


def record(
    watchers: WatcherStore, job_id: str, state: dict[str, Any], *checks: CheckRecord
) -> None:
    watchers.record_checks([(job_id, "alice", state, item) for item in checks])


class TestWatcherStore:
    def test_state_and_counters_are_saved_with_each_check(self, store: Store) -> None:
        job_id = watcher_job(store)
        store.create_watcher(job_id, "alice", {"checks": 0}, now=T0)
        created = store.get_watcher(job_id)
        assert created is not None
        assert (created.owner, created.checks, created.notifications) == ("alice", 0, 0)
        assert (created.last_check_at, created.last_notified_at) == (None, None)
        record(store, job_id, {"checks": 1, "notifications": 1}, check(1, notified=True))
        record(store, job_id, {"checks": 2, "notifications": 1}, check(2))
        saved = store.get_watcher(job_id)
        assert saved is not None
        assert (saved.checks, saved.notifications) == (2, 1)
        assert saved.state == {"checks": 2, "notifications": 1}
        assert saved.last_check_at == T0 + timedelta(seconds=10)
        assert saved.last_notified_at == T0 + timedelta(seconds=5)

    def test_creating_a_watcher_twice_keeps_its_state(self, store: Store) -> None:
        job_id = watcher_job(store)
        record(store, job_id, {"checks": 1, "level": 2}, check(1))
        store.create_watcher(job_id, "alice", {}, now=T0 + timedelta(hours=1))
        saved = store.get_watcher(job_id)
        assert saved is not None
        assert (saved.state, saved.checks) == ({"checks": 1, "level": 2}, 1)

    def test_unknown_watchers_are_absent(self, store: Store) -> None:
        job_id = watcher_job(store)
        store.create_watcher(job_id, "alice", {}, now=T0)
        assert store.get_watcher("nope") is None
        assert set(store.get_watchers([job_id, "nope"])) == {job_id}
        assert store.get_watchers([]) == {}
        assert store.watcher_history("nope") == []

    def test_many_watchers_are_read_at_once(self, store: Store) -> None:
        job_ids = [watcher_job(store) for _ in range(1200)]
        store.record_checks([(job_id, "alice", {"checks": 1}, check(1)) for job_id in job_ids])
        found = store.get_watchers(job_ids)
        assert sorted(found) == sorted(job_ids)
        assert {item.checks for item in found.values()} == {1}

    def test_the_ring_keeps_the_last_results_newest_first(self, store: Store) -> None:
        job_id = watcher_job(store)
        for number in range(1, RING_SIZE + 31):
            record(store, job_id, {"checks": number}, check(number))
        history = store.watcher_history(job_id)
        assert len(history) == RING_SIZE
        assert [h.check for h in history[:3]] == [130, 129, 128]
        assert history[-1].check == 31
        assert [h.check for h in store.watcher_history(job_id, 2)] == [130, 129]
        newest = history[0]
        assert newest == check(130)
        assert newest.to_json()["result"] == {"success": True, "data": 130}

    def test_large_results_are_clipped_in_the_ring(self, store: Store) -> None:
        job_id = watcher_job(store)
        big = {"success": True, "data": "x" * (RESULT_LIMIT * 2)}
        record(store, job_id, {"checks": 1}, check(1, result=big))
        (stored,) = store.watcher_history(job_id)
        assert stored.result == bounded_result(big)
        assert stored.result["clipped"] is True
        assert len(stored.result["data"]) == RESULT_LIMIT

    def test_a_check_of_a_deleted_watcher_is_dropped_and_the_others_kept(
        self, store: Store
    ) -> None:
        kept, deleted = watcher_job(store), watcher_job(store)
        store.delete_job(deleted, owner="alice")
        store.record_checks(
            [(deleted, "alice", {"checks": 1}, check(1)), (kept, "alice", {"checks": 1}, check(1))]
        )
        assert store.get_watcher(deleted) is None
        assert [h.check for h in store.watcher_history(kept)] == [1]

    def test_state_and_results_go_with_the_job(self, store: Store) -> None:
        job_id = watcher_job(store)
        record(store, job_id, {"checks": 1}, check(1))
        store.delete_job(job_id, owner="alice")
        assert store.get_watcher(job_id) is None
        assert store.watcher_history(job_id) == []

    def test_every_ring_of_checks_trims_the_finished_runs_to_the_newest(self, store: Store) -> None:
        job_id = watcher_job(store)
        job = store.get_job(job_id, owner="alice")
        finished = [
            make_run(job, T0 + timedelta(seconds=n), status=RunStatus.SUCCEEDED)
            for n in range(RING_SIZE + 20)
        ]
        running = make_run(job, T0 - timedelta(hours=1))
        store.insert_runs([*finished, running])
        record(store, job_id, {"checks": RING_SIZE - 1}, check(RING_SIZE - 1))
        assert len(store.list_runs(owner="alice")) == RING_SIZE + 21
        record(store, job_id, {"checks": RING_SIZE}, check(RING_SIZE))
        left = {run.id for run in store.list_runs(owner="alice")}
        assert left == {run.id for run in finished[-RING_SIZE:]} | {running.id}

    def test_watchers_survive_a_restart(self, open_store: OpenStore) -> None:
        first = open_store()
        job_id = watcher_job(first)
        record(first, job_id, {"checks": 1}, check(1, notified=True))
        first.close()
        second = open_store()
        saved = second.get_watcher(job_id)
        assert saved is not None
        assert saved.last_notified_at == check(1).checked_at
        assert second.watcher_history(job_id) == [check(1, notified=True)]


def note(number: int) -> dict[str, Any]:
    return {"id": f"n{number}", "message": f"message {number}"}


def held_ids(
    buffer: NotificationBuffer, owner: str, session: str | None, *, now: datetime = T0
) -> list[str]:
    return [n["id"] for n in buffer.buffered_notifications(owner, session, now=now)]


class TestNotificationBuffer:
    def test_held_per_session_and_taking_empties_it(self, store: Store) -> None:
        for number in range(3):
            store.buffer_notification(
                "alice", "a.ipynb", note(number), now=T0 + timedelta(seconds=number)
            )
        store.buffer_notification("alice", "b.ipynb", note(9), now=T0)
        store.buffer_notification("bob", "a.ipynb", note(8), now=T0)
        assert held_ids(store, "alice", "a.ipynb") == ["n0", "n1", "n2"]
        assert sorted(held_ids(store, "alice", None)) == ["n0", "n1", "n2", "n9"]
        taken = store.take_notifications("alice", "a.ipynb", now=T0 + timedelta(minutes=1))
        assert taken == [note(0), note(1), note(2)]
        assert store.take_notifications("alice", "a.ipynb", now=T0) == []
        assert held_ids(store, "alice", None) == ["n9"]
        assert held_ids(store, "bob", None) == ["n8"]

    def test_a_notification_comes_back_as_it_was_held(self, store: Store) -> None:
        document = {"id": "n1", "message": "é ✓", "level": "warning", "data": {"n": [1, 2.5]}}
        store.buffer_notification("alice", "a.ipynb", document, now=T0)
        assert store.buffered_notifications("alice", "a.ipynb", now=T0) == [document]

    def test_the_same_id_again_replaces_the_held_one(self, store: Store) -> None:
        store.buffer_notification("alice", "a.ipynb", note(1), now=T0)
        again = {**note(1), "message": "again"}
        store.buffer_notification("alice", "a.ipynb", again, now=T0 + timedelta(seconds=1))
        assert store.buffered_notifications("alice", "a.ipynb", now=T0) == [again]

    def test_keeps_the_newest_per_session(self, store: Store) -> None:
        for number in range(BUFFER_LIMIT + 20):
            store.buffer_notification(
                "alice", "a.ipynb", note(number), now=T0 + timedelta(seconds=number)
            )
        store.buffer_notification("alice", "b.ipynb", note(999), now=T0)
        held = held_ids(store, "alice", "a.ipynb", now=T0 + timedelta(minutes=5))
        assert len(held) == BUFFER_LIMIT
        assert (held[0], held[-1]) == ("n20", f"n{BUFFER_LIMIT + 19}")
        assert held_ids(store, "alice", "b.ipynb") == ["n999"]

    def test_held_notifications_expire_after_a_day(self, store: Store) -> None:
        store.buffer_notification("alice", "a.ipynb", note(1), now=T0)
        store.buffer_notification("alice", "a.ipynb", note(2), now=T0 + timedelta(hours=12))
        later = T0 + timedelta(hours=25)
        assert held_ids(store, "alice", "a.ipynb", now=later) == ["n2"]
        assert [n["id"] for n in store.take_notifications("alice", "a.ipynb", now=later)] == ["n2"]

    def test_held_notifications_survive_a_restart(self, open_store: OpenStore) -> None:
        first = open_store()
        first.buffer_notification("alice", "a.ipynb", note(1), now=T0)
        first.close()
        assert open_store().take_notifications("alice", "a.ipynb", now=T0) == [note(1)]


@pytest.mark.parametrize("session", ["a.ipynb", None])
def test_another_owner_sees_no_held_notification(store: Store, session: str | None) -> None:
    store.buffer_notification("alice", "a.ipynb", note(1), now=T0)
    assert store.buffered_notifications("bob", session, now=T0) == []
    assert store.take_notifications("bob", "a.ipynb", now=T0) == []
    assert held_ids(store, "alice", session) == ["n1"]
