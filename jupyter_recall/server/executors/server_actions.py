"""Actions that run on the server itself: notifications (for now, into the run output) and tools."""

from __future__ import annotations

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.model import Job, Run
from jupyter_recall.engine.executors import OutputSink, RunOutcome
from jupyter_recall.server.executors.payloads import (
    NotificationAction,
    ToolAction,
    parse_job_payloads,
)

TOOLS_UNAVAILABLE = "tool actions are not available yet"


class ServerActionExecutor:
    """Notification and tool actions, which need no kernel."""

    def concurrency_key(self, job: Job) -> str:
        return "server"

    async def execute(self, job: Job, run: Run, output: OutputSink) -> RunOutcome:
        action, _ = parse_job_payloads(job.action, job.target)
        if isinstance(action, ToolAction):
            return RunOutcome(error=TOOLS_UNAVAILABLE)
        if not isinstance(action, NotificationAction):
            raise ValidationError(
                "action.type", "not a server action", accepted=("notification", "tool")
            )
        # The notification channels (kernel session, UI, webhook...) come later: until then a
        # notification is its run's output, which the UI and the run history already show.
        heading = f"{action.title}: " if action.title else ""
        output.write(f"{heading}{action.message}\n")
        return RunOutcome()
