"""Watcher state, the ring buffer of results and the notification buffer (migration 2)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from jupyter_recall.core.model import JobKind
from jupyter_recall.store.sqlite import SQLiteStore
from jupyter_recall.store.watchers import (
    BUFFER_LIMIT,
    RESULT_LIMIT,
    RING_SIZE,
    CheckRecord,
    WatcherStore,
)
from tests.store.contract import T0, make_job


@pytest.fixture
def sqlite(tmp_path: Path):
    store = SQLiteStore(tmp_path / "recall.db")
    yield store
    store.close()


@pytest.fixture
def watchers(sqlite: SQLiteStore) -> WatcherStore:
    return WatcherStore(sqlite)


def watcher_job(sqlite: SQLiteStore, owner: str = "alice") -> str:
    job = make_job(owner=owner, kind=JobKind.WATCHER, when="every 5s")
    with sqlite.atomic():
        sqlite.insert_jobs([job])
    return job.id


def check(number: int, *, notified: bool = False, result=None) -> CheckRecord:
    return CheckRecord(
        check=number,
        checked_at=T0 + timedelta(seconds=5 * number),
        success=True,
        result=result if result is not None else {"success": True, "data": number},
        notified=notified,
        reason="changed" if notified else "unchanged",
        run_id=f"run{number}",
    )


def test_state_and_counters_are_saved_with_each_check(sqlite, watchers):
    job_id = watcher_job(sqlite)
    watchers.create(job_id, "alice", {"checks": 0}, now=T0)
    assert watchers.get(job_id).checks == 0
    watchers.record_check(
        job_id, "alice", {"checks": 1, "notifications": 1}, check(1, notified=True)
    )
    watchers.record_check(job_id, "alice", {"checks": 2, "notifications": 1}, check(2))
    record = watchers.get(job_id)
    assert (record.checks, record.notifications) == (2, 1)
    assert record.state == {"checks": 2, "notifications": 1}
    assert record.last_check_at == T0 + timedelta(seconds=10)
    assert record.last_notified_at == T0 + timedelta(seconds=5)
    assert watchers.get("nope") is None
    assert set(watchers.get_many([job_id, "nope"])) == {job_id}


def test_the_ring_keeps_the_last_hundred_results_newest_first(sqlite, watchers):
    job_id = watcher_job(sqlite)
    for number in range(1, RING_SIZE + 31):
        watchers.record_check(job_id, "alice", {"checks": number}, check(number))
    history = watchers.history(job_id)
    assert len(history) == RING_SIZE
    assert [h.check for h in history[:3]] == [130, 129, 128]
    assert history[-1].check == 31
    assert [h.check for h in watchers.history(job_id, 2)] == [130, 129]
    assert history[0].to_json()["result"] == {"success": True, "data": 130}


def test_large_results_are_clipped_in_the_ring(sqlite, watchers):
    job_id = watcher_job(sqlite)
    big = {"success": True, "data": "x" * (RESULT_LIMIT * 2)}
    watchers.record_check(job_id, "alice", {"checks": 1}, check(1, result=big))
    (stored,) = watchers.history(job_id)
    assert stored.result["clipped"] is True
    assert len(stored.result["data"]) == RESULT_LIMIT


def test_state_and_results_go_with_the_job(sqlite, watchers):
    job_id = watcher_job(sqlite)
    watchers.record_check(job_id, "alice", {"checks": 1}, check(1))
    sqlite.delete_job(job_id, owner="alice")
    assert watchers.get(job_id) is None
    assert watchers.history(job_id) == []


def note(number: int) -> dict:
    return {"id": f"n{number}", "message": f"message {number}"}


def test_buffer_holds_per_session_and_take_empties_it(watchers):
    for number in range(3):
        watchers.buffer("alice", "a.ipynb", note(number), now=T0 + timedelta(seconds=number))
    watchers.buffer("alice", "b.ipynb", note(9), now=T0)
    watchers.buffer("bob", "a.ipynb", note(8), now=T0)
    assert [n["id"] for n in watchers.buffered("alice", "a.ipynb", now=T0)] == ["n0", "n1", "n2"]
    assert len(watchers.buffered("alice", None, now=T0)) == 4
    taken = watchers.take("alice", "a.ipynb", now=T0 + timedelta(minutes=1))
    assert [n["message"] for n in taken] == ["message 0", "message 1", "message 2"]
    assert watchers.take("alice", "a.ipynb", now=T0) == []
    assert [n["id"] for n in watchers.buffered("alice", None, now=T0)] == ["n9"]
    assert [n["id"] for n in watchers.buffered("bob", None, now=T0)] == ["n8"]


def test_buffer_keeps_the_newest_hundred_per_session(watchers):
    for number in range(BUFFER_LIMIT + 20):
        watchers.buffer("alice", "a.ipynb", note(number), now=T0 + timedelta(seconds=number))
    held = watchers.buffered("alice", "a.ipynb", now=T0 + timedelta(minutes=5))
    assert len(held) == BUFFER_LIMIT
    assert held[0]["id"] == "n20"
    assert held[-1]["id"] == f"n{BUFFER_LIMIT + 19}"


def test_buffered_notifications_expire_after_a_day(watchers):
    watchers.buffer("alice", "a.ipynb", note(1), now=T0)
    watchers.buffer("alice", "a.ipynb", note(2), now=T0 + timedelta(hours=12))
    later = T0 + timedelta(hours=25)
    assert [n["id"] for n in watchers.buffered("alice", "a.ipynb", now=later)] == ["n2"]
    assert [n["id"] for n in watchers.take("alice", "a.ipynb", now=later)] == ["n2"]


def test_migration_two_applies_to_a_file_made_by_version_one(tmp_path):
    path = tmp_path / "old.db"
    store = SQLiteStore(path)
    job = make_job(kind=JobKind.WATCHER, when="every 5s")
    with store.atomic():
        store.insert_jobs([job])
        store.db.execute("DROP TABLE watcher_results")
        store.db.execute("DROP TABLE watcher_state")
        store.db.execute("DROP TABLE notification_buffer")
        store.db.execute("DELETE FROM migrations WHERE version = 2")
    store.close()
    reopened = SQLiteStore(path)
    try:
        assert [m.version for m in reopened.applied_migrations] == [2]
        assert reopened.get_job(job.id, owner=None).id == job.id
        WatcherStore(reopened).record_check(job.id, job.owner, {"checks": 1}, check(1))
        assert WatcherStore(reopened).get(job.id).checks == 1
    finally:
        reopened.close()
