"""Agent tools for watchers and notifications (``kernel/watchers/watch.py``).

``watch_start``, ``watch_stop``, ``watch_pause``, ``watch_resume``, ``watch_status``,
``watch_list``, ``watch_history`` and ``send_notification``, in the shape of ``toolspec.Tool``
so that ``agent.tool_specs`` and ``agent.dispatch`` serve them with the rest.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from jupyter_recall.client.toolspec import Param, Result, Tool
from jupyter_recall.core.errors import NotFoundError, ValidationError
from jupyter_recall.core.escalation import STRATEGIES
from jupyter_recall.engine.notify import PRIORITIES
from jupyter_recall.kernel.agent.calls import TOOL_NAME_PATTERN, ArrayParam, NumberParam
from jupyter_recall.kernel.connection.send import send_notification
from jupyter_recall.kernel.jobs.api import JOB_ID
from jupyter_recall.kernel.watchers import watch

T = TypeVar("T")

SUMMARY_FIELDS = (
    "watcher_id",
    "tool_name",
    "label",
    "status",
    "interval",
    "notify_when",
    "checks",
    "notifications",
    "last_check_at",
    "next_check_at",
)


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def _summary(watcher: Mapping[str, Any]) -> Result:
    return {key: watcher.get(key) for key in SUMMARY_FIELDS}


def _known(call: Callable[..., T], watcher_id: str, *args: Any) -> T:
    try:
        return call(watcher_id, *args)
    except NotFoundError:
        raise ValidationError("watcher_id", f"no watcher {watcher_id!r} (see watch_list)") from None


def _watch_start(args: dict[str, Any]) -> Result:
    created = watch.watch_start(
        args["name"],
        args["params"],
        interval=args["interval"],
        label=args["label"] or "",
        notify_when=args["notify_when"],
        notify_config=args["notify_config"],
        output_channel=args["output_channel"],
        output_config=args["output_config"],
    )
    return {**_summary(created), "hint": created.get("hint")}


def _watch_stop(args: dict[str, Any]) -> Result:
    _known(watch.watch_stop, args["watcher_id"])
    return {"watcher_id": args["watcher_id"], "status": "stopped"}


def _watch_pause(args: dict[str, Any]) -> Result:
    return _summary(_known(watch.watch_pause, args["watcher_id"]))


def _watch_resume(args: dict[str, Any]) -> Result:
    return _summary(_known(watch.watch_resume, args["watcher_id"]))


def _watch_status(args: dict[str, Any]) -> Result:
    current = _known(watch.watch_status, args["watcher_id"])
    return dict(_plain(current.to_dict()))


def _watch_list(args: dict[str, Any]) -> Result:
    found = watch.watch_list()
    return {
        "watchers": [_summary(w) for w in found],
        "total": len(found),
        "running": sum(1 for w in found if w.get("status") == "running"),
    }


def _watch_history(args: dict[str, Any]) -> Result:
    history = _known(watch.watch_history, args["watcher_id"], args["last_n"])
    return {"watcher_id": args["watcher_id"], "history": _plain(history)}


def _send_notification(args: dict[str, Any]) -> Result:
    delivery = send_notification(
        args["channel"],
        args["message"],
        title=args["title"] or "",
        priority=args["priority"],
        tags=args["tags"],
        structured_data=args["structured_data"],
        output_config=args["output_config"],
    )
    return dict(_plain(delivery))


_WATCHER_ID = Param(
    "watcher_id", "string", "The id watch_start returned.", True, pattern=JOB_ID.pattern
)
_START_FIELDS = {"tool": "name", "target": "name", "session": "name"}

WATCH_TOOLS: tuple[Tool, ...] = (
    Tool(
        "watch_start",
        "Start a persistent watcher: the tool is checked every `interval` seconds on the "
        "server, without you, and you are notified ('[WATCHER UPDATE] ...' in your "
        "notification queue) only when the strategy says so: on_change (default; the first "
        "check sets the baseline), on_error (errors and recoveries), on_threshold "
        "(notify_config.expression such as 'result.status_code != 200' or "
        "'result.data.progress >= 100' turns true), summary (every notify_config.batch_size "
        "checks) or always. It survives kernel and server restarts until watch_stop. Tools "
        "whose policy is approve or block cannot be watched.",
        (
            Param("name", "string", "The tool, module.action.", True, pattern=TOOL_NAME_PATTERN),
            Param("params", "object", "The tool's parameters for every check."),
            NumberParam(
                "interval",
                "number",
                "Seconds between checks, 5 to 3600.",
                minimum=5,
                maximum=3600,
                default=30,
            ),
            Param("label", "string", "Human-readable description."),
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
            Param("output_channel", "string", "A channel of the server (default: you)."),
            Param("output_config", "object", "Per-delivery settings of the output channel."),
        ),
        _watch_start,
        _START_FIELDS,
    ),
    Tool(
        "watch_stop",
        "Stop and remove a watcher; its history is deleted.",
        (_WATCHER_ID,),
        _watch_stop,
    ),
    Tool(
        "watch_pause",
        "Pause a watcher: no checks until watch_resume; history kept.",
        (_WATCHER_ID,),
        _watch_pause,
    ),
    Tool("watch_resume", "Resume a paused watcher.", (_WATCHER_ID,), _watch_resume),
    Tool(
        "watch_status",
        "A watcher's counters (checks, notifications), configuration, last result and latest "
        "checks.",
        (_WATCHER_ID,),
        _watch_status,
    ),
    Tool(
        "watch_list",
        "List this session's watchers with their state and counts, running first.",
        (),
        _watch_list,
    ),
    Tool(
        "watch_history",
        "The last N check results of a watcher (its ring buffer keeps 100), newest first.",
        (
            _WATCHER_ID,
            Param("last_n", "integer", "How many, 1 to 100.", minimum=1, default=10),
        ),
        _watch_history,
    ),
    Tool(
        "send_notification",
        "Send a notification through a channel of the server's config (webhook, email, log, "
        "ui, ...). An unknown or failing channel falls back to this session with the reason "
        "(fallback_reason).",
        (
            Param("channel", "string", "The channel's name, e.g. 'ops' or 'ui'.", True),
            Param("message", "string", "The message (at most 10000 characters).", True),
            Param("title", "string", "Subject or title."),
            Param("priority", "string", "Priority.", enum=PRIORITIES, default="normal"),
            ArrayParam("tags", "array", "Tags for filtering.", items={"type": "string"}),
            Param("structured_data", "object", "A machine-readable payload."),
            Param(
                "output_config",
                "object",
                "Per-delivery settings, e.g. {to_address: 'ops@example.org'} for email.",
            ),
        ),
        _send_notification,
    ),
)
