"""Checkpoints of the SQLite log in a thread of their own: with ``background_checkpoints``
the pages written reach the database file without a commit running the checkpoint."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path

from jupyter_recall.store.sqlite import SQLiteStore
from jupyter_recall.store.sqlite_checkpoint import BACKSTOP_PAGES
from jupyter_recall.store.urls import open_store, sqlite_url
from tests.store.factories import make_job


def checkpoint_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "recall-sqlite-checkpoint"]


def test_the_log_reaches_the_file_without_the_commits(tmp_path: Path) -> None:
    path = tmp_path / "recall.sqlite"
    before = len(checkpoint_threads())
    store = SQLiteStore(path, background_checkpoints=True)
    try:
        assert store.db.execute("PRAGMA wal_autocheckpoint").fetchone() == (BACKSTOP_PAGES,)
        assert len(checkpoint_threads()) == before + 1
        empty = os.path.getsize(path)
        for _ in range(20):
            store.insert_jobs([make_job() for _ in range(50)])
        # The commits only appended to the log (far below the backstop); the thread moves
        # the pages into the file.
        deadline = time.monotonic() + 60
        while os.path.getsize(path) <= empty and time.monotonic() < deadline:
            time.sleep(0.05)
        assert os.path.getsize(path) > empty
        with sqlite3.connect(path) as reader:
            assert reader.execute("SELECT count(*) FROM jobs").fetchone() == (1000,)
    finally:
        store.close()
    assert len(checkpoint_threads()) == before


def test_only_stores_that_ask_get_the_thread(tmp_path: Path) -> None:
    before = len(checkpoint_threads())
    plain = SQLiteStore(tmp_path / "plain.sqlite")
    memory = SQLiteStore(":memory:", background_checkpoints=True)
    assert len(checkpoint_threads()) == before
    plain.close()
    memory.close()
    by_url = open_store(sqlite_url(tmp_path / "served.sqlite"))
    assert len(checkpoint_threads()) == before + 1
    by_url.close()
    assert len(checkpoint_threads()) == before
