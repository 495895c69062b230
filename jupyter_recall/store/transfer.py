"""Move a store's contents to another store, whatever their kinds (``jupyter recall migrate``).

Everything a store holds is copied table by table through ``RowStore`` (``dump_rows`` /
``load_rows``): raw rows, ids kept, in keyset batches (constant memory however large the
store), one transaction per batch. Rows already in the target (same key, or the same
occurrence of a job) are skipped, so a migrate cut off half way is simply run again. Leases
(which engines are alive now) and the migrations table (each store records its own schema)
are not history and are not copied.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.store.base import RowStore
from jupyter_recall.store.row_tables import KEYS
from jupyter_recall.store.rows import TABLES

COPIED = (
    "jobs",
    "runs",
    "watcher_state",
    "watcher_results",
    "notification_buffer",
    "disabled_owners",
    "approvals",
    "dependencies",
)
"""The tables moved, in an order where each row's job is there before it."""
NOT_COPIED = ("leases", "migrations")
BATCH = 500

Progress = Callable[[str, int], None]
"""Told the table and how many more of its rows were handled."""


def _no_progress(table: str, count: int) -> None:
    del table, count


def schema_version(store: RowStore) -> int:
    """The newest migration applied to the store."""
    versions = [row[0] for row in store.dump_rows("migrations", after=None, limit=10_000)]
    return int(max(versions, default=0))


def occupied_tables(store: RowStore) -> list[str]:
    """The tables of ``COPIED`` holding rows: a target that has any is not empty."""
    return [table for table in COPIED if store.dump_rows(table, after=None, limit=1)]


def total_rows(store: RowStore) -> int:
    return sum(store.count_rows(table) for table in COPIED)


def table_rows(
    store: RowStore, table: str, *, batch: int = BATCH
) -> Iterator[list[tuple[Any, ...]]]:
    """The table's rows, one batch at a time, in its key's order."""
    fields = TABLES[table]
    key_at = [fields.index(name) for name in KEYS[table]]
    after: list[Any] | None = None
    while rows := store.dump_rows(table, after=after, limit=batch):
        yield rows
        after = [rows[-1][index] for index in key_at]
        if len(rows) < batch:
            return


def refuse_occupied(target: RowStore, option: str) -> None:
    """ValidationError naming ``option`` when the target holds rows of any table."""
    occupied = occupied_tables(target)
    if occupied:
        raise ValidationError(
            option,
            f"the target store is not empty (it has {', '.join(occupied)}); "
            "give --force to add what it lacks and keep what it has",
        )


def copy_store(
    source: RowStore,
    target: RowStore,
    *,
    batch: int = BATCH,
    progress: Progress = _no_progress,
) -> dict[str, tuple[int, int]]:
    """Copy every table of ``COPIED``; per table, (rows read, rows added). The caller decides
    whether a non-empty target is acceptable (``refuse_occupied``); the schemas must match."""
    check_schemas(schema_version(source), schema_version(target))
    counts: dict[str, tuple[int, int]] = {}
    for table in COPIED:
        read = added = 0
        for rows in table_rows(source, table, batch=batch):
            added += target.load_rows(table, rows)
            read += len(rows)
            progress(table, len(rows))
        counts[table] = (read, added)
    return counts


SAME_RELEASE = "open both with the same release of jupyter_recall (it migrates each) first"
"""How two stores of different schemas are made to match."""
EXPORT_OF_ANOTHER_RELEASE = (
    "an export is not migrated: import it with the release that wrote it into a new SQLite "
    "file, open that file with this release (it migrates it), then copy it with "
    "`jupyter recall migrate`"
)
"""How an export of another schema is brought to this one."""


def check_schemas(source: int, target: int, field: str = "schema", how: str = SAME_RELEASE) -> None:
    if source != target:
        raise ValidationError(
            field,
            f"the source is at schema version {source} and the target at {target}; {how}",
        )
