"""Persistence of watchers and of notifications held for absent sessions (SQLite, migration 2).

A watcher is a job of kind ``watcher`` (its configuration is in the job's ``options``); what
changes at every check lives here, off the job row, so that a check never rewrites the job nor
sends a ``job.updated`` event: its escalation state and counters (``watcher_state``) and the ring
buffer of its last ``RING_SIZE`` results (``watcher_results``). Both go with the job (ON DELETE
CASCADE).

``notification_buffer`` holds notifications for notebook sessions whose kernel was not
listening: at most ``BUFFER_LIMIT`` per session (the oldest go first), each for
``BUFFER_TTL``; the kernel takes them when it connects again.

Synchronous, like the store; the server calls it from a worker thread. Every call takes ``now``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from jupyter_recall.store.codec import decode_instant, decode_optional_instant, encode_instant
from jupyter_recall.store.sqlite import SQLiteStore

RING_SIZE = 100
BUFFER_LIMIT = 100
BUFFER_TTL = timedelta(hours=24)
RESULT_LIMIT = 20_000
"""Characters of a result's JSON kept in the ring buffer; a longer one is kept as clipped text."""


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)


def bounded_result(result: Mapping[str, Any]) -> dict[str, Any]:
    """The result as stored: as is, or its JSON text clipped with ``"clipped": true``."""
    text = _json(result)
    if len(text) <= RESULT_LIMIT:
        return dict(result)
    key = "data" if result.get("success") else "error"
    return {"success": bool(result.get("success")), key: text[:RESULT_LIMIT], "clipped": True}


@dataclass(frozen=True, slots=True)
class WatcherRecord:
    job_id: str
    owner: str
    state: dict[str, Any]
    checks: int
    notifications: int
    last_check_at: datetime | None
    last_notified_at: datetime | None


@dataclass(frozen=True, slots=True)
class CheckRecord:
    """One check in a watcher's history."""

    check: int
    checked_at: datetime
    success: bool
    result: dict[str, Any]
    notified: bool
    reason: str
    run_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "checked_at": self.checked_at.isoformat(),
            "success": self.success,
            "result": self.result,
            "notified": self.notified,
            "reason": self.reason,
            "run_id": self.run_id,
        }


_UPSERT_STATE = (
    "INSERT INTO watcher_state (job_id, owner, state, checks, notifications, last_check_at, "
    "last_notified_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (job_id) DO UPDATE SET state = excluded.state, checks = excluded.checks, "
    "notifications = excluded.notifications, last_check_at = excluded.last_check_at, "
    "last_notified_at = COALESCE(excluded.last_notified_at, last_notified_at), "
    "updated_at = excluded.updated_at"
)
_INSERT_RESULT = (
    "INSERT OR REPLACE INTO watcher_results (job_id, check_number, owner, run_id, checked_at, "
    "success, result, notified, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_TRIM_RESULTS = "DELETE FROM watcher_results WHERE job_id = ? AND check_number <= ?"
_TRIM_RUNS = (
    "DELETE FROM runs WHERE job_id = ? AND status != 'running' AND id NOT IN "
    "(SELECT id FROM runs WHERE job_id = ? ORDER BY scheduled_for DESC LIMIT ?)"
)


def _state_row(
    job_id: str, owner: str, state: Mapping[str, Any], check: CheckRecord
) -> tuple[Any, ...]:
    at = encode_instant(check.checked_at, "checked_at")
    return (
        job_id,
        owner,
        _json(state),
        int(state.get("checks", check.check)),
        int(state.get("notifications", 0)),
        at,
        at if check.notified else None,
        at,
    )


def _result_row(
    job_id: str, owner: str, state: Mapping[str, Any], check: CheckRecord
) -> tuple[Any, ...]:
    return (
        job_id,
        check.check,
        owner,
        check.run_id,
        encode_instant(check.checked_at, "checked_at"),
        int(check.success),
        _json(bounded_result(check.result)),
        int(check.notified),
        check.reason,
    )


_STATE_COLUMNS = "job_id, owner, state, checks, notifications, last_check_at, last_notified_at"


def _record(row: Sequence[Any]) -> WatcherRecord:
    return WatcherRecord(
        job_id=row[0],
        owner=row[1],
        state=json.loads(row[2]),
        checks=row[3],
        notifications=row[4],
        last_check_at=decode_optional_instant(row[5]),
        last_notified_at=decode_optional_instant(row[6]),
    )


class WatcherStore:
    """Watcher state, results and the notification buffer, in the store's SQLite file."""

    def __init__(self, store: SQLiteStore) -> None:
        self.store = store

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        # atomic() holds the store's lock: its connection is shared with the engine's thread.
        with self.store.atomic():
            return list(self.store.db.execute(sql, params).fetchall())

    # --- watchers -------------------------------------------------------------------------------

    def create(self, job_id: str, owner: str, state: Mapping[str, Any], *, now: datetime) -> None:
        with self.store.atomic():
            self.store.db.execute(
                "INSERT OR IGNORE INTO watcher_state (job_id, owner, state, updated_at) "
                "VALUES (?, ?, ?, ?)",
                (job_id, owner, _json(state), encode_instant(now, "now")),
            )

    def get(self, job_id: str) -> WatcherRecord | None:
        rows = self._rows(f"SELECT {_STATE_COLUMNS} FROM watcher_state WHERE job_id = ?", (job_id,))
        return _record(rows[0]) if rows else None

    def get_many(self, job_ids: Sequence[str]) -> dict[str, WatcherRecord]:
        found: dict[str, WatcherRecord] = {}
        for start in range(0, len(job_ids), 500):
            chunk = list(job_ids[start : start + 500])
            marks = ", ".join("?" * len(chunk))
            sql = f"SELECT {_STATE_COLUMNS} FROM watcher_state WHERE job_id IN ({marks})"
            for row in self._rows(sql, chunk):
                record = _record(row)
                found[record.job_id] = record
        return found

    def record_check(
        self, job_id: str, owner: str, state: Mapping[str, Any], check: CheckRecord
    ) -> None:
        self.record_checks([(job_id, owner, state, check)])

    def record_checks(
        self, items: Sequence[tuple[str, str, Mapping[str, Any], CheckRecord]]
    ) -> None:
        """Save checks (new state and result of each) in one transaction, a statement per kind
        of row for the whole batch. A check of a watcher deleted meanwhile is dropped.

        The ring keeps the last ``RING_SIZE`` results; every ``RING_SIZE`` checks a watcher's
        finished runs are trimmed to its newest ``RING_SIZE`` too (a watcher at 5 s makes
        17,280 runs a day)."""
        with self.store.atomic():
            alive = self._alive({job_id for job_id, _, _, _ in items})
            kept = [item for item in items if item[0] in alive]
            connection = self.store.db.conn
            connection.executemany(_UPSERT_STATE, [_state_row(*item) for item in kept])
            connection.executemany(_INSERT_RESULT, [_result_row(*item) for item in kept])
            connection.executemany(
                _TRIM_RESULTS, [(job_id, check.check - RING_SIZE) for job_id, _, _, check in kept]
            )
            trims = [
                (job_id, job_id, RING_SIZE)
                for job_id, _, _, check in kept
                if check.check % RING_SIZE == 0
            ]
            if trims:
                connection.executemany(_TRIM_RUNS, trims)

    def _alive(self, job_ids: set[str]) -> set[str]:
        found: set[str] = set()
        ordered = sorted(job_ids)
        for start in range(0, len(ordered), 500):
            chunk = ordered[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            rows = self.store.db.execute(f"SELECT id FROM jobs WHERE id IN ({marks})", chunk)
            found.update(row[0] for row in rows)
        return found

    def history(self, job_id: str, last_n: int = RING_SIZE) -> list[CheckRecord]:
        """The last ``last_n`` results, newest first."""
        rows = self._rows(
            "SELECT check_number, checked_at, success, result, notified, reason, run_id "
            "FROM watcher_results WHERE job_id = ? ORDER BY check_number DESC LIMIT ?",
            (job_id, last_n),
        )
        return [
            CheckRecord(
                check=row[0],
                checked_at=decode_instant(row[1]),
                success=bool(row[2]),
                result=json.loads(row[3]),
                notified=bool(row[4]),
                reason=row[5],
                run_id=row[6],
            )
            for row in rows
        ]

    # --- the notification buffer --------------------------------------------------------------

    def buffer(
        self, owner: str, session: str, notification: Mapping[str, Any], *, now: datetime
    ) -> None:
        """Hold a notification for ``session``; beyond ``BUFFER_LIMIT`` the oldest goes."""
        expired = encode_instant(now - BUFFER_TTL, "now")
        with self.store.atomic():
            db = self.store.db
            db.execute(
                "INSERT OR REPLACE INTO notification_buffer "
                "(id, owner, session, created_at, notification) VALUES (?, ?, ?, ?, ?)",
                (
                    str(notification["id"]),
                    owner,
                    session,
                    encode_instant(now, "now"),
                    _json(notification),
                ),
            )
            db.execute("DELETE FROM notification_buffer WHERE created_at < ?", (expired,))
            db.execute(
                "DELETE FROM notification_buffer WHERE owner = ? AND session = ? AND id NOT IN "
                "(SELECT id FROM notification_buffer WHERE owner = ? AND session = ? "
                "ORDER BY created_at DESC, rowid DESC LIMIT ?)",
                (owner, session, owner, session, BUFFER_LIMIT),
            )

    def buffered(self, owner: str, session: str | None, *, now: datetime) -> list[dict[str, Any]]:
        """What is held (for one session, or every session of ``owner``), oldest first."""
        clauses, params = self._where(owner, session, now)
        rows = self._rows(
            f"SELECT notification FROM notification_buffer WHERE {clauses} "
            "ORDER BY created_at, rowid",
            params,
        )
        return [json.loads(row[0]) for row in rows]

    def take(self, owner: str, session: str, *, now: datetime) -> list[dict[str, Any]]:
        """What is held for ``session``, oldest first; it is no longer held."""
        clauses, params = self._where(owner, session, now)
        with self.store.atomic():
            db = self.store.db
            rows = db.execute(
                f"SELECT notification FROM notification_buffer WHERE {clauses} "
                "ORDER BY created_at, rowid",
                params,
            ).fetchall()
            db.execute(
                "DELETE FROM notification_buffer WHERE owner = ? AND session = ?", (owner, session)
            )
        return [json.loads(row[0]) for row in rows]

    @staticmethod
    def _where(owner: str, session: str | None, now: datetime) -> tuple[str, list[Any]]:
        clauses = ["owner = ?", "created_at >= ?"]
        params: list[Any] = [owner, encode_instant(now - BUFFER_TTL, "now")]
        if session is not None:
            clauses.append("session = ?")
            params.append(session)
        return " AND ".join(clauses), params
