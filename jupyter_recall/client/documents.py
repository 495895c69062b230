"""The JSON documents of the REST API as clients read them (``server/openapi.yaml`` is the
contract): one ``TypedDict`` per document, so that what a client reads of a job, a run, a
watcher, a notification or an approval is typed where it is read.

Fields a version of the server may leave out are ``NotRequired``; the payloads a user writes
(an action's tool parameters, a notebook's parameters, a notification's structured data) stay
free-form mappings.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from jupyter_recall.core.approvals import ApprovalJSON
from jupyter_recall.core.documents import NotificationSource, OutputConfigJSON
from jupyter_recall.core.escalation import CheckResultJSON, NotifyConfigJSON


class ActionDocument(TypedDict):
    type: str
    code: NotRequired[str]
    instruction: NotRequired[str]
    comment: NotRequired[str]
    name: NotRequired[str]
    params: NotRequired[dict[str, Any]]
    path: NotRequired[str]
    parameters: NotRequired[dict[str, Any]]
    message: NotRequired[str]
    title: NotRequired[str]
    channel: NotRequired[str]
    priority: NotRequired[str]


class TargetDocument(TypedDict):
    type: str
    path: NotRequired[str]
    kernel_id: NotRequired[str]
    kernel_name: NotRequired[str]
    cwd: NotRequired[str]


def headless_target(kernel_name: str | None) -> TargetDocument:
    """A fresh kernel of ``kernel_name`` for each run; without one, the server chooses: a
    notebook's own kernel spec for a notebook, else its default kernel spec."""
    return {"type": "headless", "kernel_name": kernel_name} if kernel_name else {"type": "headless"}


class RetriesDocument(TypedDict):
    max: int
    backoff: NotRequired[float]
    factor: NotRequired[float]
    jitter: NotRequired[float]
    on: NotRequired[list[str]]


class PolicySettings(TypedDict, total=False):
    """A job's policies but its end (``PoliciesDocument`` adds ``end_at``): what the Python
    API takes as keywords, beside an ``end_at`` that may be a ``datetime``."""

    catchup_window: float | None
    coalesce: str
    overlap: str
    max_runs: int | None
    jitter: float
    timeout: float | None
    retries: RetriesDocument | int | None
    pause_after_failures: int | None
    keep_runs: int | None
    keep_runs_for: float | str | None


class PoliciesDocument(PolicySettings, total=False):
    """A job's policies as answered (every field present) or sent (any of them)."""

    end_at: str | None


class AfterDocument(TypedDict):
    """The job a job fires after, and on which outcome (``succeeded``, ``failed``,
    ``finished``)."""

    job: str
    on: str


class NewJobDocument(TypedDict):
    """``NewJob``: the body of ``POST /api/recall/jobs`` (``when`` or ``after``, not both)."""

    action: ActionDocument
    when: NotRequired[str]
    after: NotRequired[AfterDocument]
    target: NotRequired[TargetDocument]
    name: NotRequired[str]
    kind: NotRequired[str]
    tz: NotRequired[str]
    session: NotRequired[str]
    policies: NotRequired[PoliciesDocument | PolicySettings]
    options: NotRequired[dict[str, Any]]


class JobDocument(TypedDict):
    """``Job``: a job as the server answers it."""

    id: str
    name: NotRequired[str]
    kind: NotRequired[str]
    owner: NotRequired[str]
    when: NotRequired[str]
    canonical: NotRequired[str]
    schedule_kind: NotRequired[str]
    description: NotRequired[str]
    tz: NotRequired[str]
    status: NotRequired[str]
    pending: NotRequired[bool]
    action: NotRequired[ActionDocument]
    target: NotRequired[TargetDocument]
    session: NotRequired[str | None]
    policies: NotRequired[PoliciesDocument]
    options: NotRequired[dict[str, Any]]
    next_fire_at: NotRequired[str | None]
    next_occurrence: NotRequired[str | None]
    created_at: NotRequired[str]
    updated_at: NotRequired[str]
    run_count: NotRequired[int]
    failure_count: NotRequired[int]
    failure_streak: NotRequired[int]
    paused_reason: NotRequired[str | None]
    after: NotRequired[AfterDocument | None]
    last_run_at: NotRequired[str | None]
    last_run_id: NotRequired[str | None]
    last_status: NotRequired[str | None]
    last_error: NotRequired[str | None]
    plugin_owner: NotRequired[str | None]
    key: NotRequired[str | None]
    warnings: NotRequired[list[str]]
    allowed_actions: NotRequired[list[str]]


class RunDocument(TypedDict):
    """``Run``: one run of a job."""

    id: str
    job_id: str
    scheduled_for: str
    trigger: str
    status: str
    created_at: NotRequired[str]
    started_at: NotRequired[str | None]
    finished_at: NotRequired[str | None]
    duration: NotRequired[float | None]
    output: NotRequired[str]
    error: NotRequired[str | None]
    attempt: NotRequired[int]
    retry_at: NotRequired[str | None]


class JobPage(TypedDict):
    jobs: list[JobDocument]
    next_cursor: NotRequired[str | None]


class RunPage(TypedDict):
    runs: list[RunDocument]
    next_cursor: NotRequired[str | None]


class JobCounts(TypedDict):
    total: int
    by_status: dict[str, int]
    running: int


class ParseDocument(TypedDict):
    """``ParseResult``: what the server understands of a time expression."""

    when: str
    kind: str
    canonical: str
    description: str
    tz: str
    next_fire_times: list[str]
    warnings: NotRequired[list[str]]
    offline: NotRequired[bool]
    """The command line's: parsed with no server (``jupyter recall parse --offline``)."""


class InfoDocument(TypedDict):
    name: str
    version: str
    default_tz: str
    user: str
    root_dir: NotRequired[str]
    """Absent from the servers of releases before it."""


class WatcherCheckDocument(TypedDict):
    check: int
    checked_at: str
    success: bool
    result: CheckResultJSON | None
    notified: bool
    reason: str
    run_id: NotRequired[str | None]


class WatcherDocument(TypedDict):
    """``Watcher``: a watcher, its counters and its latest checks."""

    watcher_id: str
    tool_name: str
    params: dict[str, Any]
    label: str
    interval: int
    notify_when: str
    notify_config: NotifyConfigJSON
    status: str
    checks: int
    notifications: int
    output_channel: NotRequired[str | None]
    output_config: NotRequired[OutputConfigJSON]
    target: NotRequired[TargetDocument]
    session: NotRequired[str | None]
    last_check_at: NotRequired[str | None]
    last_notified_at: NotRequired[str | None]
    next_check_at: NotRequired[str | None]
    created_at: NotRequired[str]
    last_result: NotRequired[WatcherCheckDocument | None]
    history: NotRequired[list[WatcherCheckDocument]]
    hint: NotRequired[str]


class NotificationDocument(TypedDict):
    id: str
    channel: str
    message: str
    title: str
    priority: str
    tags: list[str]
    created_at: str
    owner: NotRequired[str]
    structured_data: NotRequired[dict[str, Any]]
    output_config: NotRequired[OutputConfigJSON]
    session: NotRequired[str | None]
    source: NotRequired[NotificationSource]
    fallback_reason: NotRequired[str | None]
    delivered_to: NotRequired[str]
    buffered: NotRequired[bool]


class DeliveryDocument(TypedDict):
    """``Delivery``: where a notification sent went."""

    notification: NotificationDocument
    delivered_to: str
    fallback_reason: str | None
    buffered: bool


class EventDocument(TypedDict, total=False):
    """``ChangeEvent``: one event of the stream (its ``type`` is also the SSE event name)."""

    type: str
    owner: str
    job: JobDocument | None
    run: RunDocument | None
    text: str | None
    offset: int | None
    notification: NotificationDocument | None
    approval: ApprovalJSON | None


class NewNotificationDocument(TypedDict):
    """``NewNotification``: the body of ``POST /api/recall/notifications``."""

    message: str
    title: str
    priority: str
    tags: list[str]
    structured_data: dict[str, Any]
    output_config: OutputConfigJSON
    channel: NotRequired[str]
    session: NotRequired[str]


class NewWatcherDocument(TypedDict):
    """``NewWatcher``: the body of ``POST /api/recall/watchers``."""

    tool: str
    params: dict[str, Any]
    interval: float
    label: str
    notify_when: str
    notify_config: NotifyConfigJSON
    session: NotRequired[str]
    output_channel: NotRequired[str]
    output_config: NotRequired[OutputConfigJSON]
    target: NotRequired[TargetDocument]
