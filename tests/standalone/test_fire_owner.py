"""One scheduler per user on a shared store: each fires its own user's jobs only."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

from jupyter_recall.core.records import NotificationAction
from jupyter_recall.engine.jobs import NewJob, create_jobs
from jupyter_recall.store.base import RunFilter
from jupyter_recall.store.urls import open_store
from tests.standalone.scheduler_process import SchedulerProcess


def runs_of(db: Path, job_id: str) -> int:
    store = open_store(f"sqlite:///{db}")
    try:
        return len(store.list_runs(owner=None, where=RunFilter(job_id=job_id)))
    finally:
        store.close()


def test_a_scheduler_for_one_user_fires_that_users_jobs_only(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    db = tmp_path / "recall.sqlite"
    store = open_store(f"sqlite:///{db}")
    try:
        due = [NewJob(when="in 2 seconds", action=NotificationAction("hello"))]
        now = datetime.now(UTC)
        (alices,) = create_jobs(store, due, owner="alice", now=now, default_tz="UTC")
        (bobs,) = create_jobs(store, due, owner="bob", now=now, default_tz="UTC")
    finally:
        store.close()
    scheduler = SchedulerProcess(root, db, args=("--fire-owner=alice",)).start()
    try:
        assert "alice's jobs in" in scheduler.log.read_text()
        deadline = time.monotonic() + 45
        while runs_of(db, alices.id) == 0 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert runs_of(db, alices.id) == 1
        time.sleep(3)  # bob's job was due as long ago as alice's
        assert runs_of(db, bobs.id) == 0
    finally:
        scheduler.stop()
