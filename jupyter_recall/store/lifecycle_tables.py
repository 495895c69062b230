"""Pause after failures and retention in the store, one SQL for SQLite and PostgreSQL.

``jobs.failure_streak`` counts a job's consecutive failed occurrences and ``jobs.paused_reason``
says why the engine paused it (migration 8; both are ``Job`` fields written with the job).
``RetentionTables`` (mixed into each store, on its connection and under its transactions, the
parameter mark differing) finds the runs of one job its retention lets go: beyond its newest
``keep`` runs, or ended before a cutoff; never a run still going, nor an ended attempt whose
retry is pending (``retry_at``: the retry is inserted from it), nor an upstream run a
dependent job has not handled yet (after its cursor in ``dependencies``). Run counts and the next
occurrence live on the job row, so deleting runs changes neither (``max_runs`` and
exactly-once hold after pruning). A paused job has no next fire (``Job.paused``, migration 9).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, ClassVar, Protocol

from jupyter_recall.store.codec import encode_instant

SCHEMA = """
ALTER TABLE jobs ADD COLUMN failure_streak {integer} NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN paused_reason TEXT
"""
"""Migration 8 of both stores (``{integer}``: the store's 64-bit integer type)."""
PAUSED_HAVE_NO_NEXT_FIRE = "UPDATE jobs SET next_fire_at = NULL WHERE status = 'paused'"
"""Migration 9 of both stores: a paused job does not fire, so it has no next fire (listings
sort it after every instant, nothing shows a time in the past); jobs paused before it kept
theirs."""

_NEWEST = "ORDER BY scheduled_for DESC, created_at DESC, id DESC"
_AWAITED = (
    "EXISTS (SELECT 1 FROM dependencies AS d WHERE d.upstream_id = runs.job_id "
    "AND (runs.finished_at > d.cursor_at "
    "OR (runs.finished_at = d.cursor_at AND runs.id > d.cursor_run)))"
)
"""An upstream run that a dependent job (``core/dependency.py``) has still to handle."""


class _Connected(Protocol):
    _mark: ClassVar[str]

    def atomic(self) -> AbstractContextManager[None]: ...

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]: ...


class RetentionTables:
    """``RetentionStore``; ``_mark`` is the store's parameter mark (``?`` or ``%s``)."""

    _mark: ClassVar[str] = "?"

    def prunable_runs(
        self: _Connected,
        job_id: str,
        *,
        keep: int | None,
        ended_before: datetime | None,
        limit: int,
    ) -> list[str]:
        """The ids of ``job_id``'s ended runs past its retention, oldest first, at most
        ``limit``: beyond its newest ``keep`` runs (of any status: a run going counts as one
        kept), or finished before ``ended_before``. None: no bound of that kind."""
        mark = self._mark
        bounds: list[str] = []
        params: list[Any] = [job_id]
        if keep is not None:
            bounds.append(
                f"id NOT IN (SELECT id FROM runs WHERE job_id = {mark} {_NEWEST} LIMIT {mark})"
            )
            params += [job_id, keep]
        if ended_before is not None:
            bounds.append(f"finished_at < {mark}")
            params.append(encode_instant(ended_before, "ended_before"))
        if not bounds:
            return []
        sql = (
            f"SELECT id FROM runs WHERE job_id = {mark} AND status <> 'running' "
            f"AND retry_at IS NULL AND ({' OR '.join(bounds)}) AND NOT {_AWAITED} "
            f"ORDER BY scheduled_for, created_at, id LIMIT {mark}"
        )
        return [str(row[0]) for row in self._rows(sql, [*params, limit])]
