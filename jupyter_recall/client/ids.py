"""The ids of the server's records (jobs, runs, watchers, approvals) as clients check them
before a request, so that a bad one is refused naming the argument."""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

from jupyter_recall.core.errors import NotFoundError, ValidationError
from jupyter_recall.core.text import clip

ID_LENGTH = 64
"""The longest id (``core.limits.ID_PATTERN``): the ``maxLength`` of the tools' id arguments."""
JOB_ID = re.compile(rf"^[A-Za-z0-9_-]{{1,{ID_LENGTH}}}$")
SHOWN_WIDTH = 2 * ID_LENGTH
"""How much of a text that is no id a refusal shows."""

RESERVED: Mapping[str, frozenset[str]] = MappingProxyType(
    {"jobs": frozenset({"counts"}), "runs": frozenset({"prune"})}
)
"""Per collection of ``/api/recall/``, the words of the server's routes that stand where an id
would (``GET /api/recall/jobs/counts``, ``POST /api/recall/runs/prune``: ``server/handlers.py``'s
``route_table``, which a test compares with this). They match ``JOB_ID``, so sent as an id
they would reach the route: ``GET /jobs/counts`` answers the counts, a ``DELETE`` a 405.

They are never ids the server gave: its ids are ``core.model.new_id``'s, twelve lowercase hex
digits (jobs, runs, watchers, approvals alike; ``import`` copies rows of another store, whose ids
were made the same way), and each of these words is shorter and holds letters past ``f``. So
a reserved word given as an id is not found, as any id the server never gave, and said without
a request (``not_reserved``)."""

RECORDS: Mapping[str, str] = MappingProxyType({"jobs": "job", "runs": "run"})
"""What a record of each collection with reserved words is called in "not found"."""


def not_reserved(collection: str, ident: str) -> str:
    """``ident``, unless it is one of ``collection``'s reserved words: then the record is not
    found (``NotFoundError``: "job 'counts' not found"), as the server would say of an id it
    never gave."""
    if ident in RESERVED.get(collection, ()):
        raise NotFoundError(RECORDS[collection], ident)
    return ident


def check_job_id(job_id: object, field: str = "job_id") -> str:
    return not_reserved("jobs", check_record_id(job_id, field, "job"))


def check_record_id(ident: object, field: str, record: str) -> str:
    """``ident`` if it is shaped as the server's ids of ``record`` (a job, an approval) are."""
    if not isinstance(ident, str) or not JOB_ID.match(ident):
        # Clipped: what was typed may be a whole cell's worth.
        shown = clip(repr(ident), SHOWN_WIDTH)
        raise ValidationError(field, f"not {_a(record)} id: {shown} (ids look like '3f9c2a1b7d0e')")
    return ident


def _a(noun: str) -> str:
    return f"an {noun}" if noun[0] in "aeiou" else f"a {noun}"
