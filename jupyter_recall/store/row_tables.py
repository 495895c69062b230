"""The ``RowStore`` protocol on SQLite and PostgreSQL: every table's rows, raw, in batches.

What ``store/transfer.py`` moves a store with (``jupyter recall migrate``, ``export``,
``import``). Rows are as stored (``rows.py``: instants in microseconds, payloads as text), ids
kept, so runs keep their jobs and the unique (job_id, scheduled_for) still holds in the copy:
an occurrence fired before the move is never fired again after it. One SQL for both stores
(row values and ``ON CONFLICT DO NOTHING`` are in both); only the parameter mark differs.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, ClassVar, Protocol

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.store.rows import TABLES, columns

KEYS: dict[str, tuple[str, ...]] = {
    "jobs": ("id",),
    "runs": ("id",),
    "leases": ("engine_id",),
    "migrations": ("version",),
    "watcher_state": ("job_id",),
    "watcher_results": ("job_id", "check_number"),
    "notification_buffer": ("id",),
    "disabled_owners": ("owner", "plugin_owner"),
    "approvals": ("id",),
    "dependencies": ("job_id",),
}
"""Each table's primary key: rows are read in its order (keyset pages) and a row whose key is
already in the target is skipped."""

MAX_PARAMETERS = 900
"""Parameters in one INSERT (SQLite's oldest limit is 999)."""


def _table(name: str) -> tuple[str, ...]:
    if name not in TABLES:
        raise ValidationError("table", f"unknown table {name!r}", accepted=list(TABLES))
    return TABLES[name]


class _Connected(Protocol):
    _mark: ClassVar[str]

    def atomic(self) -> AbstractContextManager[None]: ...

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]: ...


class RowTables:
    """``RowStore``; ``_mark`` is the store's parameter mark (``?`` or ``%s``)."""

    _mark: ClassVar[str] = "?"

    def dump_rows(
        self: _Connected, table: str, *, after: Sequence[Any] | None, limit: int
    ) -> list[tuple[Any, ...]]:
        fields = _table(table)
        key = KEYS[table]
        where, params = "", list(after or ())
        if after is not None:
            marks = ", ".join([self._mark] * len(key))
            where = f"WHERE ({columns(key)}) > ({marks})"
        sql = (
            f"SELECT {columns(fields)} FROM {table} {where} "
            f"ORDER BY {columns(key)} LIMIT {self._mark}"
        )
        return [tuple(row) for row in self._rows(sql, [*params, limit])]

    def load_rows(self: _Connected, table: str, rows: Sequence[Sequence[Any]]) -> int:
        fields = _table(table)
        per_insert = max(1, MAX_PARAMETERS // len(fields))
        one = "(" + ", ".join([self._mark] * len(fields)) + ")"
        added = 0
        with self.atomic():
            for start in range(0, len(rows), per_insert):
                chunk = rows[start : start + per_insert]
                sql = (
                    f"INSERT INTO {table} ({columns(fields)}) VALUES "
                    f"{', '.join([one] * len(chunk))} ON CONFLICT DO NOTHING RETURNING 1"
                )
                added += len(self._rows(sql, [value for row in chunk for value in row]))
        return added

    def count_rows(self: _Connected, table: str) -> int:
        _table(table)
        return int(self._rows(f"SELECT COUNT(*) FROM {table}")[0][0])
