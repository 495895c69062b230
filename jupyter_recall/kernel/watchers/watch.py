"""Watchers from a notebook: ``watch_start`` and friends (``connection/send.py`` sends).

A watcher checks a tool every ``interval`` seconds on the server and notifies this session only
when its strategy says so (``on_change``, ``on_error``, ``on_threshold``, ``summary``,
``always``); the notifications arrive in this kernel's queue (``jupyter_recall.notifications``,
``type: "watcher"``). Built-in tools are checked on the server; a tool registered in this kernel
(``@jupyter_recall.tool``) is checked in this kernel, while it is alive. Watchers are kept by
the server: they go on across kernel and server restarts until ``watch_stop``.

Every call is a REST request to the server; domain errors come back as ``ValidationError``,
``NotFoundError``, ... with the server's message.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

from jupyter_recall.client.documents import NewWatcherDocument, TargetDocument, WatcherCheckDocument
from jupyter_recall.client.ids import JOB_ID
from jupyter_recall.client.records import WatcherRecord
from jupyter_recall.core.documents import output_config_of
from jupyter_recall.core.errors import NotFoundError, ValidationError
from jupyter_recall.core.escalation import notify_config_of, parse_escalation
from jupyter_recall.kernel.calls import primitives
from jupyter_recall.kernel.connection import client as _client
from jupyter_recall.kernel.connection import notifications
from jupyter_recall.tools import ToolResult, default_registry

DEFAULT_INTERVAL = 30
DEFAULT_HISTORY = 10
UNATTENDED = ("auto",)
RESULT_MARKER = "@@jupyter_recall-watch-result@@ "
"""Kept equal to ``server/watchers.py``: the line a kernel check prints its result on."""

__all__ = [
    "Watcher",
    "run_check",
    "watch_history",
    "watch_list",
    "watch_pause",
    "watch_resume",
    "watch_start",
    "watch_status",
    "watch_stop",
]


def _request(method: str, watcher_id: object, suffix: str = "", **kwargs: Any) -> Any:
    """A request on one watcher; an unknown id is a ``NotFoundError`` naming the watcher (the
    server looks watchers up as jobs and says "job ... not found")."""

    if not isinstance(watcher_id, str) or not JOB_ID.match(watcher_id):
        raise ValidationError(
            "watcher_id", f"not a watcher id: {watcher_id!r} (ids look like '3f9c2a1b7d0e')"
        )
    path = f"/api/recall/watchers/{watcher_id}{suffix}"
    try:
        return _client.get_client().request(method, path, **kwargs)
    except NotFoundError:
        raise NotFoundError("watcher", watcher_id) from None


class Watcher(WatcherRecord):
    """A watcher (its typed fields: ``client/records.py``), with its actions."""

    __slots__ = ()

    def __repr__(self) -> str:
        return (
            f"<Watcher {self.id} {self.label or self.tool_name!r} every {self.interval}s, "
            f"{self.notify_when}, {self.status}, {self.checks} checks, "
            f"{self.notifications} notifications>"
        )

    def stop(self) -> None:
        """Stop the watcher for good; its state and history are deleted."""
        watch_stop(self.id)

    def pause(self) -> Watcher:
        """Stop checking; the state and history are kept."""
        return watch_pause(self.id)

    def resume(self) -> Watcher:
        """Check again from now on."""
        return watch_resume(self.id)

    def refresh(self, last_n: int = DEFAULT_HISTORY) -> Watcher:
        """The watcher as it is now, with its ``last_n`` latest checks (``history``)."""
        return watch_status(self.id, last_n=last_n)

    def history(self, last_n: int = DEFAULT_HISTORY) -> list[WatcherCheckDocument]:
        """The ``last_n`` (1 to 100) latest checks, newest first."""
        return watch_history(self.id, last_n=last_n)


# --- where a check runs, and whether it may run unattended ----------------------------------------


def _user_tool(name: str) -> bool:
    """Whether ``name`` is a tool registered in this kernel (not a built-in)."""

    registry = default_registry()
    return name in registry and not registry.get(name).builtin


def _refuse_attended(name: str) -> None:
    decision = primitives.tool_policy(name)
    if decision["policy"] not in UNATTENDED:
        raise ValidationError(
            "name",
            f"{name} cannot be watched: its policy is {decision['policy']!r} "
            f"({decision['source']}) and a watcher runs unattended",
            accepted=UNATTENDED,
        )


def _target(name: str, ident: _client.Identity) -> TargetDocument | None:
    if not _user_tool(name):
        return None  # the server checks its built-in tools itself
    _refuse_attended(name)
    target = ident.target()
    if target is None:
        raise ValidationError(
            "name",
            f"{name} is a tool of this process, which is not a kernel of the Jupyter server: "
            "only built-in tools can be watched from here",
        )
    return target


# --- the API --------------------------------------------------------------------------------------


def watch_start(
    name: str,
    params: Mapping[str, Any] | None = None,
    interval: int = DEFAULT_INTERVAL,
    label: str = "",
    notify_when: str = "on_change",
    *,
    notify_config: Mapping[str, Any] | None = None,
    output_channel: str | None = None,
    output_config: Mapping[str, Any] | None = None,
) -> Watcher:
    """Check the tool ``name`` (``module.action``) with ``params`` every ``interval`` seconds
    (5 to 3600) and notify this session by the ``notify_when`` strategy: ``on_change``
    (default; the first check sets the baseline and notifies), ``on_error`` (errors and
    recoveries), ``on_threshold`` (``notify_config={"expression": "result.status_code !=
    200"}``), ``summary`` (every ``notify_config={"batch_size": 10}`` checks) or ``always``.
    ``output_channel`` sends the notifications to a channel of the server's config instead."""
    if not isinstance(name, str):
        raise ValidationError("name", f"must be a tool name 'module.action', got {name!r}")
    ident = _client.identity()
    body: NewWatcherDocument = {
        "tool": name,
        "params": dict(primitives.checked_params(params)),
        "interval": interval,
        "label": label,
        "notify_when": notify_when,
        "notify_config": notify_config_of(notify_config or {}),
    }
    if ident.session is not None:
        body["session"] = ident.session
    if output_channel is not None:
        body["output_channel"] = output_channel
    if output_config is not None:
        body["output_config"] = output_config_of(output_config)
    # Params that do not fit the tool would fail every check forever: checked now, after the
    # strategy (the server checks that first, and its field is the one to name).
    parse_escalation(notify_when, body["notify_config"])
    primitives.check_call(name, body["params"])
    target = _target(name, ident)
    if target is not None:
        body["target"] = target
    created = _client.get_client().request("POST", "/api/recall/watchers", body=body)

    notifications.start_in_kernel()
    return Watcher(created)


def watch_stop(watcher_id: str) -> None:
    """Stop the watcher for good; its state and history are deleted."""
    _request("DELETE", watcher_id)


def watch_pause(watcher_id: str) -> Watcher:
    """Stop checking; the state and history are kept."""
    return Watcher(_request("POST", watcher_id, "/pause"))


def watch_resume(watcher_id: str) -> Watcher:
    """Check again from now on."""
    return Watcher(_request("POST", watcher_id, "/resume"))


def _last_n(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 100:
        raise ValidationError("last_n", f"must be an integer from 1 to 100, got {value!r}")
    return value


def watch_status(watcher_id: str, last_n: int = DEFAULT_HISTORY) -> Watcher:
    """Counters, configuration, the last result and the ``last_n`` latest checks."""
    query = {"last_n": _last_n(last_n)}
    return Watcher(_request("GET", watcher_id, query=query))


def watch_history(watcher_id: str, last_n: int = DEFAULT_HISTORY) -> list[WatcherCheckDocument]:
    """The ``last_n`` (1 to 100) latest checks, newest first."""
    return list(watch_status(watcher_id, last_n)["history"])


def watch_list(*, all: bool = False) -> list[Watcher]:
    """The watchers of this notebook (``all=True``: every watcher of the user), running first."""
    query = {} if all else {"session": _client.identity().session}
    found = _client.get_client().request("GET", "/api/recall/watchers", query=query)
    return [Watcher(data) for data in found["watchers"]]


# --- checks of user tools, run by the server in this kernel ---------------------------------------


def _check(name: str, params: Any) -> ToolResult:
    if not isinstance(params, Mapping):
        return {"success": False, "error": f"params must be an object, got {params!r}"}
    try:
        _refuse_attended(name)
    except ValidationError as error:
        return {"success": False, "error": str(error)}
    return primitives.run_tool(name, dict(params)).copy()


def run_check(name: str, params_json: str) -> None:
    """One check of a watched user tool: print its result on the line the server reads."""
    try:
        result = _check(name, json.loads(params_json))
    except Exception as error:
        result = {"success": False, "error": f"{type(error).__name__}: {error}"}
    sys.stdout.write(RESULT_MARKER + json.dumps(result, default=str) + "\n")
    sys.stdout.flush()
