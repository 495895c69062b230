"""The ``ApprovalStore`` protocol on SQLite and PostgreSQL (the ``approvals`` table, migration 5).

One SQL for both: ``ApprovalTables`` is mixed into each store and runs on its connection
(``_rows``) under its transactions (``atomic``); only the parameter mark differs. A decision
is one conditional UPDATE (``WHERE status = 'pending'``), so two answers racing each other
from two surfaces or two servers leave exactly one decision.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, ClassVar, Protocol

from jupyter_recall.core.approvals import EXPIRED, PENDING, ApprovalRecord
from jupyter_recall.store.base import ApprovalCursor
from jupyter_recall.store.codec import decode_instant, decode_optional_instant, encode_instant
from jupyter_recall.store.rows import ApprovalRow

FIELDS = ApprovalRow._fields
_COLUMNS = ", ".join(FIELDS)
LIST_LIMIT = 500


def _record(row: Sequence[Any]) -> ApprovalRecord:
    values = dict(zip(FIELDS, row, strict=True))
    values["created_at"] = decode_instant(values["created_at"])
    values["expires_at"] = decode_instant(values["expires_at"])
    values["decided_at"] = decode_optional_instant(values["decided_at"])
    return ApprovalRecord(**values)


class _Connected(Protocol):
    """What the table needs of the store it is mixed into."""

    _mark: ClassVar[str]

    def atomic(self) -> AbstractContextManager[None]: ...

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]: ...


class ApprovalTables:
    """``ApprovalStore``; ``_mark`` is the store's parameter mark (``?`` or ``%s``)."""

    _mark: ClassVar[str] = "?"

    def insert_approval(self: _Connected, record: ApprovalRecord) -> None:
        values = [
            encode_instant(value, name) if isinstance(value, datetime) else value
            for name, value in zip(FIELDS, _values(record), strict=True)
        ]
        marks = ", ".join([self._mark] * len(FIELDS))
        with self.atomic():
            self._rows(f"INSERT INTO approvals ({_COLUMNS}) VALUES ({marks})", values)

    def get_approval(self: _Connected, approval_id: str) -> ApprovalRecord | None:
        rows = self._rows(
            f"SELECT {_COLUMNS} FROM approvals WHERE id = {self._mark}", (approval_id,)
        )
        return _record(rows[0]) if rows else None

    def list_approvals(
        self: _Connected,
        owner: str,
        status: str | None = None,
        limit: int = LIST_LIMIT,
        after: ApprovalCursor | None = None,
    ) -> list[ApprovalRecord]:
        mark = self._mark
        where = f"owner = {mark}"
        params: list[str | int] = [owner]
        if status is not None:
            where += f" AND status = {mark}"
            params.append(status)
        if after is not None:
            where += f" AND (created_at, id) < ({mark}, {mark})"
            params += [encode_instant(after.created_at, "cursor"), after.id]
        sql = (
            f"SELECT {_COLUMNS} FROM approvals WHERE {where} "
            f"ORDER BY created_at DESC, id DESC LIMIT {int(limit)}"
        )
        return [_record(row) for row in self._rows(sql, params)]

    def pending_approvals_asked_by(
        self: _Connected, asked_by: Sequence[str]
    ) -> list[ApprovalRecord]:
        if not asked_by:
            return []
        marks = ", ".join([self._mark] * len(asked_by))
        sql = (
            f"SELECT {_COLUMNS} FROM approvals WHERE status = 'pending' "
            f"AND asked_by IN ({marks}) ORDER BY created_at, id"
        )
        return [_record(row) for row in self._rows(sql, list(asked_by))]

    def decide_approval(
        self: _Connected,
        approval_id: str,
        status: str,
        *,
        decided_by: str | None,
        note: str | None,
        now: datetime,
    ) -> bool:
        """Settle a pending record; False when it was not pending (decided, expired, absent)."""
        mark = self._mark
        sql = (
            f"UPDATE approvals SET status = {mark}, decided_by = {mark}, decided_at = {mark}, "
            f"note = {mark} WHERE id = {mark} AND status = '{PENDING}' RETURNING id"
        )
        params = (status, decided_by, encode_instant(now, "now"), note, approval_id)
        with self.atomic():
            return bool(self._rows(sql, params))

    def expire_approvals(self: _Connected, *, now: datetime) -> list[str]:
        """Mark pending records past their time ``expired``; return their ids."""
        mark = self._mark
        sql = (
            f"UPDATE approvals SET status = '{EXPIRED}', decided_at = {mark} "
            f"WHERE status = '{PENDING}' AND expires_at <= {mark} RETURNING id"
        )
        at = encode_instant(now, "now")
        with self.atomic():
            return [str(row[0]) for row in self._rows(sql, (at, at))]


def _values(record: ApprovalRecord) -> list[Any]:
    return [getattr(record, name) for name in FIELDS]
