"""Approval records: a tool call under an ``approve`` policy, waiting in the owner's inbox.

A record is ``pending`` until someone decides it (``approved`` or ``denied``, with who and
when) or its ``expires_at`` passes (``expired``). A decided or expired record never changes
again: the first answer wins, whichever surface gave it.

A record whose asker stops waiting first (a server-side run stopped, its job deleted, its
server stopped or crashed) is *withdrawn*: ``expired`` at that moment, its ``note`` saying why
(``withdrawn: ...``). Not a status of its own: to every surface a withdrawn request is what an
expired one is, a question nobody waits for any more, which can no longer be decided.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TypedDict

from jupyter_recall.core.errors import ValidationError

PENDING = "pending"
APPROVED = "approved"
DENIED = "denied"
EXPIRED = "expired"
STATUSES = (PENDING, APPROVED, DENIED, EXPIRED)
DECISIONS = {"approve": APPROVED, "deny": DENIED}
"""What a person may answer -> the status it gives."""
WITHDRAWN = "withdrawn: "
"""How the note of a withdrawn record begins."""
NOTE_LIMIT = 2000
SUMMARY_LIMIT = 500


class ApprovalJSON(TypedDict):
    """An approval as answered and streamed (``Approval`` in ``openapi.yaml``)."""

    id: str
    owner: str
    tool: str
    summary: str
    source: str
    asked_by: str
    created_at: str
    expires_at: str
    status: str
    decided_by: str | None
    decided_at: str | None
    note: str | None


@dataclass(frozen=True, slots=True)
class ApprovalRecord:
    id: str
    owner: str
    tool: str
    summary: str
    """The call as a person reads it: ``shell.run(command='ls')``, clipped."""
    source: str
    """Why approval is needed: the policy's source."""
    asked_by: str
    """Who waits: ``run:<run id>`` (a server-side job) or ``kernel:<session>``."""
    created_at: datetime
    expires_at: datetime
    status: str = PENDING
    decided_by: str | None = None
    decided_at: datetime | None = None
    note: str | None = None

    def expired_at(self, now: datetime) -> bool:
        """Whether a pending record is past its time."""
        return self.status == PENDING and now >= self.expires_at

    def to_json(self) -> ApprovalJSON:
        """The record as served and streamed (``Approval`` in ``openapi.yaml``)."""
        return {
            "id": self.id,
            "owner": self.owner,
            "tool": self.tool,
            "summary": self.summary,
            "source": self.source,
            "asked_by": self.asked_by,
            "created_at": self.created_at.isoformat(),
            "expires_at": self.expires_at.isoformat(),
            "status": self.status,
            "decided_by": self.decided_by,
            "decided_at": self.decided_at.isoformat() if self.decided_at else None,
            "note": self.note,
        }


def check_decision(decision: object) -> str:
    """The status a decision gives (``approve`` -> approved, ``deny`` -> denied)."""
    if not isinstance(decision, str) or decision not in DECISIONS:
        raise ValidationError("decision", f"unknown decision {decision!r}", accepted=DECISIONS)
    return DECISIONS[decision]


def check_note(note: object) -> str | None:
    if note is None:
        return None
    if not isinstance(note, str) or len(note) > NOTE_LIMIT:
        raise ValidationError("note", f"must be text of at most {NOTE_LIMIT} characters")
    return note


def check_status(status: object) -> str:
    if not isinstance(status, str) or status not in STATUSES:
        raise ValidationError("status", f"unknown status {status!r}", accepted=STATUSES)
    return status


def withdrawn_note(asked_by: str, why: str) -> str:
    """The note of a record withdrawn because ``asked_by`` stopped waiting, ``why``."""
    return f"{WITHDRAWN}{asked_by} {why} before a decision"


def clip_summary(text: str) -> str:
    return text if len(text) <= SUMMARY_LIMIT else text[: SUMMARY_LIMIT - 1] + "…"
