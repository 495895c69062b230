"""The ``WatcherStore`` and ``NotificationBuffer`` protocols on SQLite (tables of migration 2).

``watcher_state`` holds a watcher's escalation state and counters, ``watcher_results`` the ring
of its last checks (both deleted with their job), ``notification_buffer`` the notifications
held for absent sessions. ``SQLiteWatcherTables`` is mixed into ``SQLiteStore``: it runs on the
store's connection, under its lock and transactions.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, Protocol

from jupyter_recall.core.documents import NotificationJSON
from jupyter_recall.store import codec
from jupyter_recall.store.codec import encode_instant
from jupyter_recall.store.rows import (
    BufferedNotificationRow,
    WatcherResultRow,
    WatcherStateRow,
    columns,
)
from jupyter_recall.store.watchers import (
    BUFFER_LIMIT,
    BUFFER_TTL,
    RING_SIZE,
    CheckRecord,
    PendingCheck,
    WatcherRecord,
    json_text,
)

_IN_CHUNK = 500


def _marks(fields: Sequence[str]) -> str:
    return ", ".join("?" * len(fields))


_STATE_SELECT = f"SELECT {columns(WatcherStateRow._fields)} FROM watcher_state"
_STATE_VALUES = (
    f"INTO watcher_state ({columns(WatcherStateRow._fields)}) "
    f"VALUES ({_marks(WatcherStateRow._fields)})"
)
_STATE_CREATE = f"INSERT OR IGNORE {_STATE_VALUES}"
# A check without a notification keeps the instant of the last one.
_STATE_UPSERT = (
    f"INSERT {_STATE_VALUES} ON CONFLICT (job_id) DO UPDATE SET state = excluded.state, "
    "checks = excluded.checks, notifications = excluded.notifications, "
    "last_check_at = excluded.last_check_at, "
    "last_notified_at = COALESCE(excluded.last_notified_at, last_notified_at), "
    "updated_at = excluded.updated_at"
)
_RESULT_INSERT = (
    f"INSERT OR REPLACE INTO watcher_results ({columns(WatcherResultRow._fields)}) "
    f"VALUES ({_marks(WatcherResultRow._fields)})"
)
_RESULT_SELECT = (
    f"SELECT {columns(WatcherResultRow._fields)} FROM watcher_results "
    "WHERE job_id = ? ORDER BY check_number DESC LIMIT ?"
)
_TRIM_RESULTS = "DELETE FROM watcher_results WHERE job_id = ? AND check_number <= ?"
_TRIM_RUNS = (
    "DELETE FROM runs WHERE job_id = ? AND status != 'running' AND id NOT IN "
    "(SELECT id FROM runs WHERE job_id = ? ORDER BY scheduled_for DESC LIMIT ?)"
)
_BUFFER_INSERT = (
    f"INSERT OR REPLACE INTO notification_buffer ({columns(BufferedNotificationRow._fields)}) "
    f"VALUES ({_marks(BufferedNotificationRow._fields)})"
)
_BUFFER_TRIM = (
    "DELETE FROM notification_buffer WHERE owner = ? AND session = ? AND id NOT IN "
    "(SELECT id FROM notification_buffer WHERE owner = ? AND session = ? "
    "ORDER BY created_at DESC, rowid DESC LIMIT ?)"
)


def _held(owner: str, session: str | None, now: datetime) -> tuple[str, list[Any]]:
    """The SELECT of the notifications held (not expired) for a session or all of an owner's,
    oldest first."""
    clauses = ["owner = ?", "created_at >= ?"]
    params: list[Any] = [owner, encode_instant(now - BUFFER_TTL, "now")]
    if session is not None:
        clauses.append("session = ?")
        params.append(session)
    where = " AND ".join(clauses)
    return (
        f"SELECT notification FROM notification_buffer WHERE {where} ORDER BY created_at, rowid",
        params,
    )


class _Connected(Protocol):
    """What the tables need of the store they are mixed into (``SQLiteStore``)."""

    @property
    def _conn(self) -> sqlite3.Connection: ...

    def atomic(self) -> AbstractContextManager[None]: ...

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]: ...

    def _existing_ids(self, table: str, ids: Iterable[str]) -> set[str]: ...


class SQLiteWatcherTables:
    """``WatcherStore`` and ``NotificationBuffer`` on the SQLite store's connection."""

    # --- watchers ---------------------------------------------------------------------------

    def create_watcher(
        self: _Connected, job_id: str, owner: str, state: Mapping[str, Any], *, now: datetime
    ) -> None:
        at = encode_instant(now, "now")
        row = WatcherStateRow(
            job_id=job_id,
            owner=owner,
            state=json_text(state),
            checks=0,
            notifications=0,
            last_check_at=None,
            last_notified_at=None,
            updated_at=at,
        )
        with self.atomic():
            self._conn.execute(_STATE_CREATE, row)

    def get_watcher(self: _Connected, job_id: str) -> WatcherRecord | None:
        rows = self._rows(f"{_STATE_SELECT} WHERE job_id = ?", (job_id,))
        return codec.watcher_from_row(rows[0]) if rows else None

    def get_watchers(self: _Connected, job_ids: Sequence[str]) -> dict[str, WatcherRecord]:
        found: dict[str, WatcherRecord] = {}
        for start in range(0, len(job_ids), _IN_CHUNK):
            chunk = list(job_ids[start : start + _IN_CHUNK])
            sql = f"{_STATE_SELECT} WHERE job_id IN ({_marks(chunk)})"
            for values in self._rows(sql, chunk):
                record = codec.watcher_from_row(values)
                found[record.job_id] = record
        return found

    def record_checks(self: _Connected, checks: Sequence[PendingCheck]) -> None:
        with self.atomic():
            alive = self._existing_ids("jobs", [job_id for job_id, _, _, _ in checks])
            kept = [item for item in checks if item[0] in alive]
            connection = self._conn
            connection.executemany(_STATE_UPSERT, list(map(codec.watcher_state_row, kept)))
            connection.executemany(_RESULT_INSERT, list(map(codec.watcher_result_row, kept)))
            connection.executemany(
                _TRIM_RESULTS, [(job_id, check.check - RING_SIZE) for job_id, _, _, check in kept]
            )
            # A watcher at 5 s makes 17,280 runs a day: every RING_SIZE checks, trim them.
            trims = [
                (job_id, job_id, RING_SIZE)
                for job_id, _, _, check in kept
                if check.check % RING_SIZE == 0
            ]
            if trims:
                connection.executemany(_TRIM_RUNS, trims)

    def watcher_history(
        self: _Connected, job_id: str, last_n: int = RING_SIZE
    ) -> list[CheckRecord]:
        return list(map(codec.check_from_row, self._rows(_RESULT_SELECT, (job_id, last_n))))

    # --- the notification buffer --------------------------------------------------------------

    def buffer_notification(
        self: _Connected,
        owner: str,
        session: str,
        notification: NotificationJSON,
        *,
        now: datetime,
    ) -> None:
        row = BufferedNotificationRow(
            id=str(notification["id"]),
            owner=owner,
            session=session,
            created_at=encode_instant(now, "now"),
            notification=json_text(notification),
        )
        expired = encode_instant(now - BUFFER_TTL, "now")
        with self.atomic():
            self._conn.execute(_BUFFER_INSERT, row)
            self._conn.execute("DELETE FROM notification_buffer WHERE created_at < ?", (expired,))
            self._conn.execute(_BUFFER_TRIM, (owner, session, owner, session, BUFFER_LIMIT))

    def buffered_notifications(
        self: _Connected, owner: str, session: str | None, *, now: datetime
    ) -> list[NotificationJSON]:
        sql, params = _held(owner, session, now)
        return [json.loads(text) for (text,) in self._rows(sql, params)]

    def take_notifications(
        self: _Connected, owner: str, session: str, *, now: datetime
    ) -> list[NotificationJSON]:
        sql, params = _held(owner, session, now)
        with self.atomic():
            rows = self._conn.execute(sql, params).fetchall()
            self._conn.execute(
                "DELETE FROM notification_buffer WHERE owner = ? AND session = ?", (owner, session)
            )
        return [json.loads(text) for (text,) in rows]
