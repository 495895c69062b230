"""The SQL that both stores build the same way, with what differs between SQLite and PostgreSQL
as a ``Dialect``: the listings of jobs and runs (filters, search, keyset pages, order), the
scoping of a statement to an owner, and the naming of what a refused batch of jobs or runs
clashed with.

Statements that differ in substance (batch writes through ``unnest`` or ``executemany``,
``FOR UPDATE SKIP LOCKED``, leases) stay in each store's module.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from jupyter_recall.core.errors import ConflictError, NotFoundError, PendingRecallExists
from jupyter_recall.core.model import Job, JobKind, Run
from jupyter_recall.store import codec
from jupyter_recall.store.base import JobFilter, RunCursor, RunFilter


@dataclass(frozen=True, slots=True)
class Dialect:
    mark: str
    """The parameter placeholder."""
    true: str
    """An always-true clause (the head of a list of ANDed clauses)."""
    like: str
    """The case-insensitive pattern match."""
    arrays: bool
    """Whether a set of values binds as one array (``= ANY(%s)``) rather than ``IN (?, ?)``."""
    range_bound: bool
    """Whether a keyset page repeats its first key as a plain bound: SQLite turns that into a
    range of the index (it does not for a row value over an expression), so deep pages cost
    what the first one does."""


SQLITE = Dialect(mark="?", true="1", like="LIKE", arrays=False, range_bound=True)
POSTGRES = Dialect(mark="%s", true="TRUE", like="ILIKE", arrays=True, range_bound=False)

LONG_AGO = -(2**62)
"""Before every stored instant (microseconds since the epoch): ``next_fire_at > ?`` with it
is ``IS NOT NULL``, so the query keeps one form, which uses the jobs_due index."""
NEVER = 2**62
"""After every stored instant: where a job with no next fire sorts."""
# Each sort key as the expression its index (migration 4) is on: the query must name the
# same expression for the database to walk that index instead of sorting every row.
JOB_SORT_SQL = {
    "created_at": "created_at",
    "name": "name",
    "next_fire_at": f"coalesce(next_fire_at, {NEVER})",
    "last_run_at": f"coalesce(last_run_at, {LONG_AGO})",
}
PENDING_RECALL = (
    "kind = 'recall' AND status IN ('active', 'paused') AND next_occurrence IS NOT NULL"
)
COUNT_BY_STATUS = (
    "SELECT status, count(*), sum(CASE WHEN last_status = 'running' THEN 1 ELSE 0 END) "
    "FROM jobs WHERE "
)
_SEARCHED = ("id", "name", "when_text", "session")

Statement = tuple[str, list[Any]]


def scoped(d: Dialect, sql: str, params: list[Any], owner: str | None) -> Statement:
    """``sql`` (ending in a WHERE clause) limited to ``owner``'s rows (None: every owner's)."""
    if owner is None:
        return sql, params
    return f"{sql} AND owner = {d.mark}", [*params, owner]


def one_of(d: Dialect, column: str, values: Sequence[str]) -> Statement:
    if d.arrays:
        return f"{column} = ANY({d.mark})", [list(values)]
    return f"{column} IN ({', '.join([d.mark] * len(values))})", list(values)


def like_pattern(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def sort_value(sort: str, value: datetime | str | None) -> Any:
    """A cursor's value as the sort expression of ``sort`` stores it."""
    if isinstance(value, datetime):
        return codec.encode_instant(value, "cursor")
    if value is None:
        return NEVER if sort == "next_fire_at" else LONG_AGO
    return value


def _add(clauses: list[str], params: list[Any], statement: Statement) -> None:
    clauses.append(statement[0])
    params.extend(statement[1])


def job_clauses(d: Dialect, where: JobFilter) -> Statement:
    """The filter of ``where`` (its search included, its page not) as ANDed clauses."""
    clauses: list[str] = [d.true]
    params: list[Any] = []
    if where.status:
        _add(clauses, params, one_of(d, "status", [s.value for s in where.status]))
    if where.kind:
        _add(clauses, params, one_of(d, "kind", [k.value for k in where.kind]))
    for column in ("session", "schedule_kind", "plugin_owner"):
        value = getattr(where, column)
        if value is not None:
            _add(clauses, params, (f"{column} = {d.mark}", [value]))
    if where.pending_recalls_only:
        clauses.append(PENDING_RECALL)
    if where.search:
        matches = " OR ".join(f"{name} {d.like} {d.mark} ESCAPE '\\'" for name in _SEARCHED)
        _add(clauses, params, (f"({matches})", [like_pattern(where.search)] * len(_SEARCHED)))
    return " AND ".join(clauses), params


def job_listing(d: Dialect, select: str, where: JobFilter, owner: str | None) -> Statement:
    """``select`` (``SELECT … FROM jobs``) of one page of ``owner``'s jobs matching ``where``."""
    clause, params = job_clauses(d, where)
    if where.after is not None:
        comparison = "<" if where.descending else ">"
        key = JOB_SORT_SQL[where.sort]
        value = sort_value(where.sort, where.after.value)
        if d.range_bound:
            clause += f" AND {key} {comparison}= {d.mark}"
            params.append(value)
        clause += f" AND ({key}, id) {comparison} ({d.mark}, {d.mark})"
        params.extend((value, where.after.id))
    sql, params = scoped(d, f"{select} WHERE {clause}", params, owner)
    direction = " DESC" if where.descending else ""
    sql += f" ORDER BY {JOB_SORT_SQL[where.sort]}{direction}, id{direction}"
    return _limited(d, sql, params, where.limit)


def job_counts(d: Dialect, where: JobFilter, owner: str | None) -> Statement:
    """How many of ``owner``'s jobs matching ``where`` have each status (and a run going)."""
    clause, params = job_clauses(d, where)
    sql, params = scoped(d, COUNT_BY_STATUS + clause, params, owner)
    return sql + " GROUP BY status ORDER BY status", params


def run_cursor_params(after: RunCursor) -> list[Any]:
    return [
        codec.encode_instant(after.scheduled_for, "cursor"),
        codec.encode_instant(after.created_at, "cursor"),
        after.id,
    ]


def run_listing(d: Dialect, select: str, where: RunFilter, owner: str | None) -> Statement:
    """``select`` (``SELECT … FROM runs``) of one page of ``owner``'s runs, newest first."""
    clauses: list[str] = [d.true]
    params: list[Any] = []
    if where.job_id is not None:
        _add(clauses, params, (f"job_id = {d.mark}", [where.job_id]))
    if where.status:
        _add(clauses, params, one_of(d, "status", [s.value for s in where.status]))
    if where.since is not None:
        since = codec.encode_instant(where.since, "since")
        _add(clauses, params, (f"(created_at >= {d.mark} OR finished_at >= {d.mark})", [since] * 2))
    if where.after is not None:
        marks = ", ".join([d.mark] * 3)
        _add(
            clauses,
            params,
            (f"(scheduled_for, created_at, id) < ({marks})", run_cursor_params(where.after)),
        )
    sql, params = scoped(d, f"{select} WHERE {' AND '.join(clauses)}", params, owner)
    sql += " ORDER BY scheduled_for DESC, created_at DESC, id DESC"
    return _limited(d, sql, params, where.limit)


def _limited(d: Dialect, sql: str, params: list[Any], limit: int | None) -> Statement:
    if limit is None:
        return sql, params
    return f"{sql} LIMIT {d.mark}", [*params, limit]


class _Store(Protocol):
    """What ``BatchConflicts`` needs of the store it is mixed into."""

    @property
    def _dialect(self) -> Dialect: ...

    @property
    def _integrity_error(self) -> type[Exception]:
        """The driver's exception for a constraint violation (the cause of the StoreError)."""
        ...

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]: ...

    def _existing_ids(self, table: str, ids: Iterable[str]) -> set[str]: ...

    def _recall_conflict(self, jobs: Sequence[Job]) -> ConflictError | None: ...

    def _pending_recall(self, owner: str, session: str, exclude: set[str]) -> str | None: ...


class BatchConflicts:
    """What a refused batch of jobs or runs clashed with, named for the user: a mixin of both
    stores (the batch is already rolled back when it is asked)."""

    def _job_conflict(
        self: _Store, jobs: Sequence[Job], exc: Exception, *, inserting: bool
    ) -> Exception:
        if not isinstance(exc.__cause__, self._integrity_error):
            return exc
        ids = [job.id for job in jobs]
        twice = _twice(ids, "job")
        if twice is not None:
            return twice
        if inserting:
            existing = self._existing_ids("jobs", ids)
            if existing:
                return ConflictError(f"job {sorted(existing)[0]!r} already exists")
        return self._recall_conflict(jobs) or exc

    def _run_conflict(self: _Store, runs: Sequence[Run], exc: Exception) -> Exception:
        if not isinstance(exc.__cause__, self._integrity_error):
            return exc
        ids = [run.id for run in runs]
        twice = _twice(ids, "run")
        if twice is not None:
            return twice
        existing = self._existing_ids("runs", ids)
        if existing:
            return ConflictError(f"run {sorted(existing)[0]!r} already exists")
        job_ids = {run.job_id for run in runs}
        missing = sorted(job_ids - self._existing_ids("jobs", job_ids))
        if missing:
            return NotFoundError("job", missing[0])
        return exc

    def _recall_conflict(self: _Store, jobs: Sequence[Job]) -> ConflictError | None:
        batch_ids = {job.id for job in jobs}
        seen: dict[tuple[str, str], str] = {}
        for job in jobs:
            if job.kind is not JobKind.RECALL or not job.is_pending or job.session is None:
                continue
            key = (job.owner, job.session)
            other = seen.get(key) or self._pending_recall(job.owner, job.session, batch_ids)
            if other is not None:
                return PendingRecallExists(job.session, other)
            seen[key] = job.id
        return None

    def _pending_recall(self: _Store, owner: str, session: str, exclude: set[str]) -> str | None:
        mark = self._dialect.mark
        sql = f"SELECT id FROM jobs WHERE owner = {mark} AND session = {mark} AND {PENDING_RECALL}"
        for (ident,) in self._rows(sql, (owner, session)):
            if ident not in exclude:
                return str(ident)
        return None


def _twice(ids: Sequence[str], what: str) -> ConflictError | None:
    twice = [ident for ident, count in Counter(ids).items() if count > 1]
    return ConflictError(f"{what} id {twice[0]!r} appears twice in one batch") if twice else None
