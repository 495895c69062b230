"""The portable backup of a store: JSON lines (``jupyter recall export`` / ``import``).

Line 1: ``{"format": "jupyter_recall-export", "version": 1, "schema": N, "exported_at": ISO}``;
then one line per row, ``{"table": "jobs", "row": {column: value, ...}}``, tables in
``transfer.COPIED``'s order, columns those of ``rows.py`` (whatever the schema has). Instants
are ISO 8601 in UTC with microseconds (exact both ways); every other value is as stored. Import
checks each line and names it and the field that is wrong.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from types import NoneType, UnionType
from typing import IO, Any, NamedTuple, get_args, get_type_hints

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.store import rows as row_types
from jupyter_recall.store.base import RowStore
from jupyter_recall.store.codec import decode_instant, encode_instant
from jupyter_recall.store.transfer import (
    BATCH,
    COPIED,
    EXPORT_OF_ANOTHER_RELEASE,
    Progress,
    check_schemas,
    schema_version,
    table_rows,
)

FORMAT = "jupyter_recall-export"
VERSION = 1
_ROW_CLASSES: dict[str, type[tuple[Any, ...]]] = {
    "jobs": row_types.JobRow,
    "runs": row_types.RunRow,
    "watcher_state": row_types.WatcherStateRow,
    "watcher_results": row_types.WatcherResultRow,
    "notification_buffer": row_types.BufferedNotificationRow,
    "disabled_owners": row_types.DisabledOwnerRow,
    "approvals": row_types.ApprovalRow,
    "dependencies": row_types.DependencyRow,
}
_INSTANT_NAMES = ("scheduled_for", "next_occurrence", "until")


class Column(NamedTuple):
    name: str
    types: tuple[type, ...]
    instant: bool


def _column(name: str, hint: Any) -> Column:
    types = get_args(hint) if isinstance(hint, UnionType) else (hint,)
    instant = int in types and (name.endswith("_at") or name in _INSTANT_NAMES)
    return Column(name, tuple(types), instant)


SCHEMA: dict[str, tuple[Column, ...]] = {
    table: tuple(_column(name, hint) for name, hint in get_type_hints(cls).items())
    for table, cls in _ROW_CLASSES.items()
}
"""Each exported table's columns, their types and which are instants, read from ``rows.py``."""


def _iso(value: int) -> str:
    return decode_instant(value).isoformat(timespec="microseconds")


def _encoded(columns: tuple[Column, ...], row: tuple[Any, ...]) -> dict[str, Any]:
    return {
        column.name: _iso(value) if column.instant and value is not None else value
        for column, value in zip(columns, row, strict=True)
    }


def write_export(
    store: RowStore, out: IO[str], *, now: datetime, progress: Progress, batch: int = BATCH
) -> int:
    """Write the store to ``out``; how many rows."""
    header = {
        "format": FORMAT,
        "version": VERSION,
        "schema": schema_version(store),
        "exported_at": now.astimezone(UTC).isoformat(timespec="microseconds"),
    }
    out.write(json.dumps(header) + "\n")
    written = 0
    for table in COPIED:
        for rows in table_rows(store, table, batch=batch):
            for row in rows:
                line = {"table": table, "row": _encoded(SCHEMA[table], row)}
                out.write(json.dumps(line, ensure_ascii=False) + "\n")
            written += len(rows)
            progress(table, len(rows))
    return written


def read_header(line: str) -> int:
    """The schema version a header line declares; ValidationError naming line 1's field."""
    document = _document(line, 1)
    if document.get("format") != FORMAT:
        raise ValidationError("line 1: format", f"must be {FORMAT!r}: not an export")
    if document.get("version") != VERSION:
        raise ValidationError("line 1: version", f"version {VERSION} is the one this release reads")
    schema = document.get("schema")
    if not isinstance(schema, int) or isinstance(schema, bool):
        raise ValidationError("line 1: schema", "must be the store's schema version (an integer)")
    return schema


def _document(line: str, number: int) -> dict[str, Any]:
    try:
        document = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValidationError(f"line {number}", f"not JSON: {exc.msg}") from None
    if not isinstance(document, dict):
        raise ValidationError(f"line {number}", "must be a JSON object")
    return document


def _instant_value(value: Any, where: str) -> int:
    try:
        instant = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        instant = None
    if instant is None or instant.tzinfo is None:
        raise ValidationError(where, f"must be an ISO 8601 instant with its offset, got {value!r}")
    return encode_instant(instant, where)


def _decoded_value(column: Column, value: Any, where: str) -> Any:
    if value is None and NoneType in column.types:
        return None
    if column.instant:
        return _instant_value(value, where)
    if type(value) in column.types:
        return value
    wanted = " or ".join("null" if kind is NoneType else kind.__name__ for kind in column.types)
    raise ValidationError(where, f"must be {wanted}, got {json.dumps(value)}")


def read_row(line: str, number: int) -> tuple[str, tuple[Any, ...]]:
    """One row line: its table and its values in ``rows.py``'s order."""
    document = _document(line, number)
    table = document.get("table")
    if table not in SCHEMA:
        raise ValidationError(f"line {number}: table", f"unknown table {table!r}", accepted=COPIED)
    row = document.get("row")
    if not isinstance(row, dict):
        raise ValidationError(f"line {number}: row", "must be an object of the row's columns")
    columns = SCHEMA[table]
    extra = sorted(set(row) - {column.name for column in columns})
    if extra:
        raise ValidationError(f"line {number}: {table}.{extra[0]}", "is not a column of the table")
    values = []
    for column in columns:
        where = f"line {number}: {table}.{column.name}"
        if column.name not in row:
            raise ValidationError(where, "is missing")
        values.append(_decoded_value(column, row[column.name], where))
    return table, tuple(values)


def read_rows(lines: Iterable[str], target_schema: int) -> Iterator[tuple[str, tuple[Any, ...]]]:
    """The rows of an export, checked line by line against the target's schema version."""
    numbered = enumerate(lines, start=1)
    first = next(numbered, None)
    if first is None:
        raise ValidationError("line 1", "the file is empty: not an export")
    check_schemas(read_header(first[1]), target_schema, "line 1: schema", EXPORT_OF_ANOTHER_RELEASE)
    for number, line in numbered:
        if line.strip():
            yield read_row(line, number)


def load_export(
    lines: Iterable[str],
    target: RowStore,
    *,
    progress: Progress,
    batch: int = BATCH,
) -> dict[str, int]:
    """Load an export into ``target``, a batch per transaction; per table, rows added."""
    added: dict[str, int] = {}
    pending: list[tuple[Any, ...]] = []
    current = ""
    for table, values in read_rows(lines, schema_version(target)):
        if pending and (table != current or len(pending) >= batch):
            added[current] = added.get(current, 0) + target.load_rows(current, pending)
            progress(current, len(pending))
            pending = []
        current = table
        pending.append(values)
    if pending:
        added[current] = added.get(current, 0) + target.load_rows(current, pending)
        progress(current, len(pending))
    return added
