"""The kernel's approval requests as records of the server's approvals inbox, over REST.

``RestInbox`` is the ``tools.approval.ApprovalInbox`` of the kernel's ``Approvals``: a request
is recorded with ``POST /api/recall/approvals`` (asked by ``kernel:<session>``), and the
waiting coroutine polls ``GET /api/recall/approvals/{id}`` from the jupyter_recall loop's
thread, so a decision given in the sidebar, the CLI or over REST reaches a cell that is
blocked waiting for the call (the shell channel, which carries widget clicks, is not read
until that cell ends). An answer given in the notebook (stdin prompt, card) is POSTed there too,
so it is recorded with who and when; the first answer wins. A request cancelled in the kernel
(an interrupted cell) is withdrawn (``POST .../withdraw``); the server withdraws those of a
kernel that shuts down or restarts (``server/sessions.py``).

``KernelApprovals`` is the kernel's ``Approvals`` (``jupyter_recall.approvals``): beside the
requests pending here, it reads one request's record in that inbox (``record``), decided or not.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, cast

from jupyter_recall.client.ids import check_record_id
from jupyter_recall.core.approvals import ApprovalJSON
from jupyter_recall.core.errors import ConflictError
from jupyter_recall.kernel.connection import client
from jupyter_recall.tools.approval import INBOX_OUTCOMES, ApprovalRequest, Approvals

PATH = "/api/recall/approvals"


def _asked_by() -> str:
    return f"kernel:{client.identity().session or 'unknown'}"


def _request(method: str, path: str, body: Any = None) -> Any:
    return client.get_client().request(method, path, body=body)


class RestInbox:
    """The server's approvals inbox, seen from the kernel; calls block, so they run in a
    worker thread of the asking loop."""

    async def open(self, request: ApprovalRequest) -> str:
        def create() -> str:
            body = {
                "tool": request.tool,
                "summary": request.describe(),
                "source": request.source,
                "asked_by": _asked_by(),
                "timeout": request.timeout,
            }
            return str(_request("POST", PATH, body)["id"])

        return await asyncio.to_thread(create)

    async def outcome(self, record_id: str) -> str | None:
        record = await asyncio.to_thread(_request, "GET", f"{PATH}/{record_id}")
        return INBOX_OUTCOMES.get(str(record["status"]))

    async def abandon(self, record_id: str) -> None:
        # Decided or expired meanwhile (a 409): nothing is left to withdraw.
        with contextlib.suppress(ConflictError):
            await asyncio.to_thread(_request, "POST", f"{PATH}/{record_id}/withdraw")

    async def decide(self, record_id: str, approved: bool) -> str | None:
        body = {"decision": "approve" if approved else "deny"}
        try:
            record = await asyncio.to_thread(_request, "POST", f"{PATH}/{record_id}", body)
        except ConflictError:
            # Answered elsewhere first (or expired): that answer stands.
            return await self.outcome(record_id)
        return INBOX_OUTCOMES.get(str(record["status"]))


class KernelApprovals(Approvals):
    """The kernel's approval requests: those pending here (``pending``, ``answer``), and the
    records the server's inbox keeps of them (``record``)."""

    def record(self, request_id: str) -> ApprovalJSON:
        """The inbox's record of a request (a ``request_id`` of ``pending()``, or any approval
        of yours): its ``status`` (``pending``, ``approved``, ``denied``, ``expired``), who
        decided and when (``decided_by``, ``decided_at``), the ``note``. It outlives the
        request: read it after the answer. NotFoundError for an id the inbox does not hold (a
        request asked while no server was reachable is not recorded)."""
        check_record_id(request_id, "request_id", "approval")
        return cast(ApprovalJSON, _request("GET", f"{PATH}/{request_id}"))
