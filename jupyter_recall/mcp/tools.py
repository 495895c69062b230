"""The MCP tool table: one definition with the in-kernel agent tools, run through the REST API.

Tools that mean the same outside a kernel (``schedule_once``, ``schedule_cron``,
``schedule_after``, ``schedule_cancel``, ``schedule_status``, the ``watch_*`` tools,
``send_notification``) use the specifications of ``client/tool_specs.py`` the kernel's agent
uses, in the words of an agent outside a kernel (``tool_specs.OVER_MCP``): same names, argument
checks and field names in errors; no ``llm_prompt``, and a ``timezone_offset``. The others need
what a kernel would have supplied (the notebook, the kernel) and are defined here in the same
vocabulary. Listings are bounded: a run shows the end of its output (``run_output`` has all of
it), the approvals inbox a page of records.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic

from jupyter_recall.client.documents import (
    ActionDocument,
    AfterDocument,
    DeliveryDocument,
    JobDocument,
    JobPage,
    NewJobDocument,
    NewWatcherDocument,
    NotificationDocument,
    ParseDocument,
    RunDocument,
    RunPage,
    TargetDocument,
    WatcherDocument,
    headless_target,
)
from jupyter_recall.client.ids import ID_LENGTH, JOB_ID
from jupyter_recall.client.remote import api_path
from jupyter_recall.client.tool_answers import (
    DeliveryAnswer,
    JobAnswer,
    WatcherAnswer,
    WatcherHistory,
    WatcherStopped,
)
from jupyter_recall.client.tool_specs import (
    CURSOR_LENGTH,
    JOB_STATUSES,
    NAME_LENGTH,
    OUTPUT_TAIL,
    OVER_MCP,
    PAGE,
    PATH_LENGTH,
    TOOL_LENGTH,
    TZ_LENGTH,
    WHEN_LENGTH,
    IntegerParam,
    job_details,
    job_summary,
    notification_action,
    refuse_tool_call_fields,
    tool_call_action,
    tool_policies,
)
from jupyter_recall.client.toolspec import (
    A_co,
    InputSchema,
    Param,
    ToolArguments,
    ToolFailure,
    ToolSpec,
    decode_arguments,
    failure,
)
from jupyter_recall.core.approvals import NOTE_LIMIT, ApprovalJSON
from jupyter_recall.core.documents import output_config_of
from jupyter_recall.core.errors import (
    ConflictError,
    NotFoundError,
    PassedWhilePaused,
    PendingRecallExists,
    RecallError,
    UnknownServerTool,
    ValidationError,
)
from jupyter_recall.core.escalation import notify_config_of
from jupyter_recall.core.limits import MAX_BODY_BYTES
from jupyter_recall.core.model import RunStatus
from jupyter_recall.mcp.answers import (
    ApprovalAnswer,
    ApprovalListing,
    JobPageAnswer,
    JobStatusAnswer,
    McpAnswer,
    NotificationsTaken,
    ParseAnswer,
    RunAnswer,
    RunNowAnswer,
    RunPageAnswer,
    WatcherListing,
    listed_run,
)
from jupyter_recall.mcp.backend import Backend

JobRun = Callable[[Backend, ToolArguments], JobAnswer]
WatcherRun = Callable[[Backend, ToolArguments], WatcherAnswer | WatcherStopped]
JOBS = "/api/recall/jobs"
WATCHERS = "/api/recall/watchers"
NOTIFICATIONS = "/api/recall/notifications"
APPROVALS = "/api/recall/approvals"
APPROVAL_STATUSES = ("pending", "approved", "denied", "expired", "all")
ONE_TIME = ("once", "immediate")
RECURRING = ("interval", "cron")
ID_PARAMS = ("job_id", "run_id", "watcher_id", "approval_id")
DEFAULT_CHANNEL = "ui"
"""Where a notification job made over MCP goes without output_channel: the user's JupyterLab
(there is no kernel session to queue it for)."""
APPROVALS_LISTED = 500
"""The most records ``GET /api/recall/approvals`` answers (the newest)."""
APPROVAL_PAGE = 100
ARGUMENT_BYTES = MAX_BODY_BYTES - 64 * 1024
"""The UTF-8 JSON of one call's arguments at most: the server's request body limit, less room
for what the tool adds around them."""


def _spec(
    name: str, description: str, params: tuple[Param, ...], fields: Mapping[str, str] | None = None
) -> ToolSpec:
    return ToolSpec(name, description, params, dict(fields or {}))


@dataclass(frozen=True)
class McpTool(Generic[A_co]):
    spec: ToolSpec
    run: Callable[[Backend, ToolArguments], A_co]

    @property
    def name(self) -> str:
        return self.spec.name

    def input_schema(self) -> InputSchema:
        return self.spec.input_schema()


# --- jobs -------------------------------------------------------------------------------------


def _parsed(backend: Backend, when: str, tz: str | None) -> ParseDocument:
    body = {"when": when, **({"tz": tz} if tz else {})}
    parsed: ParseDocument = backend.request("POST", "/api/recall/parse", body=body)
    return parsed


def _expect_kind(
    backend: Backend, when: str, kinds: tuple[str, ...], arg: str, hint: str, *, tz: str | None
) -> None:
    kind = _parsed(backend, when, tz)["kind"]
    if kind not in kinds:
        raise ValidationError(arg, f"{when!r} is a schedule of kind {kind!r}: {hint}")


def _job_answer(args: ToolArguments, job: JobDocument) -> JobAnswer:
    return {**args.succeeded(), **job_summary(job)}


def _create(backend: Backend, body: NewJobDocument) -> JobDocument:
    created: JobDocument = backend.request("POST", JOBS, body=body)
    return created


def _job_action(args: ToolArguments) -> ActionDocument:
    """The action of schedule_once/schedule_cron arguments, outside a kernel (its specification
    refuses ``llm_prompt``, pointing to notebook_recall)."""
    if args.text("action_type") == "tool_call":
        return tool_call_action(args, "'notification'")
    refuse_tool_call_fields(args)
    prompt = args.optional_text("prompt")
    if not prompt:
        raise ValidationError("prompt", "required for action_type 'notification'")
    action = notification_action(args, prompt)
    action.setdefault("channel", DEFAULT_CHANNEL)
    return action


def _server_job(body: NewJobDocument, args: ToolArguments, tz: str | None = None) -> NewJobDocument:
    """A server-target job's body; ``body`` holds its ``when`` (read in ``tz``) or its
    ``after`` (which has no time to read)."""
    body = {**body, "target": {"type": "server"}}
    label, config = args.optional_text("label"), args.mapping("output_config")
    channel = args.optional_text("output_channel")
    if label:
        body["name"] = label
    policies = tool_policies(args)
    if policies:
        body["policies"] = policies
    options = {
        # A tool call's outcome goes to output_channel (a notification's is its action's).
        **({"output_channel": channel} if channel and body["action"]["type"] == "tool" else {}),
        **({"output_config": config} if config is not None else {}),
    }
    if options:
        body["options"] = options
    if tz:
        body["tz"] = tz
    return body


def _schedule_once(backend: Backend, args: ToolArguments) -> JobAnswer:
    when, tz = args.text("when"), args.optional_text("timezone_offset")
    hint = "schedule_once needs a one-time 'when'; use schedule_cron to repeat"
    _expect_kind(backend, when, ONE_TIME, "when", hint, tz=tz)
    body: NewJobDocument = {"when": when, "action": _job_action(args)}
    return _job_answer(args, _create(backend, _server_job(body, args, tz)))


def _schedule_cron(backend: Backend, args: ToolArguments) -> JobAnswer:
    cron, tz = args.text("cron"), args.optional_text("timezone_offset")
    hint = "schedule_cron needs a repeating schedule; use schedule_once for one time"
    _expect_kind(backend, cron, RECURRING, "cron", hint, tz=tz)
    body: NewJobDocument = {"when": cron, "action": _job_action(args)}
    return _job_answer(args, _create(backend, _server_job(body, args, tz)))


def _schedule_after(backend: Backend, args: ToolArguments) -> JobAnswer:
    after: AfterDocument = {"job": args.text("after_job"), "on": args.text("on")}
    body: NewJobDocument = {"after": after, "action": _job_action(args)}
    return _job_answer(args, _create(backend, _server_job(body, args)))


def _kernel_target(args: ToolArguments) -> TargetDocument:
    notebook, kernel_name = args.optional_text("notebook"), args.optional_text("kernel_name")
    if notebook and kernel_name:
        raise ValidationError(
            "kernel_name", "give notebook (its live kernel) or kernel_name (a fresh kernel)"
        )
    if notebook:
        return {"type": "kernel", "path": notebook}
    return headless_target(kernel_name)


def _named(body: NewJobDocument, args: ToolArguments) -> NewJobDocument:
    name, tz = args.optional_text("name"), args.optional_text("timezone_offset")
    body = body.copy()
    if name:
        body["name"] = name
    if tz:
        body["tz"] = tz
    return body


def _schedule_code(backend: Backend, args: ToolArguments) -> JobAnswer:
    action: ActionDocument = {"type": "code", "code": args.text("code")}
    body: NewJobDocument = {
        "when": args.text("when"),
        "action": action,
        "target": _kernel_target(args),
    }
    return _job_answer(args, _create(backend, _named(body, args)))


def _schedule_notebook(backend: Backend, args: ToolArguments) -> JobAnswer:
    action: ActionDocument = {
        "type": "notebook",
        "path": args.text("notebook"),
        "parameters": args.mapping("parameters") or {},
    }
    target = headless_target(args.optional_text("kernel_name"))
    body: NewJobDocument = {"when": args.text("when"), "action": action, "target": target}
    return _job_answer(args, _create(backend, _named(body, args)))


def _notebook_recall(backend: Backend, args: ToolArguments) -> JobAnswer:
    action: ActionDocument = {"type": "instruction", "instruction": args.text("instruction")}
    comment, notebook = args.optional_text("comment"), args.text("notebook")
    if comment:
        action["comment"] = comment
    body: NewJobDocument = {
        "when": args.text("when"),
        "kind": "recall",
        "action": action,
        # No session: the server's is the notebook's path as its sessions write it (the
        # target's, normalised), so one pending recall per notebook holds however it is typed.
        "target": {"type": "kernel", "path": notebook},
    }
    try:
        return _job_answer(args, _create(backend, _named(body, args)))
    except PendingRecallExists as error:
        # In this surface's words: the kernel's (%recall cancel, manage_recall) are tools an
        # agent outside a kernel does not have.
        other = error.recall_id
        raise ValidationError(
            "notebook",
            f"{notebook!r} already has a pending recall {other}: one per notebook; cancel it "
            f"first (schedule_cancel with job_id {other!r}) or schedule this one after it fires",
        ) from None


def _listed(backend: Backend, tool: str, path: str, query: Mapping[str, object]) -> Any:
    """A page of a listing (``JobPage``, ``RunPage``); a cursor the listing refuses is refused
    as this tool's (the server's words name a sort and order the tools do not take)."""
    try:
        return backend.request("GET", path, query=query)
    except ValidationError as error:
        if error.field != "cursor":
            raise
        raise ValidationError(
            "cursor",
            f"not a next_cursor of {tool} with these filters: pass back the next_cursor of "
            f"the previous {tool} answer unchanged, or leave cursor out for the first page",
        ) from None


def _job_list(backend: Backend, args: ToolArguments) -> JobPageAnswer:
    # One page at a time (a store may hold 100,000 jobs); `total` counts every match, from the
    # counts route, so an agent knows whether to ask for the next page.
    query = {"status": args.optional_text("status"), "path": args.optional_text("notebook")}
    paging = {"limit": args.integer("limit"), "cursor": args.optional_text("cursor")}
    page: JobPage = _listed(backend, "job_list", JOBS, {**query, **paging})
    counts = backend.request("GET", f"{JOBS}/counts", query=query)
    return {
        **args.succeeded(),
        "jobs": [job_summary(job) for job in page["jobs"]],
        "total": counts["total"],
        "next_cursor": page.get("next_cursor"),
    }


def _schedule_status(backend: Backend, args: ToolArguments) -> JobStatusAnswer:
    job_id = args.text("job_id")
    job: JobDocument = backend.request("GET", api_path("jobs", job_id))
    runs: RunPage = backend.request("GET", api_path("jobs", job_id, "runs"), query={"limit": 5})
    recent = [listed_run(run) for run in runs["runs"]]
    return {**args.succeeded(), "job": job_details(job), "recent_runs": recent}


def _job_action_tool(action: str) -> JobRun:
    def run(backend: Backend, args: ToolArguments) -> JobAnswer:
        job: JobDocument = backend.request("POST", api_path("jobs", args.text("job_id"), action))
        return _job_answer(args, job)

    return run


def _job_resume(backend: Backend, args: ToolArguments) -> JobAnswer:
    job_id = args.text("job_id")
    body = {"catch_up": args.flag("catch_up")}
    try:
        job: JobDocument = backend.request("POST", api_path("jobs", job_id, "resume"), body=body)
    except PassedWhilePaused as error:
        # In this surface's words: REST's are catch_up=true.
        raise error.hinted(f"job_resume with job_id {job_id!r} and catch_up true") from None
    return _job_answer(args, job)


def _job_run_now(backend: Backend, args: ToolArguments) -> RunNowAnswer:
    # The trigger answers the new run, not the job: the job's summary is read after it.
    job_id = args.text("job_id")
    run: RunDocument = backend.request("POST", api_path("jobs", job_id, "trigger"))
    job: JobDocument = backend.request("GET", api_path("jobs", job_id))
    return {**_job_answer(args, job), "run_id": run["id"]}


# --- runs -------------------------------------------------------------------------------------


def _run_list(backend: Backend, args: ToolArguments) -> RunPageAnswer:
    query = {
        "job_id": args.optional_text("job_id"),
        "status": args.optional_text("status"),
        "limit": args.integer("limit"),
        "cursor": args.optional_text("cursor"),
    }
    page: RunPage = _listed(backend, "run_list", "/api/recall/runs", query)
    runs = [listed_run(run) for run in page["runs"]]
    return {**args.succeeded(), "runs": runs, "next_cursor": page.get("next_cursor")}


def _run_output(backend: Backend, args: ToolArguments) -> RunAnswer:
    run: RunDocument = backend.request("GET", api_path("runs", args.text("run_id")))
    return {**args.succeeded(), **run}


def _run_stop(backend: Backend, args: ToolArguments) -> RunAnswer:
    run: RunDocument = backend.request("POST", api_path("runs", args.text("run_id"), "stop"))
    return {**args.succeeded(), **run}


# --- watchers and notifications ---------------------------------------------------------------


def _watch_start(backend: Backend, args: ToolArguments) -> WatcherAnswer:
    body: NewWatcherDocument = {
        "tool": args.text("name"),
        "params": args.mapping("params") or {},
        "interval": args.integer("interval"),
        "label": args.optional_text("label") or "",
        "notify_when": args.text("notify_when"),
        "notify_config": notify_config_of(args.mapping("notify_config") or {}),
    }
    channel, config = args.optional_text("output_channel"), args.mapping("output_config")
    if channel is not None:
        body["output_channel"] = channel
    if config is not None:
        body["output_config"] = output_config_of(config)
    try:
        created: WatcherDocument = backend.request("POST", WATCHERS, body=body)
    except UnknownServerTool as error:
        # The REST API's words point to a target argument only a kernel's callers have.
        raise ValidationError(
            "tool",
            f"unknown tool {error.tool!r} on the server: over MCP only the server's tools can "
            "be watched (a notebook's own tools are watched from its kernel)",
            accepted=error.accepted,
        ) from None
    return {**args.succeeded(), **created}


def _watcher_call(method: str, suffix: str = "") -> WatcherRun:
    def run(backend: Backend, args: ToolArguments) -> WatcherAnswer | WatcherStopped:
        watcher_id = args.text("watcher_id")
        last_n = args.optional_integer("last_n") if "last_n" in args.values else None
        path = f"{WATCHERS}/{watcher_id}{suffix}"
        # A watcher stopped (DELETE) answers no document.
        answer: WatcherDocument | None = backend.request(method, path, query={"last_n": last_n})
        if not answer:
            return {**args.succeeded(), "watcher_id": watcher_id, "status": "stopped"}
        return {**args.succeeded(), **answer}

    return run


def _watch_list(backend: Backend, args: ToolArguments) -> WatcherListing:
    found: list[WatcherDocument] = backend.request("GET", WATCHERS)["watchers"]
    return {**args.succeeded(), "watchers": found, "total": len(found)}


def _watch_history(backend: Backend, args: ToolArguments) -> WatcherHistory:
    watcher_id = args.text("watcher_id")
    query = {"last_n": args.integer("last_n")}
    watcher: WatcherDocument = backend.request("GET", f"{WATCHERS}/{watcher_id}", query=query)
    return {**args.succeeded(), "watcher_id": watcher_id, "history": watcher["history"]}


def _send_notification(backend: Backend, args: ToolArguments) -> DeliveryAnswer:
    delivery: DeliveryDocument = backend.request("POST", NOTIFICATIONS, body=args.given())
    return {**args.succeeded(), **delivery}


def _take_notifications(backend: Backend, args: ToolArguments) -> NotificationsTaken:
    body = {"session": args.text("session")}
    taken: list[NotificationDocument] = backend.request("POST", f"{NOTIFICATIONS}/take", body=body)[
        "notifications"
    ]
    return {**args.succeeded(), "notifications": taken}


def _approval_list(backend: Backend, args: ToolArguments) -> ApprovalListing:
    # The server answers its newest 500 records at most, newest first: paged here. Pending
    # ones come soonest to expire first, the ones an agent must decide before the others.
    status = args.text("status")
    query = {} if status == "all" else {"status": status}
    found: list[ApprovalJSON] = backend.request("GET", APPROVALS, query=query)["approvals"]
    if status == "pending":
        found.sort(key=lambda record: (record["expires_at"], record["id"]))
    start, limit = args.integer("offset"), args.integer("limit")
    page = found[start : start + limit]
    after = start + len(page)
    return {
        **args.succeeded(),
        "approvals": page,
        "returned": len(page),
        "matching": len(found),
        "next_offset": after if after < len(found) else None,
    }


def _approval_answer(args: ToolArguments, record: ApprovalJSON) -> ApprovalAnswer:
    # The record's own ``tool`` (the call waiting) must not replace the answer's ``tool`` (this
    # MCP tool), which every answer has.
    return {
        **args.succeeded(),
        "id": record["id"],
        "owner": record["owner"],
        "approval_tool": record["tool"],
        "summary": record["summary"],
        "source": record["source"],
        "asked_by": record["asked_by"],
        "created_at": record["created_at"],
        "expires_at": record["expires_at"],
        "status": record["status"],
        "decided_by": record["decided_by"],
        "decided_at": record["decided_at"],
        "note": record["note"],
    }


def _approval_get(backend: Backend, args: ToolArguments) -> ApprovalAnswer:
    record: ApprovalJSON = backend.request("GET", f"{APPROVALS}/{args.text('approval_id')}")
    return _approval_answer(args, record)


def _approval_decide(backend: Backend, args: ToolArguments) -> ApprovalAnswer:
    note = args.optional_text("note")
    body = {"decision": args.text("decision"), **({"note": note} if note else {})}
    path = f"{APPROVALS}/{args.text('approval_id')}"
    record: ApprovalJSON = backend.request("POST", path, body=body)
    return _approval_answer(args, record)


def _parse_when(backend: Backend, args: ToolArguments) -> ParseAnswer:
    parsed = _parsed(backend, args.text("when"), args.optional_text("timezone_offset"))
    return {**args.succeeded(), **parsed}


# --- the table --------------------------------------------------------------------------------

_WHEN = Param(
    "when",
    "string",
    "When: '30m', 'in 2 hours', 'tomorrow at 09:00', 'every 15m', a cron expression, or 'now'.",
    True,
    max_length=WHEN_LENGTH,
)
_TZ = Param(
    "timezone_offset",
    "string",
    "±HH:MM or a zone name; default: the server's zone.",
    max_length=TZ_LENGTH,
)
_NAME = Param("name", "string", "Human-readable name of the job.", max_length=NAME_LENGTH)
_NOTEBOOK = Param(
    "notebook",
    "string",
    "A notebook path relative to the server's root; its live kernel runs the job.",
    max_length=PATH_LENGTH,
    plain=True,
)
_KERNEL_NAME = Param(
    "kernel_name",
    "string",
    "The kernel spec of a fresh kernel (default: the notebook's own for a notebook, else the "
    "server's default kernel spec, python3 unless configured).",
    max_length=TOOL_LENGTH,
)


def _id(name: str, description: str, *, required: bool = True) -> Param:
    return Param(
        name, "string", description, required, pattern=JOB_ID.pattern, max_length=ID_LENGTH
    )


def _page_size(default: int) -> Param:
    return IntegerParam(
        "limit",
        "integer",
        f"Page size, 1 to {PAGE:,}.",
        minimum=1,
        default=default,
        maximum=PAGE,
    )


def _cursor() -> Param:
    return Param(
        "cursor", "string", "The next_cursor of the previous page.", max_length=CURSOR_LENGTH
    )


_JOB_ID = _id("job_id", "A job id (schedule_* or job_list).")
_APPROVAL_ID = _id("approval_id", "An approval id (approval_list).")
_RUN_ID = _id("run_id", "A run id (run_list).")
_CODE_FIELDS = {
    "action.code": "code",
    "target.path": "notebook",
    "target.kernel_name": "kernel_name",
    "tz": "timezone_offset",
}


def _job_tool(name: str, verb: str, action: str) -> McpTool[JobAnswer]:
    return McpTool(_spec(name, verb, (_JOB_ID,)), _job_action_tool(action))


_TOOLS: tuple[McpTool[McpAnswer], ...] = (
    McpTool(
        _spec(
            "schedule_code",
            "Schedule Python code into a notebook's live kernel (notebook) or a fresh kernel "
            "(kernel_name, the default): its output becomes the run's output.",
            (
                _WHEN,
                Param("code", "string", "The code to run.", True),
                _NOTEBOOK,
                _KERNEL_NAME,
                _NAME,
                _TZ,
            ),
            _CODE_FIELDS,
        ),
        _schedule_code,
    ),
    McpTool(
        _spec(
            "schedule_notebook",
            "Schedule a whole notebook: executed top to bottom in a fresh kernel, with "
            "parameters injected (papermill style).",
            (
                _WHEN,
                Param(
                    "notebook",
                    "string",
                    "The .ipynb path to execute.",
                    True,
                    max_length=PATH_LENGTH,
                    plain=True,
                ),
                Param("parameters", "object", "Values injected before the first cell."),
                _KERNEL_NAME,
                _NAME,
                _TZ,
            ),
            {"action.path": "notebook", "action.parameters": "parameters", **_CODE_FIELDS},
        ),
        _schedule_notebook,
    ),
    McpTool(
        _spec(
            "notebook_recall",
            "Leave a self-instruction for the agent of a notebook session: when it fires, "
            "that kernel's on_recall handler receives it. One pending recall per notebook.",
            (
                _WHEN,
                Param(
                    "notebook",
                    "string",
                    "The notebook whose agent is recalled.",
                    True,
                    max_length=PATH_LENGTH,
                    plain=True,
                ),
                Param("instruction", "string", "The self-instruction it receives.", True),
                Param("comment", "string", "Human-readable note: why this recall."),
                _NAME,
                _TZ,
            ),
            {
                "action.instruction": "instruction",
                "action.comment": "comment",
                "session": "notebook",
                "target.path": "notebook",
                "tz": "timezone_offset",
            },
        ),
        _notebook_recall,
    ),
    McpTool(OVER_MCP.schedule_once, _schedule_once),
    McpTool(OVER_MCP.schedule_cron, _schedule_cron),
    McpTool(OVER_MCP.schedule_after, _schedule_after),
    McpTool(
        _spec(
            "job_list",
            "List your jobs, newest first, optionally by status or notebook, one page at a "
            "time; total counts every match. Watchers are jobs too (kind 'watcher'; the "
            "watch_* tools manage them).",
            (
                Param("status", "string", "Only jobs with this status.", enum=JOB_STATUSES),
                Param(
                    "notebook",
                    "string",
                    "Only the jobs of this notebook.",
                    max_length=PATH_LENGTH,
                    plain=True,
                ),
                _page_size(50),
                _cursor(),
            ),
            {"path": "notebook"},
        ),
        _job_list,
    ),
    McpTool(OVER_MCP.schedule_status, _schedule_status),
    _job_tool("job_pause", "Pause a job: nothing fires until job_resume.", "pause"),
    McpTool(
        _spec(
            "job_resume",
            "Resume a paused job from now on; with catch_up, what passed while it was paused "
            "runs now.",
            (
                _JOB_ID,
                Param(
                    "catch_up",
                    "boolean",
                    "Run what passed while it was paused: a one-shot whose time passed runs "
                    "now, a recurring job's missed occurrences by its coalesce policy.",
                    default=False,
                ),
            ),
        ),
        _job_resume,
    ),
    _job_tool("job_skip", "Skip the next occurrence of a job.", "skip"),
    McpTool(_spec("job_run_now", "Run a job now, outside its schedule.", (_JOB_ID,)), _job_run_now),
    McpTool(OVER_MCP.schedule_cancel, _job_action_tool("cancel")),
    McpTool(
        _spec(
            "run_list",
            "The latest runs, newest first: of one job or of all your jobs, one page at a "
            f"time. Each shows the last {OUTPUT_TAIL:,} characters of its output "
            "(output_tail, with output_length): run_output gives all of it.",
            (
                _id("job_id", "Only this job's runs.", required=False),
                Param(
                    "status",
                    "string",
                    "Only runs with this status.",
                    enum=tuple(status.value for status in RunStatus),
                ),
                _page_size(20),
                _cursor(),
            ),
        ),
        _run_list,
    ),
    McpTool(
        _spec("run_output", "A run with its status, error and whole output.", (_RUN_ID,)),
        _run_output,
    ),
    McpTool(_spec("run_stop", "Stop a running run.", (_RUN_ID,)), _run_stop),
    McpTool(OVER_MCP.watch_start, _watch_start),
    McpTool(OVER_MCP.watch_stop, _watcher_call("DELETE")),
    McpTool(OVER_MCP.watch_pause, _watcher_call("POST", "/pause")),
    McpTool(OVER_MCP.watch_resume, _watcher_call("POST", "/resume")),
    McpTool(OVER_MCP.watch_status, _watcher_call("GET")),
    McpTool(OVER_MCP.watch_list, _watch_list),
    McpTool(OVER_MCP.watch_history, _watch_history),
    McpTool(OVER_MCP.send_notification, _send_notification),
    McpTool(
        _spec(
            "take_notifications",
            "Take (and remove) the notifications buffered for a notebook session.",
            (
                Param(
                    "session",
                    "string",
                    "The notebook path or kernel id.",
                    True,
                    max_length=PATH_LENGTH,
                    plain=True,
                ),
            ),
        ),
        _take_notifications,
    ),
    McpTool(
        _spec(
            "approval_list",
            "The approvals inbox: tool calls under an 'approve' policy, a page at a time. "
            "Pending records come soonest to expire first; the others newest first. "
            "'matching' counts the records of the status (among the server's newest 500); "
            "pass next_offset back as offset for the next page.",
            (
                Param(
                    "status",
                    "string",
                    "Only records with this status ('all': every one).",
                    enum=APPROVAL_STATUSES,
                    default="pending",
                ),
                IntegerParam(
                    "limit",
                    "integer",
                    f"Records per page, 1 to {APPROVAL_PAGE}.",
                    minimum=1,
                    default=20,
                    maximum=APPROVAL_PAGE,
                ),
                IntegerParam(
                    "offset",
                    "integer",
                    "How many to skip (the previous answer's next_offset).",
                    minimum=0,
                    default=0,
                    maximum=APPROVALS_LISTED,
                ),
            ),
        ),
        _approval_list,
    ),
    McpTool(
        _spec(
            "approval_get",
            "One approval record: the call, who asked, its status.",
            (_APPROVAL_ID,),
        ),
        _approval_get,
    ),
    McpTool(
        _spec(
            "approval_decide",
            "Approve or deny a pending tool call; the first decision wins.",
            (
                _APPROVAL_ID,
                Param("decision", "string", "The decision.", True, enum=("approve", "deny")),
                Param("note", "string", "Why (kept with the record).", max_length=NOTE_LIMIT),
            ),
        ),
        _approval_decide,
    ),
    McpTool(
        _spec(
            "parse_when",
            "Check a time expression: its kind, canonical form, description and next fire "
            "times, without scheduling anything.",
            (_WHEN, _TZ),
            {"tz": "timezone_offset"},
        ),
        _parse_when,
    ),
)
MCP_TOOLS: dict[str, McpTool[McpAnswer]] = {tool.name: tool for tool in _TOOLS}
SHARED_NAMES = tuple(name for name, tool in MCP_TOOLS.items() if tool.spec in OVER_MCP.all)


def _refusal(error: RecallError, tool: McpTool[McpAnswer]) -> ToolFailure:
    if isinstance(error, ValidationError):
        return failure(error, tool.spec)
    ids = [param.name for param in tool.spec.params if param.name in ID_PARAMS]
    # Both are about the thing the id names: it is not there, or no longer in a state for this.
    field = ids[0] if isinstance(error, (NotFoundError, ConflictError)) and ids else None
    return {"ok": False, "error": str(error), "field": field}


def call(backend: Backend, name: str, arguments: Any) -> McpAnswer | ToolFailure:
    """Run one tool call: ``{"ok": true, "tool", ...}`` or ``{"ok": false, "error", "field"}``,
    as ``jupyter_recall.agent.dispatch`` answers."""
    tool = MCP_TOOLS.get(name)
    if tool is None:
        unknown = ValidationError("name", f"unknown tool {name!r}", accepted=tuple(MCP_TOOLS))
        return failure(unknown, None)
    try:
        args = tool.spec.arguments(decode_arguments(arguments))
        _check_size(args)
        return tool.run(backend, args)
    except RecallError as error:
        return _refusal(error, tool)


def _utf8_size(value: object) -> int:
    # A lone surrogate (valid JSON, not UTF-8) counts as the 3 bytes the server would refuse.
    return len(json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass"))


def _check_size(args: ToolArguments) -> None:
    """Refuse arguments too large for the server's request body, naming the largest: its free
    texts (code, a prompt) and objects have no maxLength, and the server's refusal would name
    its ``body``, not an argument."""
    given = args.given()
    total = _utf8_size(given)
    if total <= ARGUMENT_BYTES:
        return
    sizes = {name: _utf8_size(value) for name, value in given.items()}
    largest = max(sizes, key=sizes.__getitem__)
    raise ValidationError(
        largest,
        f"is {sizes[largest]:,} bytes as UTF-8 JSON; one call's arguments take at most "
        f"{ARGUMENT_BYTES:,} bytes together (the server's {MAX_BODY_BYTES:,}-byte request body)",
    )
