"""LISTEN/NOTIFY for the PostgreSQL store: the writes that give jobs a fire instant send it on
``CHANNEL`` (delivered when their transaction commits), and a ``Listener`` thread per listening
store object waits for them on a dedicated connection and calls its listeners. Messages between
servers (``EventFeed``: the engines' events) go on ``EVENTS_CHANNEL``, heard by the same thread.

A cut connection is opened again with backoff; the listeners are then called with None, since
changes may have been missed meanwhile.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any
from urllib.parse import unquote, urlsplit

import psycopg

from jupyter_recall.core.errors import StoreError
from jupyter_recall.store.changes import ChangeListener, EventListener
from jupyter_recall.store.codec import decode_instant

CHANNEL = "recall_jobs"
NOTIFY = "SELECT pg_notify('recall_jobs', %s)"
EVENTS_CHANNEL = "recall_events"
NOTIFY_EVENTS = "SELECT pg_notify('recall_events', p) FROM unnest(%s::text[]) AS p"
PAYLOAD_LIMIT = 7999
"""PostgreSQL refuses a NOTIFY payload of 8000 bytes or more."""
POLL = 0.5
"""Seconds between two looks at the stop flag while no notification comes (not a poll of
the database: the wait is on the socket)."""
BACKOFF = (0.1, 0.5, 1.0, 2.0, 5.0)
"""Seconds before each try at opening the connection again; the last repeats."""

log = logging.getLogger("jupyter_recall.store.postgres")


def scrubbed(error: BaseException, url: str) -> str:
    """The driver's message of ``error`` without the URL's password: libpq may quote a part of
    the connection string it could not read, and that part may be the password."""
    text = str(error)
    for secret in _passwords(url):
        text = text.replace(secret, "***")
    return text


def _passwords(url: str) -> set[str]:
    """The password as written in ``url`` and as decoded (either may be quoted back)."""
    try:
        written = urlsplit(url).password
    except ValueError:
        written = None
    try:
        read = psycopg.conninfo.conninfo_to_dict(url).get("password")
    except psycopg.Error:
        read = None
    found = {str(secret) for secret in (written, read) if secret}
    return found | {unquote(secret) for secret in found}


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
        self._event_listeners: list[EventListener] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="recall-pg-listen", daemon=True)
        self._thread.start()
        self._ready.wait(timeout=10)

    def add(self, listener: ChangeListener) -> Callable[[], None]:
        return self._added(self._listeners, listener)

    def add_events(self, listener: EventListener) -> Callable[[], None]:
        return self._added(self._event_listeners, listener)

    def _added(self, listeners: list[Any], listener: Any) -> Callable[[], None]:
        with self._lock:
            listeners.append(listener)

        def remove() -> None:
            with self._lock:
                if listener in listeners:
                    listeners.remove(listener)

        return remove

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _call(self, fire_at: datetime | None) -> None:
        self._each(self._listeners, fire_at, "job changes")

    def _run(self) -> None:
        attempt = 0
        while not self._stop.is_set():
            try:
                with psycopg.connect(self.url, autocommit=True) as conn:
                    conn.execute(f"LISTEN {CHANNEL}; LISTEN {EVENTS_CHANNEL}")
                    if attempt:
                        self._call(None)  # changes made while cut off were not heard
                    attempt = 0
                    self._ready.set()
                    self._serve(conn)
            except psycopg.Error as exc:
                delay = BACKOFF[min(attempt, len(BACKOFF) - 1)]
                attempt += 1
                log.warning(
                    "listening for job changes on %s: %s; again in %s s",
                    self.where,
                    scrubbed(exc, self.url),
                    delay,
                )
                self._ready.set()
                self._stop.wait(delay)

    def _serve(self, conn: psycopg.Connection[tuple[object, ...]]) -> None:
        while not self._stop.is_set():
            for note in conn.notifies(timeout=POLL):
                if note.channel == EVENTS_CHANNEL:
                    self._call_events(note.payload)
                else:
                    self._call(instant(note.payload))

    def _call_events(self, text: str) -> None:
        self._each(self._event_listeners, text, "events")

    def _each(self, listeners: list[Any], value: object, what: str) -> None:
        with self._lock:
            called = list(listeners)
        for listener in called:
            try:
                listener(value)
            except Exception:
                log.exception("a listener of %s failed", what)


class Publisher:
    """NOTIFY on ``EVENTS_CHANNEL`` from a connection of its own, so that publishing never
    waits for the store's transactions (a firing pass) nor holds them up. A broken
    connection is opened again at the next call."""

    def __init__(self, url: str, where: str, connect_timeout: int) -> None:
        self.url = url
        self.where = where
        self.connect_timeout = connect_timeout
        self._conn: psycopg.Connection[tuple[object, ...]] | None = None
        self._lock = threading.Lock()

    def publish(self, payloads: Sequence[str]) -> None:
        """One statement for all of ``payloads``; StoreError when the database is unreachable."""
        if not payloads:
            return
        with self._lock:
            reused = self._conn is not None and not (self._conn.closed or self._conn.broken)
            try:
                try:
                    self._send(payloads)
                except psycopg.OperationalError:
                    if not reused:
                        raise
                    # A connection the database dropped (a restart) fails at its first use
                    # only: once more on a new one before the notes are given up.
                    self._send(payloads)
            except psycopg.Error as exc:
                raise StoreError(
                    f"PostgreSQL store ({self.where}): {scrubbed(exc, self.url)}"
                ) from exc

    def _send(self, payloads: Sequence[str]) -> None:
        if self._conn is None or self._conn.closed or self._conn.broken:
            self._conn = psycopg.connect(
                self.url, autocommit=True, connect_timeout=self.connect_timeout
            )
        self._conn.execute(NOTIFY_EVENTS, (list(payloads),))

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
