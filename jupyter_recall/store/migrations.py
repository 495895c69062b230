"""Recorded schema migrations of the SQLite store.

A migration is a function registered under a version and a name. When a store opens, the
migrations missing from the ``migrations`` table are applied in version order, each in its own
transaction together with the row that records it, so a crash between two migrations leaves a
consistent, resumable schema. A released migration is never edited: a change is a new version.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from jupyter_recall.core.errors import StoreError

Database = Any
"""``sqlite_utils.Database`` (untyped library)."""

MigrationFunc = Callable[[Database], None]


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    apply: MigrationFunc


_REGISTRY: dict[int, Migration] = {}


def migration(version: int, name: str) -> Callable[[MigrationFunc], MigrationFunc]:
    """Register ``func`` as the migration to schema ``version``."""

    def register(func: MigrationFunc) -> MigrationFunc:
        if version in _REGISTRY:
            raise ValueError(f"migration version {version} is registered twice")
        _REGISTRY[version] = Migration(version, name, func)
        return func

    return register


def registered() -> list[Migration]:
    return [_REGISTRY[version] for version in sorted(_REGISTRY)]


def latest_version() -> int:
    return max(_REGISTRY, default=0)


def applied_versions(db: Database) -> set[int]:
    if not db.table("migrations").exists():
        return set()
    return {version for (version,) in db.execute("SELECT version FROM migrations")}


def _refuse_newer_schema(applied: set[int]) -> None:
    newest = max(applied, default=0)
    if newest > latest_version():
        raise StoreError(
            f"the database is at schema version {newest}, newer than this release of "
            f"jupyter_recall knows (up to {latest_version()}); upgrade jupyter_recall"
        )


def migrate(
    db: Database, transaction: Callable[[], AbstractContextManager[None]]
) -> list[Migration]:
    """Apply the missing migrations in order; return those applied (empty when up to date).

    The check is repeated inside each write transaction, so two processes opening the same
    file at once apply each migration exactly once.
    """
    applied = applied_versions(db)
    _refuse_newer_schema(applied)
    done: list[Migration] = []
    for step in registered():
        if step.version in applied:
            continue
        with transaction():
            _create_migrations_table(db)
            applied = applied_versions(db)
            _refuse_newer_schema(applied)
            if step.version in applied:
                continue
            step.apply(db)
            db.execute(
                "INSERT INTO migrations (version, name, applied_at) VALUES (?, ?, ?)",
                (step.version, step.name, datetime.now(timezone.utc).isoformat()),
            )
        done.append(step)
    return done


def _create_migrations_table(db: Database) -> None:
    db.create_table(
        "migrations",
        {"version": int, "name": str, "applied_at": str},
        pk="version",
        not_null={"name", "applied_at"},
        if_not_exists=True,
    )


# --- the migrations -----------------------------------------------------------------------
# Instants are INTEGER microseconds since the Unix epoch (UTC): they sort numerically and
# convert without parsing. JSON payload columns hold TEXT.

_SCHEMA_V1 = """
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
    next_occurrence INTEGER,
    next_fire_at INTEGER,
    run_count INTEGER NOT NULL DEFAULT 0,
    failure_count INTEGER NOT NULL DEFAULT 0,
    last_run_at INTEGER,
    last_run_id TEXT,
    last_status TEXT,
    last_error TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    version INTEGER NOT NULL
);
CREATE INDEX jobs_due ON jobs (next_fire_at, id) WHERE status = 'active';
CREATE UNIQUE INDEX jobs_one_pending_recall ON jobs (owner, session)
    WHERE kind = 'recall' AND status IN ('active', 'paused') AND next_occurrence IS NOT NULL;
CREATE INDEX jobs_by_owner ON jobs (owner, created_at);

CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    job_id TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    owner TEXT NOT NULL,
    scheduled_for INTEGER NOT NULL,
    trigger_kind TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    started_at INTEGER,
    finished_at INTEGER,
    output TEXT NOT NULL DEFAULT '',
    output_dropped INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    engine_id TEXT
);
CREATE UNIQUE INDEX runs_one_per_occurrence ON runs (job_id, scheduled_for);
CREATE INDEX runs_by_owner ON runs (owner, created_at);
CREATE INDEX runs_by_finish ON runs (finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX runs_running ON runs (job_id) WHERE status = 'running';

CREATE TABLE leases (
    engine_id TEXT PRIMARY KEY,
    acquired_at INTEGER NOT NULL,
    until INTEGER NOT NULL
);
"""


@migration(1, "create jobs, runs and leases")
def _create_schema(db: Database) -> None:
    db.executescript(_SCHEMA_V1)


# Watchers and notifications (store/watchers.py): a watcher's escalation state and counters, the
# ring buffer of its last results, and notifications held for notebook sessions that were not
# listening when they were sent.
_SCHEMA_V2 = """
CREATE TABLE watcher_state (
    job_id TEXT PRIMARY KEY REFERENCES jobs (id) ON DELETE CASCADE,
    owner TEXT NOT NULL,
    state TEXT NOT NULL,
    checks INTEGER NOT NULL DEFAULT 0,
    notifications INTEGER NOT NULL DEFAULT 0,
    last_check_at INTEGER,
    last_notified_at INTEGER,
    updated_at INTEGER NOT NULL
);

CREATE TABLE watcher_results (
    job_id TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    check_number INTEGER NOT NULL,
    owner TEXT NOT NULL,
    run_id TEXT,
    checked_at INTEGER NOT NULL,
    success INTEGER NOT NULL,
    result TEXT NOT NULL,
    notified INTEGER NOT NULL,
    reason TEXT NOT NULL,
    PRIMARY KEY (job_id, check_number)
);

CREATE TABLE notification_buffer (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    session TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    notification TEXT NOT NULL
);
CREATE INDEX notification_buffer_by_session ON notification_buffer (owner, session, created_at);
"""


@migration(2, "create watcher state, watcher results and the notification buffer")
def _create_watchers(db: Database) -> None:
    db.executescript(_SCHEMA_V2)


# Jobs declared by packages and deployments (engine/owners.py): the declaring owner and the
# job's key within its declaration, unique per user; and the owners a user switched off, with
# the jobs that switching off paused (so switching on resumes those and no others).
_SCHEMA_V3 = """
ALTER TABLE jobs ADD COLUMN plugin_owner TEXT;
ALTER TABLE jobs ADD COLUMN key TEXT;
CREATE UNIQUE INDEX jobs_owned_key ON jobs (owner, plugin_owner, key)
    WHERE plugin_owner IS NOT NULL;

CREATE TABLE disabled_owners (
    owner TEXT NOT NULL,
    plugin_owner TEXT NOT NULL,
    disabled_at INTEGER NOT NULL,
    held_jobs TEXT NOT NULL,
    PRIMARY KEY (owner, plugin_owner)
);
"""


@migration(3, "owned jobs: plugin_owner and key on jobs, disabled owners")
def _create_owned_jobs(db: Database) -> None:
    for statement in _SCHEMA_V3.split(";"):
        if statement.strip():
            db.execute(statement)


# Listing pages (``?sort=&cursor=``) walk an index in (sort key, id) order within one owner
# (jobs_by_owner of migration 1 serves created_at), so a page costs the same with 10 jobs or
# 100,000; the expressions are those of
# store/sql_builders.py's JOB_SORT_SQL (a job with no next fire last). Every index on a column
# that firing writes costs each state write (next_fire_at's about doubles it): last_run_at,
# written at each run's end, has none, so sorting by last_run_at reads all of the user's jobs
# (about 130 ms with 100,000). Counting reads (owner, status, last_status) only: the status
# bar asks after each burst of changes, and reading the rows took 120-280 ms at 100,000.
_SCHEMA_V4 = """
CREATE INDEX jobs_by_owner_name ON jobs (owner, name, id);
CREATE INDEX jobs_by_owner_next_fire
    ON jobs (owner, coalesce(next_fire_at, 4611686018427387904), id);
CREATE INDEX jobs_by_owner_status ON jobs (owner, status, last_status);
CREATE INDEX runs_by_owner_newest ON runs (owner, scheduled_for, created_at, id);
"""


@migration(4, "indexes for listing pages: jobs by each sort key, runs newest first, counts")
def _create_listing_indexes(db: Database) -> None:
    for statement in _SCHEMA_V4.split(";"):
        if statement.strip():
            db.execute(statement)


# The approvals inbox (core/approvals.py): one row per tool call under an ``approve`` policy,
# read by owner and status, newest first; pending rows are expired by their expires_at.
_SCHEMA_V5 = """
CREATE TABLE approvals (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    tool TEXT NOT NULL,
    summary TEXT NOT NULL,
    source TEXT NOT NULL,
    asked_by TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    status TEXT NOT NULL,
    decided_by TEXT,
    decided_at INTEGER,
    note TEXT
);
CREATE INDEX approvals_by_owner ON approvals (owner, status, created_at);
CREATE INDEX approvals_pending ON approvals (expires_at) WHERE status = 'pending';
"""


@migration(5, "create the approvals inbox")
def _create_approvals(db: Database) -> None:
    for statement in _SCHEMA_V5.split(";"):
        if statement.strip():
            db.execute(statement)


# Retries (policies.retries): each run is one attempt of its occurrence, unique per
# (job_id, scheduled_for, attempt); an ended attempt followed by another holds the instant that
# one is due (store/retries_sql.py).
@migration(6, "retries: attempt and retry_at on runs, unique per attempt")
def _add_attempts(db: Database) -> None:
    from jupyter_recall.store.retries_sql import SCHEMA

    for statement in SCHEMA.format(integer="INTEGER").split(";"):
        if statement.strip():
            db.execute(statement)


# Pause after failures (policies.pause_after_failures): the count of a job's consecutive failed
# occurrences and why the engine paused it, on the job's row (store/lifecycle_tables.py).
@migration(8, "pause after failures: failure_streak and paused_reason on jobs")
def _add_failure_streaks(db: Database) -> None:
    from jupyter_recall.store.lifecycle_tables import SCHEMA

    for statement in SCHEMA.format(integer="INTEGER").split(";"):
        if statement.strip():
            db.execute(statement)


# Dependencies (core/dependency.py): one row per job fired by another job's runs, found by its
# upstream; its cursor is the last upstream run handled (store/dependency_tables.py).
@migration(7, "dependencies: jobs fired by another job's runs, with their cursor")
def _create_dependencies(db: Database) -> None:
    from jupyter_recall.store.dependency_tables import SCHEMA

    for statement in SCHEMA.format(integer="INTEGER").split(";"):
        if statement.strip():
            db.execute(statement)


# A paused job does not fire: its next fire is NULL, so listings sort it after every instant
# (docs/rest.md) and nothing shows a time in the past. Jobs paused before kept theirs.
@migration(9, "paused jobs have no next fire")
def _clear_paused_next_fires(db: Database) -> None:
    from jupyter_recall.store.lifecycle_tables import PAUSED_HAVE_NO_NEXT_FIRE

    db.execute(PAUSED_HAVE_NO_NEXT_FIRE)
