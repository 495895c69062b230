"""Agent tools for watchers and notifications (``kernel/watchers/watch.py``).

``watch_start``, ``watch_stop``, ``watch_pause``, ``watch_resume``, ``watch_status``,
``watch_list``, ``watch_history`` and ``send_notification``, in the shape of ``toolspec.Tool``
so that ``agent.tool_specs`` and ``agent.dispatch`` serve them with the rest.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

from jupyter_recall.client.records import WatcherRecord
from jupyter_recall.client.tool_answers import (
    DeliveryAnswer,
    WatcherAnswer,
    WatcherHistory,
    WatcherStopped,
)
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
from jupyter_recall.client.toolspec import Tool, ToolArguments
from jupyter_recall.core.errors import NotFoundError, ValidationError
from jupyter_recall.kernel.agent.answers import (
    WatchAnswer,
    WatcherListing,
    WatcherStarted,
    WatcherSummary,
    WatcherSummaryAnswer,
)
from jupyter_recall.kernel.connection.send import send_notification
from jupyter_recall.kernel.watchers import watch

T = TypeVar("T")


def _plain(value: T) -> T:
    """JSON-safe, what JSON cannot hold as its ``str`` (the shape stays)."""
    plain: T = json.loads(json.dumps(value, default=str))
    return plain


def _summary(watcher: WatcherRecord) -> WatcherSummary:
    document = watcher.to_dict()
    return {
        "watcher_id": document.get("watcher_id"),
        "tool_name": document.get("tool_name"),
        "label": document.get("label"),
        "status": document.get("status"),
        "interval": document.get("interval"),
        "notify_when": document.get("notify_when"),
        "checks": document.get("checks"),
        "notifications": document.get("notifications"),
        "last_check_at": document.get("last_check_at"),
        "next_check_at": document.get("next_check_at"),
    }


def _summary_answer(args: ToolArguments, watcher: WatcherRecord) -> WatcherSummaryAnswer:
    return {**args.succeeded(), **_summary(watcher)}


def _known(call: Callable[..., T], watcher_id: str, *args: Any) -> T:
    try:
        return call(watcher_id, *args)
    except NotFoundError:
        raise ValidationError("watcher_id", f"no watcher {watcher_id!r} (see watch_list)") from None


def _watch_start(args: ToolArguments) -> WatcherStarted:
    created = watch.watch_start(
        args.text("name"),
        args.mapping("params"),
        interval=args.integer("interval"),
        label=args.optional_text("label") or "",
        notify_when=args.text("notify_when"),
        notify_config=args.mapping("notify_config"),
        output_channel=args.optional_text("output_channel"),
        output_config=args.mapping("output_config"),
    )
    return {**_summary_answer(args, created), "hint": created.to_dict().get("hint")}


def _watch_stop(args: ToolArguments) -> WatcherStopped:
    watcher_id = args.text("watcher_id")
    _known(watch.watch_stop, watcher_id)
    return {**args.succeeded(), "watcher_id": watcher_id, "status": "stopped"}


def _watch_pause(args: ToolArguments) -> WatcherSummaryAnswer:
    return _summary_answer(args, _known(watch.watch_pause, args.text("watcher_id")))


def _watch_resume(args: ToolArguments) -> WatcherSummaryAnswer:
    return _summary_answer(args, _known(watch.watch_resume, args.text("watcher_id")))


def _watch_status(args: ToolArguments) -> WatcherAnswer:
    current = _known(watch.watch_status, args.text("watcher_id"))
    return {**args.succeeded(), **_plain(current.to_dict())}


def _watch_list(args: ToolArguments) -> WatcherListing:
    found = watch.watch_list()
    return {
        **args.succeeded(),
        "watchers": [_summary(w) for w in found],
        "total": len(found),
        "running": sum(1 for w in found if w.get("status") == "running"),
    }


def _watch_history(args: ToolArguments) -> WatcherHistory:
    watcher_id = args.text("watcher_id")
    history = _known(watch.watch_history, watcher_id, args.integer("last_n"))
    return {**args.succeeded(), "watcher_id": watcher_id, "history": _plain(history)}


def _send_notification(args: ToolArguments) -> DeliveryAnswer:
    delivery = send_notification(
        args.text("channel"),
        args.text("message"),
        title=args.optional_text("title") or "",
        priority=args.text("priority"),
        tags=args.texts("tags"),
        structured_data=args.mapping("structured_data"),
        output_config=args.mapping("output_config"),
    )
    return {**args.succeeded(), **_plain(delivery)}


WATCH_TOOLS: tuple[Tool[WatchAnswer], ...] = (
    WATCH_START.bound(_watch_start),
    WATCH_STOP.bound(_watch_stop),
    WATCH_PAUSE.bound(_watch_pause),
    WATCH_RESUME.bound(_watch_resume),
    WATCH_STATUS.bound(_watch_status),
    WATCH_LIST.bound(_watch_list),
    WATCH_HISTORY.bound(_watch_history),
    SEND_NOTIFICATION.bound(_send_notification),
)
