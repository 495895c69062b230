"""The ``DependencyStore`` protocol on SQLite and PostgreSQL (the ``dependencies`` table).

One row per job fired by another job's runs (``core/dependency.py``): the upstream, the
outcome it waits for, and the cursor of the last upstream run it handled. One SQL for both
stores: ``DependencyTables`` is mixed into each and runs on its connection under its
transactions; the parameter mark differs, and PostgreSQL locks the rows it reads for firing
(``FOR UPDATE``) so that two engines handling the same upstream end take turns, the second
reading the cursor the first moved (SQLite's writers take turns already: ``BEGIN IMMEDIATE``).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, ClassVar, Protocol

from jupyter_recall.core.dependency import UPSTREAM_ENDS, AfterOn, Dependency, UpstreamEnd
from jupyter_recall.core.model import RunStatus
from jupyter_recall.store.codec import decode_instant, encode_instant
from jupyter_recall.store.rows import DependencyRow, columns

SCHEMA = """
CREATE TABLE dependencies (
    job_id TEXT PRIMARY KEY REFERENCES jobs (id) ON DELETE CASCADE,
    owner TEXT NOT NULL,
    upstream_id TEXT NOT NULL,
    on_status TEXT NOT NULL,
    cursor_at {integer} NOT NULL,
    cursor_run TEXT NOT NULL
);
CREATE INDEX dependencies_by_upstream ON dependencies (upstream_id)
"""
"""Migration 7 of both stores (``{integer}``: the store's 64-bit integer type)."""

_COLUMNS = columns(DependencyRow._fields)
_ENDED = ", ".join(f"'{status}'" for status in UPSTREAM_ENDS)


def _dependency(row: Sequence[Any]) -> Dependency:
    values = DependencyRow(*row)
    return Dependency(
        values.job_id,
        values.owner,
        values.upstream_id,
        AfterOn(values.on_status),
        decode_instant(values.cursor_at),
        values.cursor_run,
    )


def _row(dependency: Dependency) -> DependencyRow:
    return DependencyRow(
        dependency.job_id,
        dependency.owner,
        dependency.upstream_id,
        dependency.on.value,
        encode_instant(dependency.cursor_at, "cursor_at"),
        dependency.cursor_run,
    )


class _Connected(Protocol):
    _mark: ClassVar[str]
    _lock_rows: ClassVar[str]

    def atomic(self) -> AbstractContextManager[None]: ...

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]: ...


class DependencyTables:
    """``DependencyStore``; ``_lock_rows`` is what the store appends to lock the rows it reads."""

    _mark: ClassVar[str] = "?"
    _lock_rows: ClassVar[str] = ""

    def put_dependency(self: _Connected, dependency: Dependency) -> None:
        """Insert or replace the dependency of ``dependency.job_id``."""
        marks = ", ".join([self._mark] * len(DependencyRow._fields))
        with self.atomic():
            self._rows(
                f"DELETE FROM dependencies WHERE job_id = {self._mark}", (dependency.job_id,)
            )
            self._rows(f"INSERT INTO dependencies ({_COLUMNS}) VALUES ({marks})", _row(dependency))

    def delete_dependency(self: _Connected, job_id: str) -> None:
        with self.atomic():
            self._rows(f"DELETE FROM dependencies WHERE job_id = {self._mark}", (job_id,))

    def get_dependency(self: _Connected, job_id: str) -> Dependency | None:
        sql = f"SELECT {_COLUMNS} FROM dependencies WHERE job_id = {self._mark}"
        rows = self._rows(sql, (job_id,))
        return _dependency(rows[0]) if rows else None

    def dependents_of(self: _Connected, upstream_ids: Sequence[str]) -> list[Dependency]:
        """The dependencies on any of ``upstream_ids``, locked for the caller's transaction
        where the store can (PostgreSQL), in ``job_id`` order."""
        if not upstream_ids:
            return []
        marks = ", ".join([self._mark] * len(upstream_ids))
        sql = (
            f"SELECT {_COLUMNS} FROM dependencies WHERE upstream_id IN ({marks}) "
            f"ORDER BY job_id{self._lock_rows}"
        )
        return [_dependency(row) for row in self._rows(sql, list(upstream_ids))]

    def list_dependencies(
        self: _Connected, *, after: str | None, limit: int, owner: str | None = None
    ) -> list[Dependency]:
        """A page of every dependency (of ``owner``'s jobs, if given) in ``job_id`` order,
        after ``after``; locked like ``dependents_of``."""
        where, params = f"job_id > {self._mark}", [after or ""]
        if owner is not None:
            where += f" AND owner = {self._mark}"
            params.append(owner)
        sql = (
            f"SELECT {_COLUMNS} FROM dependencies WHERE {where} "
            f"ORDER BY job_id LIMIT {int(limit)}{self._lock_rows}"
        )
        return [_dependency(row) for row in self._rows(sql, params)]

    def upstream_ends(self: _Connected, dependency: Dependency, *, limit: int) -> list[UpstreamEnd]:
        """Runs of the upstream that ended after the dependency's cursor, oldest first: final
        for their occurrence (no retry pending, no later attempt) and executed (not skipped
        or missed rows)."""
        mark = self._mark
        sql = (
            "SELECT id, status, finished_at FROM runs AS ended "
            f"WHERE job_id = {mark} AND finished_at IS NOT NULL AND retry_at IS NULL "
            f"AND status IN ({_ENDED}) "
            f"AND (finished_at > {mark} OR (finished_at = {mark} AND id > {mark})) "
            "AND NOT EXISTS (SELECT 1 FROM runs AS later WHERE later.job_id = ended.job_id "
            "AND later.scheduled_for = ended.scheduled_for AND later.attempt > ended.attempt) "
            f"ORDER BY finished_at, id LIMIT {int(limit)}"
        )
        at = encode_instant(dependency.cursor_at, "cursor_at")
        params = (dependency.upstream_id, at, at, dependency.cursor_run)
        return [
            UpstreamEnd(run_id, RunStatus(status), decode_instant(finished))
            for run_id, status, finished in self._rows(sql, params)
        ]

    def latest_upstream_end(self: _Connected, upstream_id: str) -> UpstreamEnd | None:
        """The upstream's run that ended last (any status), to start a cursor from."""
        sql = (
            "SELECT id, status, finished_at FROM runs "
            f"WHERE job_id = {self._mark} AND finished_at IS NOT NULL "
            "ORDER BY finished_at DESC, id DESC LIMIT 1"
        )
        rows = self._rows(sql, (upstream_id,))
        if not rows:
            return None
        run_id, status, finished = rows[0]
        return UpstreamEnd(run_id, RunStatus(status), decode_instant(finished))
