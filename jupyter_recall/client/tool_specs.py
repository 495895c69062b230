"""The agent tools that mean the same in a kernel and outside one (the MCP server): their
specifications, shared as data so that both surfaces give the same names, schemas, argument
checks and field names in errors. ``kernel/agent/`` and ``mcp/tools.py`` bind each to what
runs it there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from jupyter_recall.client.documents import ActionDocument, JobDocument, PoliciesDocument
from jupyter_recall.client.ids import ID_LENGTH, JOB_ID
from jupyter_recall.client.records import JobRecord
from jupyter_recall.client.tool_answers import JobDetails, JobSummary
from jupyter_recall.client.toolspec import (
    TOOL_NAME_PATTERN,
    ArrayParam,
    NumberParam,
    Param,
    ParamSchema,
    ToolArguments,
    ToolSpec,
)
from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.escalation import STRATEGIES
from jupyter_recall.core.limits import (
    MAX_KEEP_RUNS,
    MAX_PAUSE_AFTER_FAILURES,
    MAX_RETRIES,
    MAX_RUNS,
    MAX_SECONDS,
    NOTIFICATION_PRIORITIES,
    TEXT_LIMITS,
)
from jupyter_recall.core.text import check_unicode

ACTION_TYPES = ("notification", "llm_prompt", "tool_call")
JobStatusName = Literal["active", "paused", "completed", "failed", "cancelled"]
JOB_STATUSES: tuple[JobStatusName, ...] = ("active", "paused", "completed", "failed", "cancelled")


def job_summary(job: JobRecord | JobDocument) -> JobSummary:
    """The fields of a job an agent needs, in the seed tools' vocabulary."""
    if isinstance(job, JobRecord):
        job = job.to_dict()
    action = job.get("action")
    return {
        "job_id": job.get("id"),
        "name": job.get("name"),
        "kind": job.get("kind"),
        "action_type": action.get("type") if action else None,
        "schedule_type": job.get("schedule_kind"),
        "when": job.get("when"),
        "after": job.get("after"),
        "schedule": job.get("description"),
        "status": job.get("status"),
        "next_run_at": job.get("next_fire_at"),
        "run_count": job.get("run_count"),
        "last_run_at": job.get("last_run_at"),
        "last_status": job.get("last_status"),
        "last_error": job.get("last_error"),
        "paused_reason": job.get("paused_reason"),
    }


def job_details(job: JobRecord | JobDocument) -> JobDetails:
    """A job's summary with its action and target (``schedule_status``)."""
    if isinstance(job, JobRecord):
        job = job.to_dict()
    return {**job_summary(job), "action": job.get("action"), "target": job.get("target")}


# --- the longest string arguments (``maxLength``) ----------------------------------------------
# Checked before any request: past these, a query string (a listing's filter, its cursor) grew
# beyond what the server reads and the call failed as "cannot reach the server". Where the
# server bounds the field an argument becomes, the number is the server's (the tests check that
# they agree); the names it does not bound (a tool's, a channel's, a kernel spec's) take as many
# as an approval's tool. Free texts that travel in a body (code, a prompt) have no bound here.

WHEN_LENGTH = TEXT_LIMITS["when"]
NAME_LENGTH = TEXT_LIMITS["name"]
"""A job's name or label, a notification's title."""
TZ_LENGTH = TEXT_LIMITS["tz"]
PATH_LENGTH = TEXT_LIMITS["session"]
"""A notebook path or a session (a kernel id)."""
TOOL_LENGTH = 200
"""A tool's ``module.action``, a channel's or a kernel spec's name."""
CURSOR_LENGTH = 2_000
"""A listing's ``next_cursor`` passed back: the longest the server decodes."""
MESSAGE_LENGTH = 10_000
"""A notification's message."""


TAG_LENGTH = 50
"""A notification tag's most characters (``engine/notify.py``'s ``MAX_TAG``)."""
TAGS = 20
"""A notification's most tags (``MAX_TAGS``)."""
HISTORY = 100
"""A watcher's ring buffer of checks (``store/watchers.py``'s ``RING_SIZE``): watch_history's
largest ``last_n``."""
PAGE = 10_000
"""A listing's largest page (``server/listing.py``'s ``MAX_PAGE``)."""


@dataclass(frozen=True)
class IntegerParam(Param):
    """An integer argument with a largest value, advertised (``maximum``) and checked."""

    maximum: int | None = None

    def schema(self) -> ParamSchema:
        schema = super().schema()
        if self.maximum is not None:
            schema["maximum"] = self.maximum
        return schema

    def check(self, value: Any) -> Any:
        checked = super().check(value)
        if self.maximum is not None and checked > self.maximum:
            raise ValidationError(self.name, self.too_large(checked))
        return checked

    def too_large(self, value: int) -> str:
        """What the refusal of a value above ``maximum`` says."""
        return f"must be <= {self.maximum:,}, got {value:,}"


@dataclass(frozen=True)
class PolicyParam(IntegerParam):
    """A policy's integer argument, from 0 to the server's largest value (``core/limits.py``):
    checked here, or a huge one (``5e300``) would reach the server as an integer too long for
    any body and be refused as the ``body``'s, not the argument's."""

    unit: str = ""
    """What the number counts, as the refusal says it (" seconds")."""

    def too_large(self, value: int) -> str:
        shown = f"{value:,}" if value < 10**15 else f"{value:.3g}"
        return f"must be from 0 to {self.maximum:,}{self.unit}, got {shown}"


@dataclass(frozen=True)
class TextsParam(ArrayParam):
    """An array of strings of 1 to ``item_length`` characters (``items`` says so)."""

    item_length: int = 0

    def check(self, value: Any) -> Any:
        items = super().check(value)
        if self.max_items is not None and len(items) > self.max_items:
            raise ValidationError(self.name, f"at most {self.max_items} items, got {len(items)}")
        for item in items:
            if not isinstance(item, str) or not 1 <= len(item) <= self.item_length:
                raise ValidationError(
                    self.name, f"each item is a string of 1 to {self.item_length} characters"
                )
            check_unicode(item, self.name)
        return items


@dataclass(frozen=True)
class ChoiceParam(Param):
    """A string of ``enum``; a value a surface refuses on purpose (``refused``: value and why)
    is refused with its reason rather than as unknown."""

    refused: tuple[tuple[str, str], ...] = ()

    def check(self, value: Any) -> Any:
        for refused, why in self.refused:
            if value == refused:
                raise ValidationError(self.name, why, accepted=self.enum)
        return super().check(value)


# --- jobs -----------------------------------------------------------------------------------------

WHEN_HELP = (
    "Relative formats preferred: '30m', '2h 15m', 'in 3 hours', 'tomorrow at 09:00'; "
    "ISO 8601 (YYYY-MM-DDTHH:MM:SS+HH:MM) only if the time zone is known."
)
_JOB_FIELDS = {
    "name": "label",
    "action.name": "tool_name",
    "action.params": "tool_params",
    "action.message": "prompt",
    "action.instruction": "prompt",
    "action.title": "label",
    "action.channel": "output_channel",
    "max_runs": "max_runs",
    "timeout": "timeout_seconds",
    "retries": "retries",
    "policies.retries": "retries",
    "policies.retries.max": "retries",
    "pause_after_failures": "pause_after_failures",
    "keep_runs": "keep_runs",
    "keep_runs_for": "keep_runs_for_seconds",
    # The server names its policies' fields so (``policies.timeout``): the tools' arguments.
    "policies.max_runs": "max_runs",
    "policies.timeout": "timeout_seconds",
    "policies.pause_after_failures": "pause_after_failures",
    "policies.keep_runs": "keep_runs",
    "policies.keep_runs_for": "keep_runs_for_seconds",
    "options": "output_config",
}


def tool_call_action(args: ToolArguments, prompt_types: str) -> ActionDocument:
    """The action of ``action_type`` 'tool_call' (schedule_once/schedule_cron/schedule_after),
    in the kernel and over MCP alike: a ``prompt`` is refused, not dropped (``prompt_types``:
    the action types that take one on this surface)."""
    tool_name = args.optional_text("tool_name")
    if not tool_name:
        raise ValidationError("tool_name", "required for action_type 'tool_call' (e.g. 'http.get')")
    if args.optional_text("prompt"):
        raise ValidationError("prompt", f"only for action_type {prompt_types}")
    return {"type": "tool", "name": tool_name, "params": args.mapping("tool_params") or {}}


def refuse_tool_call_fields(args: ToolArguments) -> None:
    """The arguments of a tool call, given with another ``action_type``: refused, not dropped."""
    if args.optional_text("tool_name"):
        raise ValidationError("tool_name", "only for action_type 'tool_call'")
    if args.mapping("tool_params"):
        raise ValidationError("tool_params", "only for action_type 'tool_call'")


def notification_action(args: ToolArguments, prompt: str) -> ActionDocument:
    """The notification a job of schedule_once/schedule_cron/schedule_after sends: ``prompt``
    titled by its label, through its output channel."""
    action: ActionDocument = {"type": "notification", "message": prompt}
    label, channel = args.optional_text("label"), args.optional_text("output_channel")
    if label:
        action["title"] = label
    if channel:
        action["channel"] = channel
    return action


def tool_policies(args: ToolArguments) -> PoliciesDocument:
    """The policies of schedule_once/schedule_cron/schedule_after arguments (a policy whose
    argument is 0 or that the tool does not take stays unset)."""

    def given(name: str) -> int:
        # Bounded when the arguments were read (``PolicyParam``).
        return args.integer(name) if name in args.values else 0

    policies: PoliciesDocument = {}
    if max_runs := given("max_runs"):
        policies["max_runs"] = max_runs
    if timeout := given("timeout_seconds"):
        policies["timeout"] = timeout
    if retries := given("retries"):
        policies["retries"] = retries
    if pause_after := given("pause_after_failures"):
        policies["pause_after_failures"] = pause_after
    if keep_runs := given("keep_runs"):
        policies["keep_runs"] = keep_runs
    if keep_for := given("keep_runs_for_seconds"):
        policies["keep_runs_for"] = keep_for
    return policies


# --- what the shared tools say to each reader -------------------------------------------------
# One specification per tool and surface: the same names, arguments and checks, in words true
# for the agent reading them. A kernel's agent has a notification queue, an on_recall handler
# and `remember`; an agent outside a kernel (the MCP server's client) has none of them, and what
# its jobs and watchers notify reaches the user's JupyterLab.


@dataclass(frozen=True)
class Surface:
    """The words of the shared tools for one reader (an agent in a kernel, or over MCP)."""

    fires: str
    """What a job of schedule_once/schedule_after does when it fires."""
    action_type: Param
    prompt: str
    output_channel: str
    job_id: str
    """Where a job id comes from."""
    status: str
    """schedule_status's description."""
    notified: str
    """Who watch_start's watcher notifies, and where."""
    watch_channel: str
    watch_list: str
    fallback: str
    """Where send_notification falls back to."""
    when_params: tuple[Param, ...] = ()
    """What schedule_once/schedule_cron take besides their schedule."""
    fields: Mapping[str, str] = field(default_factory=dict)
    """More server fields -> argument names, for the surface's own arguments."""


KERNEL = Surface(
    fires="a notification for you, a self-instruction (llm_prompt) or a tool call",
    action_type=Param(
        "action_type",
        "string",
        "What happens when it fires: 'notification' (a message queued for you), "
        "'llm_prompt' (a self-instruction handed to your on_recall handler in this kernel) or "
        "'tool_call' (a server tool call).",
        enum=ACTION_TYPES,
        default="notification",
    ),
    prompt="For llm_prompt and notification: the message or instruction.",
    output_channel="Where results go (default: your notification queue).",
    job_id="Job id from schedule_once, schedule_cron, schedule_after or remember.",
    status="Detailed status of one job: schedule, next run, counts and its latest runs with "
    "their output.",
    notified="you are notified ('[WATCHER UPDATE] ...' in your notification queue in a kernel, "
    "in the user's JupyterLab otherwise, or on output_channel)",
    watch_channel="A channel of the server (default: you).",
    watch_list="List this session's watchers with their state and counts, running first.",
    fallback="this session",
)

OUTPUT_TAIL = 1_000
"""Characters of a run's output that a listing shows (its end: ``output_tail``)."""
MCP_ACTION_TYPES = ("notification", "tool_call")
NO_LLM_PROMPT = (
    "'llm_prompt' needs a notebook session's agent (an on_recall handler in its kernel): "
    "use notebook_recall with its notebook"
)
MCP = Surface(
    fires="a notification for the user or a server tool call (a self-instruction for a "
    "notebook's agent is notebook_recall)",
    action_type=ChoiceParam(
        "action_type",
        "string",
        "What happens when it fires: 'notification' (the prompt shown in the user's "
        "JupyterLab, or sent on output_channel) or 'tool_call' (a server tool call, its "
        "result the run's output). A self-instruction for a notebook's agent is "
        "notebook_recall.",
        enum=MCP_ACTION_TYPES,
        default="notification",
        refused=(("llm_prompt", NO_LLM_PROMPT),),
    ),
    prompt="For notification: the message.",
    output_channel="A channel of the server's config: where a notification goes (default "
    "'ui', the user's JupyterLab), or where a tool_call's outcome is sent (default: nowhere; "
    "run_output shows it).",
    job_id="A job id (schedule_* or job_list).",
    status="Detailed status of one job: schedule, next run, counts and its 5 latest runs, each "
    f"with the last {OUTPUT_TAIL:,} characters of its output (output_tail; run_output for all "
    "of it).",
    notified="the user is notified (in their JupyterLab, or on output_channel; watch_history "
    "shows every check)",
    watch_channel="A channel of the server (default: the user's JupyterLab, 'ui').",
    watch_list="List the user's watchers (every notebook's and the MCP server's) with their "
    "state and counts, running first.",
    fallback="the user's JupyterLab ('ui')",
    when_params=(
        Param(
            "timezone_offset",
            "string",
            "±HH:MM or a zone name ('Europe/Paris'): the zone of absolute times and cron "
            "fields ('0 9 * * *' at 09:00 there); default: the server's zone.",
            max_length=TZ_LENGTH,
        ),
    ),
    fields={"tz": "timezone_offset"},
)


def _job_params(surface: Surface) -> tuple[Param, ...]:
    return (
        surface.action_type,
        Param(
            "tool_name",
            "string",
            "For tool_call: the tool as module.action, e.g. 'http.get'.",
            max_length=TOOL_LENGTH,
        ),
        Param("tool_params", "object", "For tool_call: the tool's parameters."),
        Param("prompt", "string", surface.prompt),
        Param("label", "string", "Human-readable description of the job.", max_length=NAME_LENGTH),
        Param("output_channel", "string", surface.output_channel, max_length=TOOL_LENGTH),
        Param("output_config", "object", "Per-delivery settings of the output channel."),
        *_POLICY_PARAMS,
    )


_POLICY_PARAMS = (
    PolicyParam(
        "timeout_seconds",
        "integer",
        "Stop a run still going after this many seconds; it ends timed_out (0: the server's "
        "default, RecallApp.default_timeout, none unless set).",
        minimum=0,
        default=0,
        maximum=MAX_SECONDS,
        unit=" seconds",
    ),
    PolicyParam(
        "retries",
        "integer",
        "Run a failed, timed-out or interrupted occurrence again, up to this many times, "
        "10 s after the first failure and twice as long after each further one (0: none).",
        minimum=0,
        default=0,
        maximum=MAX_RETRIES,
    ),
    PolicyParam(
        "pause_after_failures",
        "integer",
        "Pause the job after this many consecutive runs failed or timed out (0: never).",
        minimum=0,
        default=0,
        maximum=MAX_PAUSE_AFTER_FAILURES,
    ),
    PolicyParam(
        "keep_runs",
        "integer",
        "Keep only this many newest runs in its history (0: the server's default).",
        minimum=0,
        default=0,
        maximum=MAX_KEEP_RUNS,
    ),
    PolicyParam(
        "keep_runs_for_seconds",
        "integer",
        "Delete runs this many seconds after they end (0: the server's default).",
        minimum=0,
        default=0,
        maximum=MAX_SECONDS,
        unit=" seconds",
    ),
)

_MAX_RUNS = PolicyParam(
    "max_runs",
    "integer",
    "Stop after this many runs (0: unlimited).",
    minimum=0,
    default=0,
    maximum=MAX_RUNS,
)


def _job_id(surface: Surface) -> Param:
    return Param(
        "job_id", "string", surface.job_id, True, pattern=JOB_ID.pattern, max_length=ID_LENGTH
    )


def _schedule_once(surface: Surface) -> ToolSpec:
    return ToolSpec(
        "schedule_once",
        f"Schedule a one-shot job at a time or after a delay: {surface.fires}. " + WHEN_HELP,
        (
            Param("when", "string", "When to fire. " + WHEN_HELP, True, max_length=WHEN_LENGTH),
            *surface.when_params,
            *_job_params(surface),
        ),
        {**_JOB_FIELDS, **surface.fields},
    )


def _schedule_cron(surface: Surface) -> ToolSpec:
    return ToolSpec(
        "schedule_cron",
        "Schedule a recurring job with a cron expression (5 fields: minute hour "
        "day-of-month month day-of-week, e.g. '0 9 * * *') or a repeating phrase "
        "('every 15m', 'every monday at 10:00').",
        (
            Param(
                "cron",
                "string",
                "Cron expression or repeating schedule.",
                True,
                max_length=WHEN_LENGTH,
            ),
            *surface.when_params,
            *_job_params(surface),
            _MAX_RUNS,
        ),
        {**_JOB_FIELDS, "when": "cron", **surface.fields},
    )


def _schedule_after(surface: Surface) -> ToolSpec:
    return ToolSpec(
        "schedule_after",
        "Schedule a job that fires each time another job's run ends with the given outcome, "
        "instead of at a time (a step of a pipeline: after the training job succeeds, report): "
        f"{surface.fires}. Refused when the other job waits, through any chain, for this one.",
        (
            Param(
                "after_job",
                "string",
                "Id of the upstream job (from schedule_once, schedule_cron or schedule_after).",
                True,
                pattern=JOB_ID.pattern,
                max_length=ID_LENGTH,
            ),
            Param(
                "on",
                "string",
                "Which outcome fires it: 'succeeded', 'failed' (failed or timed out) or "
                "'finished' (any end).",
                enum=("succeeded", "failed", "finished"),
                default="succeeded",
            ),
            *_job_params(surface),
            _MAX_RUNS,
        ),
        {**_JOB_FIELDS, "after": "after_job", "after.job": "after_job", "after.on": "on"},
    )


# --- watchers and notifications -------------------------------------------------------------------

_WATCHER_ID = Param(
    "watcher_id",
    "string",
    "The id watch_start returned.",
    True,
    pattern=JOB_ID.pattern,
    max_length=ID_LENGTH,
)
_START_FIELDS = {"tool": "name", "target": "name", "session": "name"}


def _watch_start(surface: Surface) -> ToolSpec:
    return ToolSpec(
        "watch_start",
        "Start a persistent watcher: the tool is checked every `interval` seconds on the "
        f"server, without you, and {surface.notified} only when the strategy says so: "
        "on_change (default; the first check sets the baseline), on_error (errors and "
        "recoveries), on_threshold (notify_config.expression such as "
        "'result.status_code != 200' or 'result.data.progress >= 100' turns true), summary "
        "(every notify_config.batch_size checks) or always. It survives kernel and server "
        "restarts until watch_stop. Tools whose policy is approve or block cannot be watched.",
        (
            Param(
                "name",
                "string",
                "The tool, module.action.",
                True,
                pattern=TOOL_NAME_PATTERN,
                max_length=TOOL_LENGTH,
            ),
            Param("params", "object", "The tool's parameters for every check."),
            NumberParam(
                "interval",
                "integer",
                "Seconds between checks, 5 to 3600.",
                minimum=5,
                maximum=3600,
                default=30,
            ),
            Param("label", "string", "Human-readable description.", max_length=NAME_LENGTH),
            Param(
                "notify_when",
                "string",
                "The escalation strategy.",
                enum=STRATEGIES,
                default="on_change",
            ),
            Param(
                "notify_config",
                "object",
                "{expression: ...} for on_threshold; {batch_size: n} for summary.",
            ),
            Param("output_channel", "string", surface.watch_channel, max_length=TOOL_LENGTH),
            Param("output_config", "object", "Per-delivery settings of the output channel."),
        ),
        _START_FIELDS,
    )


def _send_notification(surface: Surface) -> ToolSpec:
    return ToolSpec(
        "send_notification",
        "Send a notification through a channel of the server's config (webhook, email, log, "
        f"ui, ...). An unknown or failing channel falls back to {surface.fallback} with the "
        "reason (fallback_reason).",
        (
            Param(
                "channel",
                "string",
                "The channel's name, e.g. 'ops' or 'ui'.",
                True,
                max_length=TOOL_LENGTH,
            ),
            Param(
                "message",
                "string",
                f"The message (at most {MESSAGE_LENGTH} characters).",
                True,
                max_length=MESSAGE_LENGTH,
            ),
            Param("title", "string", "Subject or title.", max_length=NAME_LENGTH),
            Param(
                "priority", "string", "Priority.", enum=NOTIFICATION_PRIORITIES, default="normal"
            ),
            TextsParam(
                "tags",
                "array",
                "Tags for filtering.",
                max_items=TAGS,
                items={"type": "string", "minLength": 1, "maxLength": TAG_LENGTH},
                item_length=TAG_LENGTH,
            ),
            Param("structured_data", "object", "A machine-readable payload."),
            Param(
                "output_config",
                "object",
                "Per-delivery settings, e.g. {to_address: 'ops@example.org'} for email.",
            ),
        ),
    )


def _watcher_specs() -> tuple[ToolSpec, ...]:
    """The watcher tools whose words are the same for every reader, but watch_list's."""
    return (
        ToolSpec(
            "watch_stop", "Stop and remove a watcher; its history is deleted.", (_WATCHER_ID,)
        ),
        ToolSpec(
            "watch_pause",
            "Pause a watcher: no checks until watch_resume; history kept.",
            (_WATCHER_ID,),
        ),
        ToolSpec("watch_resume", "Resume a paused watcher.", (_WATCHER_ID,)),
        ToolSpec(
            "watch_status",
            "A watcher's counters (checks, notifications), configuration, last result and "
            "latest checks.",
            (_WATCHER_ID,),
        ),
    )


WATCH_HISTORY = ToolSpec(
    "watch_history",
    "The last N check results of a watcher (its ring buffer keeps 100), newest first.",
    (
        _WATCHER_ID,
        IntegerParam(
            "last_n", "integer", "How many, 1 to 100.", minimum=1, default=10, maximum=HISTORY
        ),
    ),
)


@dataclass(frozen=True)
class SharedSpecs:
    """The shared tools, in one reader's words."""

    schedule_once: ToolSpec
    schedule_cron: ToolSpec
    schedule_after: ToolSpec
    schedule_cancel: ToolSpec
    schedule_status: ToolSpec
    watch_start: ToolSpec
    watch_stop: ToolSpec
    watch_pause: ToolSpec
    watch_resume: ToolSpec
    watch_status: ToolSpec
    watch_list: ToolSpec
    watch_history: ToolSpec
    send_notification: ToolSpec

    @property
    def all(self) -> tuple[ToolSpec, ...]:
        return tuple(getattr(self, item.name) for item in fields(self))


def shared_specs(surface: Surface) -> SharedSpecs:
    job_id = (_job_id(surface),)
    stop, pause, resume, status = _watcher_specs()
    return SharedSpecs(
        schedule_once=_schedule_once(surface),
        schedule_cron=_schedule_cron(surface),
        schedule_after=_schedule_after(surface),
        schedule_cancel=ToolSpec(
            "schedule_cancel",
            "Cancel a scheduled job: nothing more fires; its history stays.",
            job_id,
        ),
        schedule_status=ToolSpec("schedule_status", surface.status, job_id),
        watch_start=_watch_start(surface),
        watch_stop=stop,
        watch_pause=pause,
        watch_resume=resume,
        watch_status=status,
        watch_list=ToolSpec("watch_list", surface.watch_list, ()),
        watch_history=WATCH_HISTORY,
        send_notification=_send_notification(surface),
    )


IN_KERNEL = shared_specs(KERNEL)
"""The shared tools as a kernel's agent reads them (``jupyter_recall.agent``)."""
OVER_MCP = shared_specs(MCP)
"""The shared tools as the MCP server's client reads them."""

SCHEDULE_ONCE = IN_KERNEL.schedule_once
SCHEDULE_CRON = IN_KERNEL.schedule_cron
SCHEDULE_AFTER = IN_KERNEL.schedule_after
SCHEDULE_CANCEL = IN_KERNEL.schedule_cancel
SCHEDULE_STATUS = IN_KERNEL.schedule_status
WATCH_START = IN_KERNEL.watch_start
WATCH_STOP = IN_KERNEL.watch_stop
WATCH_PAUSE = IN_KERNEL.watch_pause
WATCH_RESUME = IN_KERNEL.watch_resume
WATCH_STATUS = IN_KERNEL.watch_status
WATCH_LIST = IN_KERNEL.watch_list
SEND_NOTIFICATION = IN_KERNEL.send_notification

SHARED: tuple[ToolSpec, ...] = IN_KERNEL.all
"""Every shared specification in the kernel's words: the tools a kernel's agent and an MCP
client both have (``OVER_MCP.all`` in the MCP client's words)."""
