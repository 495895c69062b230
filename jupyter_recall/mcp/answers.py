"""What each MCP tool answers, one ``TypedDict`` per kind of answer, and ``McpAnswer``, the
union ``tools.call`` returns when a call succeeds.

The answers a kernel's agent tools give alike (a job's summary, a watcher, a delivery) are in
``client/tool_answers.py``; here, the server's documents as the REST API answers them.
"""

from __future__ import annotations

from jupyter_recall.client.documents import (
    NotificationDocument,
    ParseDocument,
    RunDocument,
    WatcherDocument,
)
from jupyter_recall.client.tool_answers import (
    DeliveryAnswer,
    JobAnswer,
    JobDetails,
    JobSummary,
    WatcherAnswer,
    WatcherHistory,
    WatcherStopped,
)
from jupyter_recall.client.toolspec import ToolOk
from jupyter_recall.core.approvals import ApprovalJSON


class JobPageAnswer(ToolOk):
    """One page of jobs; ``total`` counts every match, so an agent knows whether to ask for
    the next page."""

    jobs: list[JobSummary]
    total: int
    next_cursor: str | None


class JobStatusAnswer(ToolOk):
    job: JobDetails
    recent_runs: list[RunDocument]


class RunPageAnswer(ToolOk):
    runs: list[RunDocument]
    next_cursor: str | None


class RunAnswer(ToolOk, RunDocument):
    """A run with its status, error and output."""


class WatcherListing(ToolOk):
    watchers: list[WatcherDocument]
    total: int


class NotificationsTaken(ToolOk):
    notifications: list[NotificationDocument]


class ApprovalListing(ToolOk):
    approvals: list[ApprovalJSON]
    total: int


class ApprovalAnswer(ToolOk):
    """One approval record. ``tool`` is the MCP tool's name, as in every answer; the tool call
    waiting for the decision (the record's own ``tool``) is ``approval_tool``."""

    id: str
    owner: str
    approval_tool: str
    summary: str
    source: str
    asked_by: str
    created_at: str
    expires_at: str
    status: str
    decided_by: str | None
    decided_at: str | None
    note: str | None


class RunNowAnswer(JobAnswer):
    """``job_run_now``: the job's summary and the id of the run it just started."""

    run_id: str


class ParseAnswer(ToolOk, ParseDocument):
    """What the server understands of a time expression."""


McpAnswer = (
    JobAnswer
    | JobPageAnswer
    | JobStatusAnswer
    | RunPageAnswer
    | RunAnswer
    | WatcherAnswer
    | WatcherStopped
    | WatcherListing
    | WatcherHistory
    | DeliveryAnswer
    | NotificationsTaken
    | ApprovalListing
    | ApprovalAnswer
    | RunNowAnswer
    | ParseAnswer
)
"""What ``tools.call`` answers when a call succeeds (a failure is a ``ToolFailure``)."""
