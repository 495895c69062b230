"""What each MCP tool answers, one ``TypedDict`` per kind of answer, and ``McpAnswer``, the
union ``tools.call`` returns when a call succeeds.

The answers a kernel's agent tools give alike (a job's summary, a watcher, a delivery) are in
``client/tool_answers.py``; here, the server's documents as the REST API answers them.
"""

from __future__ import annotations

from typing import TypedDict

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
from jupyter_recall.client.tool_specs import OUTPUT_TAIL
from jupyter_recall.client.toolspec import ToolOk
from jupyter_recall.core.approvals import ApprovalJSON


class JobPageAnswer(ToolOk):
    """One page of jobs; ``total`` counts every match, so an agent knows whether to ask for
    the next page."""

    jobs: list[JobSummary]
    total: int
    next_cursor: str | None


class RunListed(TypedDict):
    """A run in a listing: its record and the last ``OUTPUT_TAIL`` characters of its output
    (``output_truncated`` when there is more: ``run_output`` has it all)."""

    id: str
    job_id: str
    scheduled_for: str
    trigger: str
    status: str
    created_at: str | None
    started_at: str | None
    finished_at: str | None
    duration: float | None
    error: str | None
    attempt: int | None
    retry_at: str | None
    output_tail: str
    output_length: int
    output_truncated: bool


def listed_run(run: RunDocument) -> RunListed:
    """A run as ``run_list`` and ``schedule_status`` show it: a run's output may hold
    megabytes, and an answer goes to the client twice (structured content and text)."""
    output = run.get("output") or ""
    return {
        "id": run["id"],
        "job_id": run["job_id"],
        "scheduled_for": run["scheduled_for"],
        "trigger": run["trigger"],
        "status": run["status"],
        "created_at": run.get("created_at"),
        "started_at": run.get("started_at"),
        "finished_at": run.get("finished_at"),
        "duration": run.get("duration"),
        "error": run.get("error"),
        "attempt": run.get("attempt"),
        "retry_at": run.get("retry_at"),
        "output_tail": output[-OUTPUT_TAIL:],
        "output_length": len(output),
        "output_truncated": len(output) > OUTPUT_TAIL,
    }


class JobStatusAnswer(ToolOk):
    job: JobDetails
    recent_runs: list[RunListed]


class RunPageAnswer(ToolOk):
    runs: list[RunListed]
    next_cursor: str | None


class RunAnswer(ToolOk, RunDocument):
    """A run with its status, error and output."""


class WatcherListing(ToolOk):
    watchers: list[WatcherDocument]
    total: int


class NotificationsTaken(ToolOk):
    notifications: list[NotificationDocument]


class ApprovalListing(ToolOk):
    """A page of the approvals inbox: ``returned`` records of ``matching`` (counted among the
    server's newest 500), ``next_offset`` None on the last page."""

    approvals: list[ApprovalJSON]
    returned: int
    matching: int
    next_offset: int | None


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
