"""The ``WatcherStore`` and ``NotificationBuffer`` protocols on PostgreSQL (migration 2).

The same tables and semantics as ``sqlite_watchers.py``: ``PostgresWatcherTables`` is mixed
into ``PostgresStore`` and runs on its connection, under its lock and transactions. The
notification buffer orders by ``seq`` where SQLite orders by rowid.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, Protocol

from jupyter_recall.core.documents import NotificationJSON
from jupyter_recall.store.codec import check_from_row as _check
from jupyter_recall.store.codec import encode_instant
from jupyter_recall.store.codec import watcher_from_row as _watcher
from jupyter_recall.store.codec import watcher_result_row as _result_row
from jupyter_recall.store.codec import watcher_state_row as _state_row
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


def _marks(fields: Sequence[str]) -> str:
    return ", ".join(["%s"] * len(fields))


_STATE_SELECT = f"SELECT {columns(WatcherStateRow._fields)} FROM watcher_state"
_STATE_VALUES = (
    f"INTO watcher_state ({columns(WatcherStateRow._fields)}) "
    f"VALUES ({_marks(WatcherStateRow._fields)})"
)
_STATE_CREATE = f"INSERT {_STATE_VALUES} ON CONFLICT (job_id) DO NOTHING"
# A check without a notification keeps the instant of the last one.
_STATE_UPSERT = (
    f"INSERT {_STATE_VALUES} ON CONFLICT (job_id) DO UPDATE SET state = excluded.state, "
    "checks = excluded.checks, notifications = excluded.notifications, "
    "last_check_at = excluded.last_check_at, "
    "last_notified_at = COALESCE(excluded.last_notified_at, watcher_state.last_notified_at), "
    "updated_at = excluded.updated_at"
)
_RESULT_INSERT = (
    f"INSERT INTO watcher_results ({columns(WatcherResultRow._fields)}) "
    f"VALUES ({_marks(WatcherResultRow._fields)}) ON CONFLICT (job_id, check_number) DO UPDATE "
    "SET " + ", ".join(f"{name} = excluded.{name}" for name in WatcherResultRow._fields[2:])
)
_RESULT_SELECT = (
    f"SELECT {columns(WatcherResultRow._fields)} FROM watcher_results "
    "WHERE job_id = %s ORDER BY check_number DESC LIMIT %s"
)
_TRIM_RESULTS = "DELETE FROM watcher_results WHERE job_id = %s AND check_number <= %s"
_TRIM_RUNS = (
    "DELETE FROM runs WHERE job_id = %s AND status != 'running' AND id NOT IN "
    "(SELECT id FROM runs WHERE job_id = %s ORDER BY scheduled_for DESC LIMIT %s)"
)
# A notification with the id of a held one replaces it and goes last, as a new one would.
_BUFFER_INSERT = (
    f"INSERT INTO notification_buffer ({columns(BufferedNotificationRow._fields)}) "
    f"VALUES ({_marks(BufferedNotificationRow._fields)}) ON CONFLICT (id) DO UPDATE SET "
    "owner = excluded.owner, session = excluded.session, created_at = excluded.created_at, "
    "notification = excluded.notification, seq = excluded.seq"
)
_BUFFER_TRIM = (
    "DELETE FROM notification_buffer WHERE owner = %s AND session = %s AND id NOT IN "
    "(SELECT id FROM notification_buffer WHERE owner = %s AND session = %s "
    "ORDER BY created_at DESC, seq DESC LIMIT %s)"
)


def _held(owner: str, session: str | None, now: datetime) -> tuple[str, list[Any]]:
    clauses = ["owner = %s", "created_at >= %s"]
    params: list[Any] = [owner, encode_instant(now - BUFFER_TTL, "now")]
    if session is not None:
        clauses.append("session = %s")
        params.append(session)
    where = " AND ".join(clauses)
    return (
        f"SELECT notification FROM notification_buffer WHERE {where} ORDER BY created_at, seq",
        params,
    )


class _Connected(Protocol):
    """What the tables need of the store they are mixed into (``PostgresStore``)."""

    def atomic(self) -> AbstractContextManager[None]: ...

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]: ...

    def _write(self, sql: str, params: Sequence[Any] = ()) -> int: ...

    def _write_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None: ...

    def _existing_ids(self, table: str, ids: Iterable[str]) -> set[str]: ...


class PostgresWatcherTables:
    """``WatcherStore`` and ``NotificationBuffer`` on the PostgreSQL store's connection."""

    def create_watcher(
        self: _Connected, job_id: str, owner: str, state: Mapping[str, Any], *, now: datetime
    ) -> None:
        row = WatcherStateRow(
            job_id=job_id,
            owner=owner,
            state=json_text(state),
            checks=0,
            notifications=0,
            last_check_at=None,
            last_notified_at=None,
            updated_at=encode_instant(now, "now"),
        )
        with self.atomic():
            self._write(_STATE_CREATE, row)

    def get_watcher(self: _Connected, job_id: str) -> WatcherRecord | None:
        rows = self._rows(f"{_STATE_SELECT} WHERE job_id = %s", (job_id,))
        return _watcher(rows[0]) if rows else None

    def get_watchers(self: _Connected, job_ids: Sequence[str]) -> dict[str, WatcherRecord]:
        found: dict[str, WatcherRecord] = {}
        for values in self._rows(f"{_STATE_SELECT} WHERE job_id = ANY(%s)", (list(job_ids),)):
            record = _watcher(values)
            found[record.job_id] = record
        return found

    def record_checks(self: _Connected, checks: Sequence[PendingCheck]) -> None:
        with self.atomic():
            alive = self._existing_ids("jobs", [job_id for job_id, _, _, _ in checks])
            kept = [item for item in checks if item[0] in alive]
            self._write_many(_STATE_UPSERT, [_state_row(item) for item in kept])
            self._write_many(_RESULT_INSERT, [_result_row(item) for item in kept])
            self._write_many(
                _TRIM_RESULTS, [(job_id, check.check - RING_SIZE) for job_id, _, _, check in kept]
            )
            # A watcher at 5 s makes 17,280 runs a day: every RING_SIZE checks, trim them.
            self._write_many(
                _TRIM_RUNS,
                [
                    (job_id, job_id, RING_SIZE)
                    for job_id, _, _, check in kept
                    if check.check % RING_SIZE == 0
                ],
            )

    def watcher_history(
        self: _Connected, job_id: str, last_n: int = RING_SIZE
    ) -> list[CheckRecord]:
        return [_check(values) for values in self._rows(_RESULT_SELECT, (job_id, last_n))]

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
            self._write(_BUFFER_INSERT, row)
            self._write("DELETE FROM notification_buffer WHERE created_at < %s", (expired,))
            self._write(_BUFFER_TRIM, (owner, session, owner, session, BUFFER_LIMIT))

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
            rows = self._rows(sql, params)
            self._write(
                "DELETE FROM notification_buffer WHERE owner = %s AND session = %s",
                (owner, session),
            )
        return [json.loads(text) for (text,) in rows]
