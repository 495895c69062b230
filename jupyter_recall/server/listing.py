"""Pages of job, run and approval listings: the sort order, the opaque cursor, the page size.

A cursor is the last item of a page in the listing's order (keyset pagination): base64url of a
small JSON object, meaningless to clients, checked when it comes back. A page of 50 costs the
same with 100,000 jobs held as with 10, since the store walks an index from the cursor on.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TypedDict, TypeVar

from jupyter_recall.core.approvals import ApprovalRecord
from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.model import Job, Run
from jupyter_recall.server.body import holds_lone_surrogate
from jupyter_recall.store.base import ApprovalCursor, JobCursor, RunCursor

DEFAULT_PAGE = 100
"""The page size when ``?limit=`` is absent (an unpaged request gets the first page)."""
MAX_PAGE = 10_000
ORDERS = ("asc", "desc")
DEFAULT_DESCENDING = {"created_at": True, "last_run_at": True, "next_fire_at": False, "name": False}
"""Newest first, most recently run first, soonest fire first, A to Z."""
INSTANT_KEYS = frozenset({"created_at", "last_run_at", "next_fire_at"})
MAX_CURSOR = 2_000
SEARCH_LIMIT = 200
Item = TypeVar("Item")


@dataclass(frozen=True, slots=True)
class JobOrder:
    sort: str
    descending: bool


def job_order(sort: str | None, order: str | None) -> JobOrder:
    """``?sort=`` and ``?order=`` (both already checked against their choices)."""
    key = sort or "created_at"
    descending = DEFAULT_DESCENDING[key] if order is None else order == "desc"
    return JobOrder(key, descending)


def check_search(text: str | None) -> str | None:
    if text is None:
        return None
    if len(text) > SEARCH_LIMIT or "\x00" in text:
        raise ValidationError("q", f"at most {SEARCH_LIMIT} characters, no NUL")
    return text.strip() or None


class JobCursorJSON(TypedDict):
    """A job listing's cursor: its sort (``s``), order (``d``: descending), and the sort
    value (``v``) and id (``i``) of the last job of the page."""

    s: str
    d: bool
    v: str | None
    i: str


class RunCursorJSON(TypedDict):
    """A run listing's cursor: the last run's ``scheduled_for`` (``f``), ``created_at``
    (``c``) and id (``i``)."""

    f: str
    c: str
    i: str


class ApprovalCursorJSON(TypedDict):
    """An approval listing's cursor: the last record's ``created_at`` (``c``) and id (``i``)."""

    c: str
    i: str


def encode_cursor(document: JobCursorJSON | RunCursorJSON | ApprovalCursorJSON) -> str:
    raw = json.dumps(document, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(text: str) -> dict[str, object]:
    """The cursor's object, unchecked (what a client sent back); a ValidationError naming
    ``cursor`` for anything that is not one."""
    if len(text) > MAX_CURSOR:
        raise ValidationError("cursor", "not a cursor this server gave (too long)")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        document = json.loads(raw)
    except (binascii.Error, ValueError, RecursionError):
        raise ValidationError(
            "cursor", "not a cursor this server gave; pass next_cursor as it came"
        ) from None
    if not isinstance(document, dict):
        raise ValidationError("cursor", "not a cursor this server gave")
    return document


def job_cursor(job: Job, order: JobOrder) -> str:
    value = getattr(job, order.sort)
    return encode_cursor(
        {
            "s": order.sort,
            "d": order.descending,
            "v": value.isoformat() if isinstance(value, datetime) else value,
            "i": job.id,
        }
    )


def parse_job_cursor(text: str | None, order: JobOrder) -> JobCursor | None:
    if text is None:
        return None
    document = decode_cursor(text)
    if document.get("s") != order.sort or document.get("d") != order.descending:
        raise ValidationError(
            "cursor", "belongs to another sort or order; pass the same sort and order as before"
        )
    value, ident = document.get("v"), _cursor_text(document.get("i"))
    if order.sort in INSTANT_KEYS:
        return JobCursor(None if value is None else _instant(value), ident)
    return JobCursor(_cursor_text(value), ident)


def run_cursor(run: Run) -> str:
    return encode_cursor(
        {"f": run.scheduled_for.isoformat(), "c": run.created_at.isoformat(), "i": run.id}
    )


def parse_run_cursor(text: str | None) -> RunCursor | None:
    if text is None:
        return None
    document, ident = _with_id(text)
    return RunCursor(_instant(document.get("f")), _instant(document.get("c")), ident)


def approval_cursor(record: ApprovalRecord) -> str:
    return encode_cursor({"c": record.created_at.isoformat(), "i": record.id})


def parse_approval_cursor(text: str | None) -> ApprovalCursor | None:
    if text is None:
        return None
    document, ident = _with_id(text)
    return ApprovalCursor(_instant(document.get("c")), ident)


def _with_id(text: str) -> tuple[dict[str, object], str]:
    """A cursor's object and the id of the item it ends on."""
    document = decode_cursor(text)
    return document, _cursor_text(document.get("i"))


def _cursor_text(value: object) -> str:
    """An id or a name of a cursor, as the store can compare it: a lone surrogate or a NUL is
    in no cursor this server gave, and no store can encode the one (PostgreSQL the other)."""
    if not isinstance(value, str) or holds_lone_surrogate(value) or "\x00" in value:
        raise ValidationError("cursor", "not a cursor this server gave")
    return value


def _instant(value: object) -> datetime:
    try:
        instant = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        instant = None
    if instant is None or instant.tzinfo is None:
        raise ValidationError("cursor", "not a cursor this server gave")
    return instant


def page_of(found: Sequence[Item], limit: int) -> tuple[Sequence[Item], Item | None]:
    """The page (``limit`` items) of what was read with ``limit + 1``, and the item the next
    cursor points after when there is more."""
    if len(found) > limit:
        page = found[:limit]
        return page, page[-1]
    return found, None
