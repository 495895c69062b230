"""The agent tool surface: JSON-schema tool specifications and one ``dispatch``.

``tool_specs()`` returns specifications in the shape function-calling LLM APIs accept
(``{"type": "function", "function": {"name", "description", "parameters"}}``);
``dispatch(name, arguments)`` runs one call and always returns a JSON-serialisable dict:
``{"ok": true, ...}`` or ``{"ok": false, "error": "...", "field": <argument or null>, ...}``.
No exception escapes to the agent loop. Semantics follow the seed tools: recalls
(``schedule_recall``, ``manage_recall``) and the scheduler primitives (``schedule_once``,
``schedule_cron``, ``schedule_cancel``, ``schedule_list``, ``schedule_status``, ``remember``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jupyter_recall.client.documents import (
    ActionDocument,
    AfterDocument,
    JobDocument,
    RunDocument,
)
from jupyter_recall.client.records import JobRecord
from jupyter_recall.client.tool_specs import (
    JOB_STATUSES,
    PATH_LENGTH,
    SCHEDULE_AFTER,
    SCHEDULE_CANCEL,
    SCHEDULE_CRON,
    SCHEDULE_ONCE,
    SCHEDULE_STATUS,
    TZ_LENGTH,
    WHEN_HELP,
    WHEN_LENGTH,
    JobStatusName,
    job_details,
    job_summary,
    notification_action,
    refuse_tool_call_fields,
    tool_call_action,
    tool_policies,
)
from jupyter_recall.client.toolspec import (
    AnthropicSpec,
    OpenAISpec,
    Param,
    Tool,
    ToolArguments,
    ToolFailure,
    decode_arguments,
    failure,
)
from jupyter_recall.core.errors import (
    NotFoundError,
    PendingRecallExists,
    RecallError,
    ValidationError,
)
from jupyter_recall.kernel.agent.answers import (
    AfterScheduled,
    AgentAnswer,
    CronScheduled,
    JobCancelled,
    JobListing,
    JobScheduled,
    JobStatusAnswer,
    RecallAnswer,
    RecallScheduled,
    RecallSummary,
    Remembered,
    RunSummary,
)
from jupyter_recall.kernel.agent.calls import PRIMITIVE_TOOLS
from jupyter_recall.kernel.agent.watchers import WATCH_TOOLS
from jupyter_recall.kernel.connection import client as _client
from jupyter_recall.kernel.heartbeat import heartbeat_tools
from jupyter_recall.kernel.jobs import api

CALL_TYPES = ("once", "recurring", "immediate")
MANAGE_ACTIONS = ("cancel", "skip", "list")
REMEMBER_ACTIONS = ("notification", "llm_prompt")
ONE_TIME = ("once", "immediate")
RECURRING = ("interval", "cron")
IMMEDIATE_WORDS = ("now", "immediately")
NAME_LENGTH = 60
OUTPUT_CLIP = 2000
SPEC_STYLES = ("openai", "anthropic")


# --- shared pieces ----------------------------------------------------------------------------


def _session(session_id: str | None = None) -> str:
    session = session_id or _client.identity().session
    if session is None:
        raise ValidationError(
            "session_id", "required: this process is not a kernel of the Jupyter server"
        )
    return session


def _expect_kind(when: str, kinds: tuple[str, ...], arg: str, hint: str, tz: str | None) -> None:
    """Refuse a ``when`` whose kind does not fit the tool, before anything is created."""
    parsed = api.parse(when, tz)
    if parsed["kind"] not in kinds:
        raise ValidationError(arg, f"{when!r} is a schedule of kind {parsed['kind']!r}: {hint}")


def _clip_name(text: str | None) -> str | None:
    if not text:
        return None
    line = " ".join(text.split())
    return line if len(line) <= NAME_LENGTH else line[: NAME_LENGTH - 1] + "…"


def _call_type(job: JobDocument) -> str:
    kind = job.get("schedule_kind")
    return "recurring" if kind in RECURRING else str(kind)


def _recall_status(job: JobDocument) -> str:
    if job.get("pending"):
        return "pending"
    return "cancelled" if job.get("status") == "cancelled" else "fired"


def recall_summary(job: JobRecord | JobDocument) -> RecallSummary:
    if isinstance(job, JobRecord):
        job = job.to_dict()
    action = job.get("action")
    return {
        "recall_id": job.get("id"),
        "call_type": _call_type(job),
        "status": _recall_status(job),
        "job_status": job.get("status"),
        "when": job.get("when"),
        "schedule": job.get("description"),
        "trigger_at": job.get("next_fire_at"),
        "additional_context_message": action.get("instruction") if action else None,
        "internal_comment": action.get("comment") if action else None,
        "run_count": job.get("run_count"),
        "last_status": job.get("last_status"),
        "last_error": job.get("last_error"),
    }


# --- recalls ----------------------------------------------------------------------------------


def _immediate_when(when: str | None, interval: int | None) -> str:
    if interval is not None:
        raise ValidationError("interval_seconds", "only for call_type 'recurring'")
    if when and when.strip().lower() not in IMMEDIATE_WORDS:
        raise ValidationError(
            "when", "not used with call_type 'immediate' (it fires now); leave it out"
        )
    return "now"


def _once_when(when: str | None, interval: int | None, tz: str | None) -> str:
    if interval is not None:
        raise ValidationError("interval_seconds", "only for call_type 'recurring'")
    if not when:
        raise ValidationError(
            "when", "required for call_type 'once' (e.g. '30m', 'in 2 hours', 'tomorrow at 09:00')"
        )
    hint = "call_type 'once' needs a one-time 'when'; use call_type 'recurring' to repeat"
    _expect_kind(when, ONE_TIME, "when", hint, tz)
    return when


def _recurring_when(when: str | None, interval: int | None, tz: str | None) -> str:
    if interval is not None:
        if when:
            raise ValidationError(
                "when",
                "give either interval_seconds or a recurring 'when' ('every 15m', 'every day "
                "at 09:00', a cron expression), not both: a recurring recall first fires one "
                "interval from now",
            )
        return f"every {interval}s"
    if not when:
        raise ValidationError(
            "interval_seconds",
            "required for call_type 'recurring' (or a recurring 'when' such as 'every 15m')",
        )
    hint = "call_type 'recurring' needs a repeating 'when' ('every 15m') or interval_seconds"
    _expect_kind(when, RECURRING, "when", hint, tz)
    return when


def recall_when(call_type: str, when: str | None, interval: int | None, tz: str | None) -> str:
    """The time text of a recall from the seed's call_type, when and interval_seconds."""
    if call_type == "immediate":
        return _immediate_when(when, interval)
    if call_type == "once":
        return _once_when(when, interval, tz)
    return _recurring_when(when, interval, tz)


def _schedule_recall(args: ToolArguments) -> RecallScheduled:
    tz = args.optional_text("timezone_offset")
    call_type, interval = args.text("call_type"), args.optional_integer("interval_seconds")
    when = recall_when(call_type, args.optional_text("when"), interval, tz)
    comment = args.optional_text("internal_comment")
    try:
        job = api.recall(
            when,
            args.text("additional_context_message"),
            comment=comment or None,
            name=_clip_name(comment),
            tz=tz,
        )
    except ValidationError as error:
        if interval is None or error.field != "when":
            raise
        # The time text was made of interval_seconds alone: that is the argument at fault.
        raise ValidationError("interval_seconds", f"{interval}: {error.message}") from None
    except PendingRecallExists as error:
        raise error.hinted("manage_recall action=cancel") from None
    return {
        **args.succeeded(),
        **recall_summary(job),
        "call_type": call_type,
        "interval_seconds": interval,
        "session": job.get("session"),
    }


def _manage_recall(args: ToolArguments) -> RecallAnswer:
    session = _session(args.optional_text("session_id"))
    verb = args.text("action")
    if verb == "list":
        recalls = api.jobs(kind="recall", session=session)
        pending = next((recall_summary(j) for j in recalls if j.get("pending")), None)
        return {
            **args.succeeded(),
            "session": session,
            "pending": pending,
            "recalls": [recall_summary(j) for j in recalls],
        }
    found = api.pending_recall(session)
    if found is None:
        raise ValidationError("action", f"no pending recall in session {session!r} to {verb}")
    if verb == "cancel":
        found.cancel()
        return {**args.succeeded(), "session": session, "cancelled": found.id}
    found.skip()
    return {**args.succeeded(), "session": session, "skipped": found.id, **recall_summary(found)}


# --- scheduled jobs ---------------------------------------------------------------------------


def _action(args: ToolArguments) -> ActionDocument:
    """The job action of schedule_once/schedule_cron arguments."""
    action_type = args.text("action_type")
    if action_type == "tool_call":
        return tool_call_action(args, "'llm_prompt' or 'notification'")
    refuse_tool_call_fields(args)
    prompt = args.optional_text("prompt")
    if not prompt:
        raise ValidationError("prompt", f"required for action_type {action_type!r}")
    if action_type == "llm_prompt":
        return {"type": "instruction", "instruction": prompt}
    return notification_action(args, prompt)


def _create(
    when: str | None,
    action: ActionDocument,
    label: str | None,
    job_args: ToolArguments | None = None,
    *,
    after: AfterDocument | None = None,
) -> api.Job:
    """A job of this session; ``job_args`` the job arguments of schedule_once/cron/after."""
    ident = _client.identity()
    body = api.job_body(
        when,
        action,
        api.target_payload(None, action, ident=ident),
        name=_clip_name(label),
        session=ident.session,
        policies=tool_policies(job_args) if job_args else {},
        options=_options(job_args) if job_args else {},
        after=after,
    )
    return api.create(body)


def _options(args: ToolArguments) -> Mapping[str, object]:
    given = (
        ("output_channel", args.optional_text("output_channel")),
        ("output_config", args.mapping("output_config")),
    )
    return {key: value for key, value in given if value is not None}


def _scheduled(job: api.Job, args: ToolArguments) -> JobScheduled:
    return {
        **args.succeeded(),
        **job_summary(job),
        "run_at": job.get("next_fire_at"),
        "action_type": args.text("action_type"),
        "tool_name": args.optional_text("tool_name"),
        "label": args.optional_text("label"),
        "output_channel": args.optional_text("output_channel") or "llm_notification",
    }


def _schedule_job(
    when: str | None, action: ActionDocument, args: ToolArguments, after: AfterDocument | None
) -> JobScheduled:
    return _scheduled(_create(when, action, args.optional_text("label"), args, after=after), args)


def _schedule_once(args: ToolArguments) -> JobScheduled:
    when, action = args.text("when"), _action(args)
    hint = "schedule_once needs a one-time 'when'; use schedule_cron to repeat"
    _expect_kind(when, ONE_TIME, "when", hint, None)
    return _schedule_job(when, action, args, None)


def _schedule_cron(args: ToolArguments) -> CronScheduled:
    cron, action = args.text("cron"), _action(args)
    hint = "schedule_cron needs a repeating schedule; use schedule_once for one time"
    _expect_kind(cron, RECURRING, "cron", hint, None)
    result = _schedule_job(cron, action, args, None)
    return {**result, "cron": cron, "max_runs": args.integer("max_runs")}


def _schedule_after(args: ToolArguments) -> AfterScheduled:
    after: AfterDocument = {"job": args.text("after_job"), "on": args.text("on")}
    return {**_schedule_job(None, _action(args), args, after), "max_runs": args.integer("max_runs")}


def _schedule_cancel(args: ToolArguments) -> JobCancelled:
    job = api.Job({"id": args.text("job_id")}).cancel()
    return {**args.succeeded(), "cancelled": job.id, **job_summary(job)}


def _schedule_list(args: ToolArguments) -> JobListing:
    found = api.jobs(status=args.optional_text("status"), session=_session())
    # Spelled out: mypy takes no ``**`` into a TypedDict with keys that may be left out.
    listing: JobListing = {
        "ok": True,
        "tool": args.tool,
        "jobs": [job_summary(job) for job in found],
        "total": len(found),
    }
    # Each status in the order its first job comes (the server's listing order).
    for job in found:
        status = _job_status(job.status)
        listing[status] = listing.get(status, 0) + 1
    return listing


def _job_status(status: str | None) -> JobStatusName:
    for name in JOB_STATUSES:
        if name == status:
            return name
    raise RecallError(f"the server answered a job with an unknown status {status!r}")


def _run_summary(run: RunDocument) -> RunSummary:
    output = str(run.get("output") or "")
    return {
        "run_id": run.get("id"),
        "status": run.get("status"),
        "scheduled_for": run.get("scheduled_for"),
        "finished_at": run.get("finished_at"),
        "error": run.get("error"),
        "output": output if len(output) <= OUTPUT_CLIP else "…" + output[-OUTPUT_CLIP:],
    }


def _schedule_status(args: ToolArguments) -> JobStatusAnswer:
    job = api.job(args.text("job_id"))
    runs = job.runs(limit=api.RECENT_RUNS)
    recent = [_run_summary(run) for run in runs]
    return {**args.succeeded(), "job": job_details(job), "recent_runs": recent}


def _remember(args: ToolArguments) -> Remembered:
    what, verb = args.text("what"), args.text("action")
    action: ActionDocument
    if verb == "llm_prompt":
        action = {"type": "instruction", "instruction": what}
    else:
        action = {"type": "notification", "message": what, "title": "Reminder"}
    job = _create(args.text("when"), action, what)
    return {**args.succeeded(), **job_summary(job), "what": what, "action": verb}


# --- the tools --------------------------------------------------------------------------------

_TOOLS: tuple[Tool[AgentAnswer], ...] = (
    Tool(
        "schedule_recall",
        "Schedule a headless callback for this session: at the given time you wake up, "
        "read the self-instruction you left and continue the task with your tools. Only "
        "one pending recall per session: cancel it (manage_recall) before scheduling "
        "another, or chain them (a recall that is running may schedule the next one). "
        "Write additional_context_message as a todo for yourself that names tools, files "
        "or URLs, e.g. 'Read /tmp/build.log; if it has errors, report the last 50 lines.'",
        (
            Param(
                "call_type",
                "string",
                "'once' (one delayed action), 'recurring' (periodic, needs "
                "interval_seconds or a repeating 'when') or 'immediate' (hand off now).",
                True,
                enum=CALL_TYPES,
            ),
            Param(
                "when",
                "string",
                "For once: when to fire. " + WHEN_HELP + " For recurring without "
                "interval_seconds: a repeating schedule such as 'every day at 09:00'.",
                max_length=WHEN_LENGTH,
            ),
            Param(
                "timezone_offset",
                "string",
                "±HH:MM (or a zone name like 'Europe/Paris') for absolute times; default: "
                "the server's zone.",
                max_length=TZ_LENGTH,
            ),
            Param(
                "interval_seconds",
                "integer",
                "For recurring: repeat every this many seconds (the first run is one "
                "interval from now).",
                minimum=1,
            ),
            Param("internal_comment", "string", "Human-readable note: why this recall."),
            Param(
                "additional_context_message",
                "string",
                "The self-instruction you will receive when it fires.",
                True,
            ),
        ),
        _schedule_recall,
        {
            "tz": "timezone_offset",
            "action.instruction": "additional_context_message",
            "action.comment": "internal_comment",
            "name": "internal_comment",
        },
    ),
    Tool(
        "manage_recall",
        "Manage this session's recall: 'cancel' cancels the pending recall (do this before "
        "scheduling a new one; a recall may cancel itself from its own run), 'skip' moves "
        "a recurring recall to its next occurrence (never earlier than now), 'list' shows "
        "all recalls of the session (pending, fired, cancelled).",
        (
            Param("action", "string", "cancel, skip or list.", True, enum=MANAGE_ACTIONS),
            Param(
                "session_id",
                "string",
                "Target session (default: the current one).",
                plain=True,
                max_length=PATH_LENGTH,
            ),
        ),
        _manage_recall,
        {"path": "session_id"},
    ),
    SCHEDULE_ONCE.bound(_schedule_once),
    SCHEDULE_CRON.bound(_schedule_cron),
    SCHEDULE_AFTER.bound(_schedule_after),
    SCHEDULE_CANCEL.bound(_schedule_cancel),
    Tool(
        "schedule_list",
        "List the scheduled jobs of this session, optionally only those with a status.",
        (Param("status", "string", "Only jobs with this status.", enum=JOB_STATUSES),),
        _schedule_list,
    ),
    SCHEDULE_STATUS.bound(_schedule_status),
    Tool(
        "remember",
        "'Remind me to X at Y': schedule a reminder (one-time or repeating). When it fires "
        "the message comes back to you as a notification (or as a self-instruction with "
        "action='llm_prompt').",
        (
            Param("what", "string", "What to remember / what to do.", True),
            Param(
                "when",
                "string",
                "When, in natural language or cron ('tomorrow at 9am', 'every day at "
                "18:00', 'in 2 hours').",
                True,
                max_length=WHEN_LENGTH,
            ),
            Param(
                "action",
                "string",
                "'notification' (default) or 'llm_prompt' (handed to your on_recall handler).",
                enum=REMEMBER_ACTIONS,
                default="notification",
            ),
        ),
        _remember,
        {"action.message": "what", "action.instruction": "what", "name": "what"},
    ),
)
TOOLS: dict[str, Tool[AgentAnswer]] = {tool.name: tool for tool in _TOOLS}
TOOL_NAMES = tuple(TOOLS)


def tool_specs(
    names: list[str] | None = None, *, style: str = "openai"
) -> list[OpenAISpec | AnthropicSpec]:
    """JSON-schema specifications of the tools (all, or those named), for an LLM API:
    ``style='openai'`` (``{"type": "function", "function": {...}}``, the default) or
    ``'anthropic'`` (``{"name", "description", "input_schema"}``)."""
    if style not in SPEC_STYLES:
        raise ValidationError("style", f"unknown style {style!r}", accepted=SPEC_STYLES)
    chosen = list(TOOL_NAMES) if names is None else names
    for name in chosen:
        if name not in TOOLS:
            raise ValidationError("names", f"unknown tool {name!r}", accepted=TOOL_NAMES)
    return [TOOLS[name].spec(style) for name in chosen]


def dispatch(
    name: str, arguments: Mapping[str, Any] | str | None = None
) -> AgentAnswer | ToolFailure:
    """Run one tool call. Never raises: errors come back as ``{"ok": false, "error", "field"}``
    (``field`` names the argument at fault, ``accepted`` lists valid values when known)."""
    tool = TOOLS.get(name) if isinstance(name, str) else None
    if tool is None:
        unknown = ValidationError("name", f"unknown tool {name!r}", accepted=TOOL_NAMES)
        return failure(unknown, None)
    try:
        return tool.run(tool.arguments(decode_arguments(arguments)))
    except ValidationError as error:
        return failure(error, tool)
    except NotFoundError as error:
        ids = [param.name for param in tool.params if param.name == "job_id"]
        return {"ok": False, "error": str(error), "field": ids[0] if ids else None}
    except RecallError as error:
        return {"ok": False, "error": str(error), "field": None}
    except Exception as error:
        # A bug of ours must not end the agent's loop; the message says where it happened.
        return {
            "ok": False,
            "error": f"internal error in {name}: {type(error).__name__}: {error}",
            "field": None,
        }


# --- tool calls at once and in the background (kernel/agent/calls.py) -----------------------------

TOOLS.update((tool.name, tool) for tool in PRIMITIVE_TOOLS)
TOOL_NAMES = tuple(TOOLS)


# --- watchers and notifications (kernel/agent/watchers.py) ----------------------------------------

TOOLS.update((tool.name, tool) for tool in WATCH_TOOLS)
TOOL_NAMES = tuple(TOOLS)


# --- heartbeats (kernel/jobs/heartbeat.py) --------------------------------------------------------

TOOLS.update((tool.name, tool) for tool in heartbeat_tools())
TOOL_NAMES = tuple(TOOLS)
