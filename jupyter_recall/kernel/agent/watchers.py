"""Agent tools for watchers and notifications (``kernel/watchers/watch.py``).

``watch_start``, ``watch_stop``, ``watch_pause``, ``watch_resume``, ``watch_status``,
``watch_list``, ``watch_history`` and ``send_notification``, in the shape of ``toolspec.Tool``
so that ``agent.tool_specs`` and ``agent.dispatch`` serve them with the rest.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from jupyter_recall.client.tool_specs import (
    SEND_NOTIFICATION,
    WATCH_HISTORY,
    WATCH_LIST,
    WATCH_PAUSE,
    WATCH_RESUME,
    WATCH_START,
    WATCH_STATUS,
    WATCH_STOP,
)
from jupyter_recall.client.toolspec import Result, Tool, ToolArguments
from jupyter_recall.core.errors import NotFoundError, ValidationError
from jupyter_recall.kernel.connection.send import send_notification
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


def _watch_start(args: ToolArguments) -> Result:
    created = watch.watch_start(
        args.text("name"),
        args.mapping("params"),
        interval=args.number("interval"),
        label=args.optional_text("label") or "",
        notify_when=args.text("notify_when"),
        notify_config=args.mapping("notify_config"),
        output_channel=args.optional_text("output_channel"),
        output_config=args.mapping("output_config"),
    )
    return {**_summary(created), "hint": created.get("hint")}


def _watch_stop(args: ToolArguments) -> Result:
    watcher_id = args.text("watcher_id")
    _known(watch.watch_stop, watcher_id)
    return {"watcher_id": watcher_id, "status": "stopped"}


def _watch_pause(args: ToolArguments) -> Result:
    return _summary(_known(watch.watch_pause, args.text("watcher_id")))


def _watch_resume(args: ToolArguments) -> Result:
    return _summary(_known(watch.watch_resume, args.text("watcher_id")))


def _watch_status(args: ToolArguments) -> Result:
    current = _known(watch.watch_status, args.text("watcher_id"))
    return dict(_plain(current.to_dict()))


def _watch_list(args: ToolArguments) -> Result:
    found = watch.watch_list()
    return {
        "watchers": [_summary(w) for w in found],
        "total": len(found),
        "running": sum(1 for w in found if w.get("status") == "running"),
    }


def _watch_history(args: ToolArguments) -> Result:
    watcher_id = args.text("watcher_id")
    history = _known(watch.watch_history, watcher_id, args.integer("last_n"))
    return {"watcher_id": watcher_id, "history": _plain(history)}


def _send_notification(args: ToolArguments) -> Result:
    delivery = send_notification(
        args.text("channel"),
        args.text("message"),
        title=args.optional_text("title") or "",
        priority=args.text("priority"),
        tags=args.texts("tags"),
        structured_data=args.mapping("structured_data"),
        output_config=args.mapping("output_config"),
    )
    return dict(_plain(delivery))


WATCH_TOOLS: tuple[Tool, ...] = (
    WATCH_START.bound(_watch_start),
    WATCH_STOP.bound(_watch_stop),
    WATCH_PAUSE.bound(_watch_pause),
    WATCH_RESUME.bound(_watch_resume),
    WATCH_STATUS.bound(_watch_status),
    WATCH_LIST.bound(_watch_list),
    WATCH_HISTORY.bound(_watch_history),
    SEND_NOTIFICATION.bound(_send_notification),
)
