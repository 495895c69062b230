"""Actions that run on the server itself: notifications (for now, into the run output) and tools."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import anyio

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.model import Job, Run
from jupyter_recall.engine.executors import OutputSink, RunOutcome, outside_limits
from jupyter_recall.server.approvals import ApprovalInbox, ServerInboxGate
from jupyter_recall.server.executors.payloads import (
    NotificationAction,
    ToolAction,
    parse_job_payloads,
)
from jupyter_recall.tools import ToolRunner
from jupyter_recall.tools.approval import DEFAULT_TIMEOUT, ApprovalRequest, Approvals
from jupyter_recall.tools.policy import APPROVE

TOOLS_UNAVAILABLE = "tool actions are not available: no tool runner is configured"
STOPPED = "was stopped (on request, by its job's deletion or by the server)"
"""Why a run's approval is withdrawn when the run is cancelled while it waits."""
NO_APPROVAL = (
    "a server-side job cannot ask for approval (no approvals inbox is configured); "
    "set its policy to auto in RecallApp.tool_policies, or run it from a kernel"
)


class RunApprovals(Approvals):
    """The approvals of one server-side run: it waits for the decision outside the engine's
    limits (``engine.executors.outside_limits``), holding neither a worker nor a slot of the
    ``server`` target, so that other server jobs run meanwhile; approved, the tool runs once
    the run has a slot and a worker again. Cancelled while it waits (stopped, its job deleted,
    its time limit, the server stopping), it withdraws its record from the inbox."""

    def __init__(self, timeout: float, gate: ServerInboxGate) -> None:
        super().__init__(timeout, inbox=gate)
        self._gate = gate

    async def ask(
        self, tool: str, params: Mapping[str, Any], source: str, timeout: float | None = None
    ) -> ApprovalRequest:
        async with outside_limits():
            try:
                return await super().ask(tool, params, source, timeout)
            except anyio.get_cancelled_exc_class():
                with anyio.CancelScope(shield=True):
                    await self._gate.withdraw(STOPPED)
                raise


class ServerActionExecutor:
    """Notification and tool actions, which need no kernel.

    Tool actions run through ``tools`` (a ``ToolRunner`` set by the server wiring), under the
    server's policies; an ``approve`` tool waits for a decision in the approvals inbox (``inbox``,
    set by the wiring; without one it is refused) for ``approval_timeout`` seconds, as its run,
    outside the engine's limits (``RunApprovals``).
    The tool's result is the run's output as JSON; a failed tool call (or a denial) fails the run
    with the tool's error.
    """

    def __init__(
        self,
        tools: ToolRunner | None = None,
        *,
        inbox: ApprovalInbox | None = None,
        approval_timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.tools = tools
        self.inbox = inbox
        self.approval_timeout = approval_timeout

    def concurrency_key(self, job: Job) -> str:
        return "server"

    async def execute(self, job: Job, run: Run, output: OutputSink) -> RunOutcome:
        action, _ = parse_job_payloads(job.action, job.target)
        if isinstance(action, ToolAction):
            return await self._run_tool(action, output, self._approvals(job, run))
        if not isinstance(action, NotificationAction):
            raise ValidationError(
                "action.type", "not a server action", accepted=("notification", "tool")
            )
        # The notification channels (kernel session, UI, webhook...) come later: until then a
        # notification is its run's output, which the UI and the run history already show.
        heading = f"{action.title}: " if action.title else ""
        output.write(f"{heading}{action.message}\n")
        return RunOutcome()

    def _approvals(self, job: Job, run: Run) -> Approvals | None:
        if self.inbox is None:
            return None
        gate = ServerInboxGate(self.inbox, job.owner, f"run:{run.id}")
        return RunApprovals(self.approval_timeout, gate)

    async def _run_tool(
        self, action: ToolAction, output: OutputSink, approvals: Approvals | None
    ) -> RunOutcome:
        if self.tools is None:
            return RunOutcome(error=TOOLS_UNAVAILABLE)
        if approvals is not None and self.tools.decision(action.name).policy == APPROVE:
            output.write(f"waiting for approval of {action.name} in the approvals inbox\n")
        result = await self.tools.run_tool(
            action.name,
            action.params,
            allow_approval=approvals is not None,
            denial_reason=NO_APPROVAL,
            approvals=approvals,
        )
        output.write(json.dumps(result, ensure_ascii=False, default=repr) + "\n")
        if not result["success"]:
            return RunOutcome(error=str(result["error"]))
        return RunOutcome()
