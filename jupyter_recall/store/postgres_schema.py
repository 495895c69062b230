"""Recorded schema migrations of the PostgreSQL store.

The versions mean what they mean for SQLite (``migrations.py``): version 3 here holds the
tables and columns of version 3 there, written in PostgreSQL's DDL, so a store copied from one
to the other is at the same version. Columns and their order are those of ``rows.py``: rows are
read and built by the same NamedTuples and converted by the same ``codec``. Instants are
BIGINT microseconds since the Unix epoch (UTC), JSON payloads TEXT, booleans 0 or 1.

Each missing migration is applied in its own transaction with the row that records it, under a
transaction-scoped advisory lock, so several servers starting on one new database apply each
migration exactly once (PostgreSQL's DDL is transactional: a failed migration leaves nothing).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from jupyter_recall.core.errors import StoreError
from jupyter_recall.store.dependency_tables import SCHEMA as DEPENDENCIES_SCHEMA
from jupyter_recall.store.lifecycle_tables import PAUSED_HAVE_NO_NEXT_FIRE
from jupyter_recall.store.lifecycle_tables import SCHEMA as LIFECYCLE_SCHEMA
from jupyter_recall.store.retries_sql import SCHEMA as RETRIES_SCHEMA

MIGRATION_LOCK = 0x72_65_63_61_6C_6C
"""The advisory lock key held while migrating (``recall`` in ASCII)."""


@dataclass(frozen=True, slots=True)
class PostgresMigration:
    version: int
    name: str
    sql: str


_V1 = """
CREATE TABLE jobs (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    when_text TEXT NOT NULL,
    schedule_kind TEXT NOT NULL,
    schedule TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT NOT NULL,
    options TEXT NOT NULL,
    policies TEXT NOT NULL,
    session TEXT,
    next_occurrence BIGINT,
    next_fire_at BIGINT,
    run_count BIGINT NOT NULL DEFAULT 0,
    failure_count BIGINT NOT NULL DEFAULT 0,
    last_run_at BIGINT,
    last_run_id TEXT,
    last_status TEXT,
    last_error TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    version BIGINT NOT NULL
);
CREATE INDEX jobs_due ON jobs (next_fire_at, id) WHERE status = 'active';
CREATE UNIQUE INDEX jobs_one_pending_recall ON jobs (owner, session)
    WHERE kind = 'recall' AND status IN ('active', 'paused') AND next_occurrence IS NOT NULL;
CREATE INDEX jobs_by_owner ON jobs (owner, created_at);

CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    job_id TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    owner TEXT NOT NULL,
    scheduled_for BIGINT NOT NULL,
    trigger_kind TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    started_at BIGINT,
    finished_at BIGINT,
    output TEXT NOT NULL DEFAULT '',
    output_dropped BIGINT NOT NULL DEFAULT 0,
    error TEXT,
    engine_id TEXT
);
CREATE UNIQUE INDEX runs_one_per_occurrence ON runs (job_id, scheduled_for);
CREATE INDEX runs_by_owner ON runs (owner, created_at);
CREATE INDEX runs_by_finish ON runs (finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX runs_running ON runs (job_id) WHERE status = 'running';

CREATE TABLE leases (
    engine_id TEXT PRIMARY KEY,
    acquired_at BIGINT NOT NULL,
    until BIGINT NOT NULL
);
"""

# ``seq`` orders the buffer as SQLite's rowid does (a replaced notification goes last); it is
# the one column that rows.py does not name, and no statement reads it into a row.
_V2 = """
CREATE TABLE watcher_state (
    job_id TEXT PRIMARY KEY REFERENCES jobs (id) ON DELETE CASCADE,
    owner TEXT NOT NULL,
    state TEXT NOT NULL,
    checks BIGINT NOT NULL DEFAULT 0,
    notifications BIGINT NOT NULL DEFAULT 0,
    last_check_at BIGINT,
    last_notified_at BIGINT,
    updated_at BIGINT NOT NULL
);

CREATE TABLE watcher_results (
    job_id TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    check_number BIGINT NOT NULL,
    owner TEXT NOT NULL,
    run_id TEXT,
    checked_at BIGINT NOT NULL,
    success SMALLINT NOT NULL,
    result TEXT NOT NULL,
    notified SMALLINT NOT NULL,
    reason TEXT NOT NULL,
    PRIMARY KEY (job_id, check_number)
);

CREATE TABLE notification_buffer (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    session TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    notification TEXT NOT NULL,
    seq BIGSERIAL NOT NULL
);
CREATE INDEX notification_buffer_by_session ON notification_buffer (owner, session, created_at);
"""

_V3 = """
ALTER TABLE jobs ADD COLUMN plugin_owner TEXT;
ALTER TABLE jobs ADD COLUMN key TEXT;
CREATE UNIQUE INDEX jobs_owned_key ON jobs (owner, plugin_owner, key)
    WHERE plugin_owner IS NOT NULL;

CREATE TABLE disabled_owners (
    owner TEXT NOT NULL,
    plugin_owner TEXT NOT NULL,
    disabled_at BIGINT NOT NULL,
    held_jobs TEXT NOT NULL,
    PRIMARY KEY (owner, plugin_owner)
);
"""

# Listing pages walk an index in (sort key, id) order within one owner; the expressions are
# those of store/sql_builders.py's JOB_SORT_SQL (a job with no next fire last, one never run first).
_V4 = """
DROP INDEX jobs_by_owner;
CREATE INDEX jobs_by_owner ON jobs (owner, created_at, id);
CREATE INDEX jobs_by_owner_name ON jobs (owner, name, id);
CREATE INDEX jobs_by_owner_next_fire
    ON jobs (owner, coalesce(next_fire_at, 4611686018427387904), id);
CREATE INDEX jobs_by_owner_last_run
    ON jobs (owner, coalesce(last_run_at, -4611686018427387904), id);
CREATE INDEX jobs_by_owner_status ON jobs (owner, status, last_status);
CREATE INDEX runs_by_owner_newest ON runs (owner, scheduled_for, created_at, id);
"""

# The approvals inbox: as migration 5 of SQLite (store/migrations.py).
_V5 = """
CREATE TABLE approvals (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    tool TEXT NOT NULL,
    summary TEXT NOT NULL,
    source TEXT NOT NULL,
    asked_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    status TEXT NOT NULL,
    decided_by TEXT,
    decided_at BIGINT,
    note TEXT
);
CREATE INDEX approvals_by_owner ON approvals (owner, status, created_at);
CREATE INDEX approvals_pending ON approvals (expires_at) WHERE status = 'pending';
"""

MIGRATIONS = (
    PostgresMigration(1, "create jobs, runs and leases", _V1),
    PostgresMigration(2, "create watcher state, watcher results and the notification buffer", _V2),
    PostgresMigration(3, "owned jobs: plugin_owner and key on jobs, disabled owners", _V3),
    PostgresMigration(
        4, "indexes for listing pages: jobs by each sort key, runs newest first, counts", _V4
    ),
    PostgresMigration(5, "create the approvals inbox", _V5),
    PostgresMigration(
        6,
        "retries: attempt and retry_at on runs, unique per attempt",
        RETRIES_SCHEMA.format(integer="BIGINT"),
    ),
    PostgresMigration(
        7,
        "dependencies: jobs fired by another job's runs, with their cursor",
        DEPENDENCIES_SCHEMA.format(integer="BIGINT"),
    ),
    PostgresMigration(
        8,
        "pause after failures: failure_streak and paused_reason on jobs",
        LIFECYCLE_SCHEMA.format(integer="BIGINT"),
    ),
    PostgresMigration(9, "paused jobs have no next fire", PAUSED_HAVE_NO_NEXT_FIRE),
)
"""Every migration, in version order. A released migration is never edited."""

_CREATE_MIGRATIONS = (
    "CREATE TABLE IF NOT EXISTS migrations "
    "(version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
)

Execute = Callable[[str, tuple[Any, ...]], list[tuple[Any, ...]]]
"""Runs one statement on the store's connection and returns its rows (empty when none)."""


def latest_version() -> int:
    return MIGRATIONS[-1].version


def _applied(execute: Execute) -> set[int]:
    exists = execute("SELECT to_regclass('migrations') IS NOT NULL", ())
    if not exists[0][0]:
        return set()
    return {int(version) for (version,) in execute("SELECT version FROM migrations", ())}


def _refuse_newer(applied: set[int]) -> None:
    newest = max(applied, default=0)
    if newest > latest_version():
        raise StoreError(
            f"the database is at schema version {newest}, newer than this release of "
            f"jupyter_recall knows (up to {latest_version()}); upgrade jupyter_recall"
        )


def migrate(
    execute: Execute, transaction: Callable[[], AbstractContextManager[None]]
) -> list[PostgresMigration]:
    """Apply the missing migrations in order; return those applied (empty when up to date)."""
    applied = _applied(execute)
    _refuse_newer(applied)
    done: list[PostgresMigration] = []
    for step in MIGRATIONS:
        if step.version in applied:
            continue
        with transaction():
            execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            execute(_CREATE_MIGRATIONS, ())
            applied = _applied(execute)
            _refuse_newer(applied)
            if step.version in applied:
                continue
            execute(step.sql, ())
            execute(
                "INSERT INTO migrations (version, name, applied_at) VALUES (%s, %s, %s)",
                (step.version, step.name, datetime.now(timezone.utc).isoformat()),
            )
        done.append(step)
    return done
