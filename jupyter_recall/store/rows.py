"""The columns of every table, once: one ``NamedTuple`` per table, in the table's column order.

SQL statements name their columns from these (``columns(JobRow._fields)``), and rows are read
and built by column name (``row.next_fire_at``, ``JobRow(id=..., ...)``), never by position. A
NamedTuple is a tuple: the sqlite3 module binds it as one, and reading a field costs about as
much as indexing. A test checks each class against the migrated schema, so a migration that
adds a column must add it here too.

Values are as stored: instants are integer microseconds since the Unix epoch (UTC), enums and
JSON payloads are text, booleans are 0 or 1 (``codec.py`` converts).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple


class JobRow(NamedTuple):
    """``jobs``: every field of a ``Job``; ``when_text`` is ``Job.when``, ``schedule_kind``
    repeats ``schedule.kind`` for SQL to filter on."""

    id: str
    owner: str
    name: str
    kind: str
    status: str
    when_text: str
    schedule_kind: str
    schedule: str
    action: str
    target: str
    options: str
    policies: str
    session: str | None
    next_occurrence: int | None
    next_fire_at: int | None
    run_count: int
    failure_count: int
    last_run_at: int | None
    last_run_id: str | None
    last_status: str | None
    last_error: str | None
    created_at: int
    updated_at: int
    version: int
    plugin_owner: str | None
    key: str | None
    failure_streak: int
    """Consecutive failed occurrences (``policies.pause_after_failures``; migration 8)."""
    paused_reason: str | None
    """Why the engine paused the job; NULL when a person did (migration 8)."""


class JobStateRow(NamedTuple):
    """The columns of ``jobs`` that a ``JobState`` is read from, named as its fields: what
    firing and the end of runs change, after ``id`` and ``schedule_kind`` (read, never
    written). Not a table: a projection of ``jobs``."""

    id: str
    schedule_kind: str
    status: str
    next_occurrence: int | None
    next_fire_at: int | None
    run_count: int
    failure_count: int
    last_run_at: int | None
    last_run_id: str | None
    last_status: str | None
    last_error: str | None
    updated_at: int


class RunRow(NamedTuple):
    """``runs``: every field of a ``Run``; ``trigger_kind`` is ``Run.trigger``, and
    ``output_dropped`` counts the characters ``append_output`` cut from ``output``."""

    id: str
    job_id: str
    owner: str
    scheduled_for: int
    trigger_kind: str
    status: str
    created_at: int
    started_at: int | None
    finished_at: int | None
    output: str
    output_dropped: int
    error: str | None
    engine_id: str | None
    attempt: int
    """1 for an occurrence's first run, then 2, 3... for its retries (unique per occurrence)."""
    retry_at: int | None
    """On an ended attempt followed by another: when that one is due (``due_retries``)."""


class RunStateRow(NamedTuple):
    """The columns of ``runs`` that change while and after a run executes, and its id (for
    ``update_run_states``). Not a table: a projection of ``runs``."""

    id: str
    status: str
    started_at: int | None
    finished_at: int | None
    error: str | None
    retry_at: int | None


class LeaseRow(NamedTuple):
    """``leases``: an engine is alive while ``until`` is in the future."""

    engine_id: str
    acquired_at: int
    until: int


class MigrationRow(NamedTuple):
    """``migrations``: the schema versions applied (``applied_at`` is ISO 8601 text)."""

    version: int
    name: str
    applied_at: str


class WatcherStateRow(NamedTuple):
    """``watcher_state``: a watcher's escalation state (JSON) and counters."""

    job_id: str
    owner: str
    state: str
    checks: int
    notifications: int
    last_check_at: int | None
    last_notified_at: int | None
    updated_at: int


class WatcherResultRow(NamedTuple):
    """``watcher_results``: the ring buffer of a watcher's last checks."""

    job_id: str
    check_number: int
    owner: str
    run_id: str | None
    checked_at: int
    success: int
    result: str
    notified: int
    reason: str


class BufferedNotificationRow(NamedTuple):
    """``notification_buffer``: a notification (JSON) held for an absent session."""

    id: str
    owner: str
    session: str
    created_at: int
    notification: str


class DisabledOwnerRow(NamedTuple):
    """``disabled_owners``: a plugin owner a user switched off, with the ids (JSON list) of
    the jobs that switching off paused."""

    owner: str
    plugin_owner: str
    disabled_at: int
    held_jobs: str


class ApprovalRow(NamedTuple):
    """``approvals``: a tool call waiting for (or settled by) a person's decision."""

    id: str
    owner: str
    tool: str
    summary: str
    source: str
    asked_by: str
    created_at: int
    expires_at: int
    status: str
    decided_by: str | None
    decided_at: int | None
    note: str | None


class DependencyRow(NamedTuple):
    """``dependencies``: a job fired by another job's runs, and the cursor of the last
    upstream run it handled (``core/dependency.py``)."""

    job_id: str
    owner: str
    upstream_id: str
    on_status: str
    cursor_at: int
    cursor_run: str


TABLES: dict[str, tuple[str, ...]] = {
    "jobs": JobRow._fields,
    "runs": RunRow._fields,
    "leases": LeaseRow._fields,
    "migrations": MigrationRow._fields,
    "watcher_state": WatcherStateRow._fields,
    "watcher_results": WatcherResultRow._fields,
    "notification_buffer": BufferedNotificationRow._fields,
    "disabled_owners": DisabledOwnerRow._fields,
    "approvals": ApprovalRow._fields,
    "dependencies": DependencyRow._fields,
}
"""Every table of the schema and its columns."""


def columns(fields: Sequence[str], *, prefix: str = "") -> str:
    """Columns for a SELECT or INSERT: ``id, owner, ...`` (``prefix`` qualifies them with a
    table name: ``runs.``)."""
    return ", ".join(f"{prefix}{name}" for name in fields)
