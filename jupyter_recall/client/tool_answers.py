"""The answers of the agent tools that a kernel and the MCP server give alike, one
``TypedDict`` each: a job's summary in the seed tools' vocabulary, a watcher's, a delivery.

Every answer starts with ``ToolOk`` (``{"ok": true, "tool": name}``); a failure is a
``ToolFailure`` (``client/toolspec.py``). The answers only one surface gives are in
``kernel/agent/answers.py`` and ``mcp/answers.py``.
"""

from __future__ import annotations

from typing import TypedDict

from jupyter_recall.client.documents import (
    ActionDocument,
    AfterDocument,
    DeliveryDocument,
    TargetDocument,
    WatcherCheckDocument,
    WatcherDocument,
)
from jupyter_recall.client.toolspec import ToolOk


class JobSummary(TypedDict):
    """The fields of a job an agent needs (``tool_specs.job_summary``): ``None`` where the
    server's document has no value."""

    job_id: str | None
    name: str | None
    kind: str | None
    action_type: str | None
    schedule_type: str | None
    when: str | None
    after: AfterDocument | None
    schedule: str | None
    status: str | None
    next_run_at: str | None
    run_count: int | None
    last_run_at: str | None
    last_status: str | None
    last_error: str | None
    paused_reason: str | None


class JobAnswer(ToolOk, JobSummary):
    """A job created or acted on: its summary."""


class JobDetails(JobSummary):
    """A job's summary with what it does and where (``schedule_status``)."""

    action: ActionDocument | None
    target: TargetDocument | None


class WatcherAnswer(ToolOk, WatcherDocument):
    """A watcher as the server describes it (``watch_status``; ``watch_start`` over MCP)."""


class WatcherStopped(ToolOk):
    watcher_id: str
    status: str


class WatcherHistory(ToolOk):
    """A watcher's latest checks, oldest first."""

    watcher_id: str
    history: list[WatcherCheckDocument]


class DeliveryAnswer(ToolOk, DeliveryDocument):
    """Where a notification sent went (``send_notification``)."""
