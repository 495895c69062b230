"""The SQL of pending retries (``policies.retries``), one text for SQLite and PostgreSQL.

A pending retry is an ended run whose ``retry_at`` is set: the instant its occurrence's next
attempt is due. It lives in the store, not in an engine's memory, so a restarted engine or
another one on the same database fires it; firing it inserts the next attempt (unique per
``(job_id, scheduled_for, attempt)``, so it happens once) and clears ``retry_at`` in the same
transaction (``engine/retrying.py``). Only active jobs' retries are due: a paused job's wait
until it is resumed. Two partial indexes (migration 6) keep these reads to the pending rows.
"""

from __future__ import annotations

from typing import Any

from jupyter_recall.store.rows import RunRow, columns

_PENDING = "runs.retry_at IS NOT NULL AND jobs.status = 'active'"
_FROM = "FROM runs JOIN jobs ON jobs.id = runs.job_id"

CLEAR = "UPDATE runs SET retry_at = NULL WHERE id = %s"
"""Clear one run's pending retry (PostgreSQL's mark; SQLite replaces it)."""

DROP_OF_JOB = "UPDATE runs SET retry_at = NULL WHERE job_id = %s AND retry_at IS NOT NULL"
"""Drop a job's pending retries (it was cancelled: its last attempts are their outcomes)."""


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
