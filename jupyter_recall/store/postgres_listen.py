"""LISTEN/NOTIFY for the PostgreSQL store: the writes that give jobs a fire instant send it on
``CHANNEL`` (delivered when their transaction commits), and a ``Listener`` thread per listening
store object waits for them on a dedicated connection and calls its listeners.

A cut connection is opened again with backoff; the listeners are then called with None, since
changes may have been missed meanwhile.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime

import psycopg

from jupyter_recall.store.changes import ChangeListener
from jupyter_recall.store.codec import decode_instant

CHANNEL = "recall_jobs"
NOTIFY = "SELECT pg_notify('recall_jobs', %s)"
POLL = 0.5
"""Seconds between two looks at the stop flag while no notification comes (not a poll of
the database: the wait is on the socket)."""
BACKOFF = (0.1, 0.5, 1.0, 2.0, 5.0)
"""Seconds before each try at opening the connection again; the last repeats."""

log = logging.getLogger("jupyter_recall.store.postgres")


def payload(fire_at: int | None) -> str:
    return "" if fire_at is None else str(fire_at)


def instant(text: str) -> datetime | None:
    try:
        return decode_instant(int(text))
    except ValueError:
        return None


class Listener:
    """One thread on one connection, calling every listener added with each notification."""

    def __init__(self, url: str, where: str) -> None:
        self.url = url
        self.where = where
        self._listeners: list[ChangeListener] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="recall-pg-listen", daemon=True)
        self._thread.start()
        self._ready.wait(timeout=10)

    def add(self, listener: ChangeListener) -> Callable[[], None]:
        with self._lock:
            self._listeners.append(listener)

        def remove() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return remove

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _call(self, fire_at: datetime | None) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(fire_at)
            except Exception:
                log.exception("a listener of job changes failed")

    def _run(self) -> None:
        attempt = 0
        while not self._stop.is_set():
            try:
                with psycopg.connect(self.url, autocommit=True) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    if attempt:
                        self._call(None)  # changes made while cut off were not heard
                    attempt = 0
                    self._ready.set()
                    self._serve(conn)
            except psycopg.Error as exc:
                delay = BACKOFF[min(attempt, len(BACKOFF) - 1)]
                attempt += 1
                log.warning(
                    "listening for job changes on %s: %s; again in %s s", self.where, exc, delay
                )
                self._ready.set()
                self._stop.wait(delay)

    def _serve(self, conn: psycopg.Connection[tuple[object, ...]]) -> None:
        while not self._stop.is_set():
            for note in conn.notifies(timeout=POLL):
                self._call(instant(note.payload))
