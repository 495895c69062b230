"""What each agent tool of a kernel answers, one ``TypedDict`` per kind of answer, and
``AgentAnswer``, the union ``dispatch`` returns when a call succeeds.

The answers the MCP server gives alike (a job's summary, a watcher, a delivery) are in
``client/tool_answers.py``.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

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
from jupyter_recall.kernel.jobs.heartbeat import HeartbeatStarted
from jupyter_recall.tools.registry import ToolResult

# --- recalls --------------------------------------------------------------------------------------


class RecallSummary(TypedDict):
    """A recall in the seed tools' vocabulary (``recall_summary``)."""

    recall_id: str | None
    call_type: str
    status: str
    job_status: str | None
    when: str | None
    schedule: str | None
    trigger_at: str | None
    additional_context_message: str | None
    internal_comment: str | None
    run_count: int | None
    last_status: str | None
    last_error: str | None


class RecallScheduled(ToolOk, RecallSummary):
    interval_seconds: int | None
    session: str | None


class RecallListing(ToolOk):
    session: str
    pending: RecallSummary | None
    recalls: list[RecallSummary]


class RecallCancelled(ToolOk):
    session: str
    cancelled: str


class RecallSkipped(ToolOk, RecallSummary):
    session: str
    skipped: str


# --- scheduled jobs -------------------------------------------------------------------------------


class JobScheduled(JobAnswer):
    """A job of ``schedule_once``: its summary and the arguments it was made of."""

    run_at: str | None
    tool_name: str | None
    label: str | None
    output_channel: str


class CronScheduled(JobScheduled):
    cron: str
    max_runs: int


class AfterScheduled(JobScheduled):
    max_runs: int


class JobCancelled(JobAnswer):
    cancelled: str


class JobListing(ToolOk):
    """This session's jobs and how many have each status (a status none has is left out)."""

    jobs: list[JobSummary]
    total: int
    active: NotRequired[int]
    paused: NotRequired[int]
    completed: NotRequired[int]
    failed: NotRequired[int]
    cancelled: NotRequired[int]


class RunSummary(TypedDict):
    """A run as ``schedule_status`` shows it: its output clipped to its end."""

    run_id: str
    status: str
    scheduled_for: str
    finished_at: str | None
    error: str | None
    output: str


class JobStatusAnswer(ToolOk):
    job: JobDetails
    recent_runs: list[RunSummary]


class Remembered(JobAnswer):
    what: str
    action: str


# --- tool calls at once and in the background -----------------------------------------------------


class ParallelAnswer(ToolOk):
    results: list[ToolResult]
    succeeded: int
    failed: int


class TaskShown(TypedDict):
    """A background task as an agent reads it: ``tool`` names the agent tool in an answer, so
    the task's tool is ``tool_name``."""

    tool_name: str
    task_id: str
    params: dict[str, Any]
    status: str
    started_at: str | None
    finished_at: str | None
    elapsed: float


class TaskAnswer(ToolOk, TaskShown):
    pass


class TaskResultAnswer(TaskAnswer):
    result: ToolResult | None


class TaskWaitedAnswer(TaskResultAnswer):
    timed_out: bool


class TaskListing(ToolOk):
    tasks: list[TaskShown]
    total: int


class TasksWaitedAnswer(ToolOk):
    tasks: list[TaskShown]
    timed_out: bool


# --- watchers -------------------------------------------------------------------------------------


class WatcherSummary(TypedDict):
    """A watcher in a few fields (``watch_list``, ``watch_pause``, ``watch_resume``)."""

    watcher_id: str | None
    tool_name: str | None
    label: str | None
    status: str | None
    interval: int | None
    notify_when: str | None
    checks: int | None
    notifications: int | None
    last_check_at: str | None
    next_check_at: str | None


class WatcherSummaryAnswer(ToolOk, WatcherSummary):
    pass


class WatcherStarted(WatcherSummaryAnswer):
    hint: str | None


class WatcherListing(ToolOk):
    watchers: list[WatcherSummary]
    total: int
    running: int


RecallAnswer = RecallScheduled | RecallListing | RecallCancelled | RecallSkipped
JobToolAnswer = (
    JobScheduled | CronScheduled | AfterScheduled | JobCancelled | JobListing | JobStatusAnswer
)
CallAnswer = (
    ParallelAnswer
    | TaskAnswer
    | TaskResultAnswer
    | TaskWaitedAnswer
    | TaskListing
    | TasksWaitedAnswer
)
WatchAnswer = (
    WatcherStarted
    | WatcherStopped
    | WatcherSummaryAnswer
    | WatcherAnswer
    | WatcherListing
    | WatcherHistory
    | DeliveryAnswer
)
AgentAnswer = (
    RecallAnswer | JobToolAnswer | Remembered | CallAnswer | WatchAnswer | HeartbeatStarted
)
"""What ``dispatch`` answers when a call succeeds (a failure is a ``ToolFailure``)."""
