"""``docs/store.md`` names every table, column and index of the migrated SQLite schema, so the
page cannot fall behind a migration again (it had missed four tables and three migrations)."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from jupyter_recall.store.urls import open_store

DOC = Path(__file__).parents[2] / "docs" / "store.md"


def schema(path: Path) -> tuple[dict[str, list[str]], list[str]]:
    """The columns of each table and the names of the indexes, read back from a new store."""
    open_store(f"sqlite:///{path}").close()
    with sqlite3.connect(path) as connection:
        tables = [
            name
            for (name,) in connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        columns = {
            table: [row[1] for row in connection.execute(f'PRAGMA table_info("{table}")')]
            for table in tables
        }
        indexes = [
            name
            for (name,) in connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
            )
        ]
    connection.close()
    return columns, indexes


def schema_rows(doc: str) -> dict[str, str]:
    """The rows of the "Schema" table, by the table they describe."""
    rows = re.findall(r"^\| `(\w+)`[^|]*\|(.*)\|$", doc, flags=re.MULTILINE)
    return {table: text for table, text in rows}


def undocumented(doc: str, columns: dict[str, list[str]], indexes: list[str]) -> list[str]:
    rows = schema_rows(doc)
    missing = [f"table {table}" for table in columns if table not in rows]
    for table, names in columns.items():
        text = rows.get(table, "")
        missing += [f"column {table}.{name}" for name in names if f"`{name}`" not in text]
    missing += [f"index {name}" for name in indexes if f"`{name}`" not in doc]
    return missing


def test_every_table_column_and_index_is_documented(tmp_path: Path) -> None:
    columns, indexes = schema(tmp_path / "recall.db")
    assert {"jobs", "runs", "approvals", "dependencies"} <= set(columns)
    assert undocumented(DOC.read_text(), columns, indexes) == []


def test_a_column_missing_from_the_page_is_named() -> None:
    doc = "| `jobs` | `id`, `owner` |\n\n`jobs_due`\n"
    found = undocumented(doc, {"jobs": ["id", "owner", "name"], "runs": ["id"]}, ["jobs_due", "x"])
    assert found == ["table runs", "column jobs.name", "column runs.id", "index x"]
