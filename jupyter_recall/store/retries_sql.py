"""Pending retries (``policies.retries``) on SQLite and PostgreSQL: one SQL for both.

A pending retry is an ended run whose ``retry_at`` is set: the instant its occurrence's next
attempt is due. It lives in the store, not in an engine's memory, so a restarted engine or
another one on the same database fires it; firing it inserts the next attempt (unique per
``(job_id, scheduled_for, attempt)``, so it happens once) and clears ``retry_at`` in the same
transaction (``engine/retrying.py``). Only active jobs' retries are due: a paused job's wait
until it is resumed. Two partial indexes (migration 6) keep these reads to the pending rows.

``RetryTables`` is mixed into each store and runs on its connection (``_rows``, ``_runs``)
under its transactions (``atomic``); only the parameter mark differs, and PostgreSQL locks
the retries a pass reads (``FOR UPDATE SKIP LOCKED``) so that two engines' passes take
different ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, ClassVar, Protocol

from jupyter_recall.core.model import Run
from jupyter_recall.store.codec import decode_instant, encode_instant
from jupyter_recall.store.rows import RunRow, columns

_PENDING = "runs.retry_at IS NOT NULL AND jobs.status = 'active'"
_FROM = "FROM runs JOIN jobs ON jobs.id = runs.job_id"


def due(
    *, now: int, limit: int, owner: str | None, mark: str, lock: bool = False
) -> tuple[str, list[Any]]:
    """The runs whose retry is due at ``now`` (microseconds), earliest first; ``lock``: held
    until the transaction ends, skipped by another engine's pass (PostgreSQL)."""
    sql = (
        f"SELECT {columns(RunRow._fields, prefix='runs.')} {_FROM} "
        f"WHERE {_PENDING} AND runs.retry_at <= {mark}"
    )
    params: list[Any] = [now]
    if owner is not None:
        sql += f" AND runs.owner = {mark}"
        params.append(owner)
    sql += f" ORDER BY runs.retry_at, runs.id LIMIT {mark}"
    params.append(limit)
    if lock:
        sql += " FOR UPDATE OF runs SKIP LOCKED"
    return sql, params


def earliest(*, owner: str | None, mark: str) -> tuple[str, list[Any]]:
    """The earliest instant a retry is due (NULL when none is pending)."""
    sql = f"SELECT min(runs.retry_at) {_FROM} WHERE {_PENDING}"
    if owner is None:
        return sql, []
    return f"{sql} AND runs.owner = {mark}", [owner]


def pending(count: int, *, mark: str) -> str:
    """Which of ``count`` job ids (the parameters) have a retry pending, and its instant."""
    marks = ", ".join([mark] * count)
    return (
        "SELECT job_id, min(retry_at) FROM runs "
        f"WHERE retry_at IS NOT NULL AND job_id IN ({marks}) GROUP BY job_id"
    )


class _Connected(Protocol):
    """What the table needs of the store it is mixed into."""

    _mark: ClassVar[str]
    _locks_due_retries: ClassVar[bool]

    def atomic(self) -> AbstractContextManager[None]: ...

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]: ...

    def _runs(self, sql: str, params: Sequence[Any] = ()) -> list[Run]: ...


_CHUNK = 900
"""Ids per statement (SQLite's oldest limit of parameters is 999)."""


class RetryTables:
    """The retry methods of ``JobStore``; ``_mark`` is the store's parameter mark."""

    _mark: ClassVar[str] = "?"
    _locks_due_retries: ClassVar[bool] = False

    def due_retries(
        self: _Connected, now: datetime, *, limit: int, owner: str | None = None
    ) -> list[Run]:
        at = encode_instant(now, "now")
        sql, params = due(
            now=at, limit=limit, owner=owner, mark=self._mark, lock=self._locks_due_retries
        )
        return self._runs(sql, params)

    def next_retry_at(self: _Connected, *, owner: str | None = None) -> datetime | None:
        sql, params = earliest(owner=owner, mark=self._mark)
        rows = self._rows(sql, params)
        return decode_instant(rows[0][0]) if rows and rows[0][0] is not None else None

    def clear_retries(self: _Connected, run_ids: Sequence[str]) -> None:
        with self.atomic():
            for start in range(0, len(run_ids), _CHUNK):
                chunk = list(run_ids[start : start + _CHUNK])
                marks = ", ".join([self._mark] * len(chunk))
                self._rows(f"UPDATE runs SET retry_at = NULL WHERE id IN ({marks})", chunk)

    def drop_job_retries(self: _Connected, job_id: str) -> None:
        with self.atomic():
            self._rows(
                "UPDATE runs SET retry_at = NULL "
                f"WHERE job_id = {self._mark} AND retry_at IS NOT NULL",
                (job_id,),
            )

    def pending_retries(self: _Connected, job_ids: Sequence[str]) -> dict[str, datetime]:
        found: dict[str, datetime] = {}
        unique = list(dict.fromkeys(job_ids))
        for start in range(0, len(unique), _CHUNK):
            chunk = unique[start : start + _CHUNK]
            rows = self._rows(pending(len(chunk), mark=self._mark), chunk)
            found.update((ident, decode_instant(at)) for ident, at in rows)
        return found


SCHEMA = """
ALTER TABLE runs ADD COLUMN attempt {integer} NOT NULL DEFAULT 1;
ALTER TABLE runs ADD COLUMN retry_at {integer};
DROP INDEX runs_one_per_occurrence;
CREATE UNIQUE INDEX runs_one_per_attempt ON runs (job_id, scheduled_for, attempt);
CREATE INDEX runs_retry_due ON runs (retry_at) WHERE retry_at IS NOT NULL;
CREATE INDEX runs_retry_of_job ON runs (job_id) WHERE retry_at IS NOT NULL;
DROP INDEX runs_running;
CREATE INDEX runs_running ON runs (job_id) WHERE status = 'running'
"""
"""Migration 6 of both stores, with the integer type of each (``{integer}``). ``runs_running``
is made again after the new unique index: SQLite weighs indexes of equal cost newest first,
and the partial one is the one to search for a job's running runs."""
