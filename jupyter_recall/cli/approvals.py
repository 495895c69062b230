"""``jupyter recall approvals``, ``approve ID``, ``deny ID``: the approvals inbox in a terminal.

A decision is recorded with the identity the command authenticates as (its token's user) and
reaches the waiting tool call wherever it waits (a busy kernel, a server-side job).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any, ClassVar

from traitlets import Int, Unicode

from jupyter_recall.cli import render
from jupyter_recall.cli.base import EXIT_OK, RecallCommand, with_aliases
from jupyter_recall.cli.commands import check_limit, checked_id, each_id, read_pages
from jupyter_recall.client.remote import api_path
from jupyter_recall.core import approvals
from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.text import clip, text_table

STATUSES = (*approvals.STATUSES, "all")
"""What ``--status`` accepts: the server's statuses, and ``all`` (no filter)."""
COLUMNS = ("id", "status", "call", "asked by", "asked", "decided by")
CALL_WIDTH = 50


def approval_row(record: Mapping[str, Any]) -> tuple[str, ...]:
    return (
        str(record["id"]),
        str(record["status"]),
        clip(str(record["summary"]), CALL_WIDTH),
        str(record["asked_by"]),
        render.local_instant(record["created_at"]),
        str(record.get("decided_by") or "-"),
    )


def approvals_table(records: list[Mapping[str, Any]]) -> str:
    if not records:
        return "no approvals"
    return text_table(COLUMNS, [approval_row(record) for record in records])


class ApprovalsCommand(RecallCommand):
    name = "jupyter recall approvals"
    description = "List your approval requests (tool calls waiting for a decision), newest first."
    usage = ""
    aliases = with_aliases({"status": "ApprovalsCommand.status", "limit": "ApprovalsCommand.limit"})
    status = Unicode(
        "pending",
        config=True,
        help="pending (default), approved, denied, expired, or all.",
    )
    limit = Int(100, config=True, help="At most this many records (0: all, read page by page).")

    def run(self) -> int:
        self.positional(0)
        if self.status not in STATUSES:
            raise ValidationError("--status", f"unknown status {self.status!r}", accepted=STATUSES)
        check_limit(self.limit)
        query = {"status": None if self.status == "all" else self.status}
        # The server pages newest first: a long history is not sent whole.
        records, more = read_pages(
            self.client.listing, "/api/recall/approvals", "approvals", query, self.limit
        )
        if self.json_output:
            self.print_json({"approvals": records})
            return EXIT_OK
        print(approvals_table(records))
        if more:
            print(f"(the newest {len(records)} records: --limit=0 lists all)", file=sys.stderr)
        return EXIT_OK


class DecisionCommand(RecallCommand):
    """``approve`` and ``deny``: one POST per approval id."""

    decision: ClassVar[str] = ""
    usage = "ID [ID ...]"
    note = Unicode("", config=True, help="Why (kept with the decision).")

    def run(self) -> int:
        body: dict[str, str] = {"decision": self.decision}
        if self.note:
            body["note"] = self.note

        def decide(approval_id: str) -> None:
            checked_id(approval_id, "approval")
            record = self.request("POST", api_path("approvals", approval_id), body=body)
            if self.json_output:
                self.print_json(record)
            else:
                print(f"{record['id']} {record['status']}: {record['summary']}")

        return each_id(self, self.positional(1, -1), decide)


class ApproveCommand(DecisionCommand):
    name = "jupyter recall approve"
    description = "Approve waiting tool calls: the calls run."
    decision = "approve"
    aliases = with_aliases({"note": "ApproveCommand.note"})


class DenyCommand(DecisionCommand):
    name = "jupyter recall deny"
    description = "Deny waiting tool calls: the calls end with the denial."
    decision = "deny"
    aliases = with_aliases({"note": "DenyCommand.note"})
