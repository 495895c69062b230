"""Tools, ``run_parallel`` and background tasks in the kernel: ``tools/`` wired to the kernel.

- Tool calls run through one ``ToolRunner`` over the process's registry (built-ins and
  ``@jupyter_recall.tool`` functions), with paths under the kernel's cwd.
- Policies: the server's (``GET /api/recall/tools``, cached ``SERVER_POLICY_TTL`` seconds) and
  this kernel's (``set_tool_policy``); the stricter wins. No reachable server: the kernel's only.
- ``approve`` asks in the notebook (``approval_prompt.py``) and through ``approvals``.
- Sync entry points (a cell) run on a private event loop in a daemon thread and wait for it;
  ``*_async`` ones run on the caller's loop. Background tasks live on the private loop, so they
  go on while the kernel is idle; each one's end is a notification and updates the output of
  the cell that started it.
"""

from __future__ import annotations

import asyncio
import atexit
import contextvars
import logging
import os
import sys
import threading
import time
from collections.abc import Coroutine, Mapping
from typing import Any, TypedDict, TypeVar, overload

from jupyter_recall.core.errors import RecallError, ValidationError
from jupyter_recall.kernel import widgets
from jupyter_recall.kernel.calls import approval_prompt
from jupyter_recall.kernel.calls.approval_inbox import KernelApprovals
from jupyter_recall.kernel.calls.tool_cards import BackgroundCard, ParallelCard
from jupyter_recall.kernel.connection import client as _client
from jupyter_recall.kernel.connection import notifications
from jupyter_recall.kernel.connection.send import send_notification
from jupyter_recall.tools import (
    PolicyLayer,
    ToolResult,
    ToolRunner,
    default_registry,
    failed,
    tool,
)
from jupyter_recall.tools.background import (
    DEFAULT_WAIT,
    BackgroundTask,
    BackgroundTasks,
    TaskSummary,
    TasksWaited,
    TaskWaited,
    TaskWithResult,
    ToolCall,
    notification_text,
)
from jupyter_recall.tools.loop import LoopThread
from jupyter_recall.tools.parallel import (
    Action,
    ConcurrencyLimits,
    DoneCallback,
    check_actions,
    run_actions,
)
from jupyter_recall.tools.policy import BLOCK, check_key, check_policies, check_policy

_log = logging.getLogger("jupyter_recall.kernel")

__all__ = [
    "approvals",
    "background_cancel",
    "background_list",
    "background_result",
    "background_run",
    "background_status",
    "background_wait",
    "check_call",
    "checked_params",
    "kernel_runner",
    "refresh_tool_policies",
    "run_parallel",
    "run_parallel_async",
    "run_tool",
    "run_tool_async",
    "run_unattended",
    "run_unattended_sync",
    "set_concurrency_limits",
    "set_tool_policy",
    "tool",
    "tool_policies",
    "tool_policy",
]

T = TypeVar("T")

SERVER_POLICY_TTL = 30.0
"""Seconds the server's policies are reused before they are asked again."""
SERVER_POLICY_TIMEOUT = 5.0
SERVER_LABEL = "server config RecallApp.tool_policies"
KERNEL_LABEL = "kernel setting jupyter_recall.set_tool_policy({key}, ...)"

approvals = KernelApprovals()
"""Approval requests: ``approvals.pending()``, ``approvals.answer(request_id, True)``,
``approvals.record(request_id)`` (the server inbox's record: who decided, when),
``approvals.timeout = 120`` (seconds; a request not answered in time is refused)."""


class _State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.kernel_policies: dict[str, str] = {}
        self.server_layer: PolicyLayer | None = None
        self.server_fetched: float | None = None
        self.limits = ConcurrencyLimits()
        self.loop = LoopThread()
        self.runner: ToolRunner | None = None
        self.background: BackgroundTasks | None = None
        self.exit_hook = False


_state = _State()


# --- policies ---------------------------------------------------------------------------------


def _fetch_server_layer() -> PolicyLayer | None:
    try:
        body = _client.get_client().request(
            "GET", "/api/recall/tools", timeout=SERVER_POLICY_TIMEOUT
        )
        return PolicyLayer(SERVER_LABEL, check_policies(body.get("policies") or {}, "policies"))
    except (RecallError, AttributeError):
        # No server (or one without the route): the kernel's own policies apply alone.
        return None


def _stale() -> bool:
    with _state.lock:
        fetched = _state.server_fetched
    return fetched is None or time.monotonic() - fetched >= SERVER_POLICY_TTL


def _server_layer(*, refresh: bool = False) -> PolicyLayer | None:
    """The server's policies, asked again when stale (a blocking HTTP call: never on a loop)."""
    if refresh or _stale():
        layer = _fetch_server_layer()
        with _state.lock:
            _state.server_layer, _state.server_fetched = layer, time.monotonic()
    with _state.lock:
        return _state.server_layer


async def _server_layer_async() -> None:
    if _stale():
        await asyncio.get_running_loop().run_in_executor(None, _server_layer)


def _layers() -> list[PolicyLayer]:
    # Read at every call from the loop: what the entry points fetched, never a fetch itself.
    with _state.lock:
        server = _state.server_layer
        kernel = PolicyLayer(KERNEL_LABEL, dict(_state.kernel_policies))
    return [server, kernel] if server is not None else [kernel]


def set_tool_policy(name: str, policy: str | None) -> None:
    """This kernel's policy for a tool (``shell.run``), a module (``shell``) or every tool
    (``*``): ``auto``, ``approve`` or ``block``; ``None`` removes it. The server's policy still
    applies when it is stricter."""
    key = check_key(name, "name")
    with _state.lock:
        if policy is None:
            _state.kernel_policies.pop(key, None)
        else:
            _state.kernel_policies[key] = check_policy(policy)


class ToolPolicies(TypedDict):
    """The tool policies in force, by layer: the server's (None: no server) and the kernel's."""

    server: dict[str, str] | None
    kernel: dict[str, str]


def tool_policies() -> ToolPolicies:
    """The policies in force: ``{"server": {...} or None (no server), "kernel": {...}}``."""
    server = _server_layer()
    with _state.lock:
        kernel = dict(_state.kernel_policies)
    return {"server": dict(server.policies) if server else None, "kernel": kernel}


def tool_policy(name: str) -> dict[str, str]:
    """The policy that applies to ``name`` now and where it comes from."""
    _server_layer()
    decision = _runner().decision(_runner().registry.get(name).name)
    return {"tool": decision.name, "policy": decision.policy, "source": decision.source}


def refresh_tool_policies() -> ToolPolicies:
    """Ask the server for its policies now (they are otherwise reused for 30 s)."""
    _server_layer(refresh=True)
    return tool_policies()


# --- running tools ----------------------------------------------------------------------------


def _runner() -> ToolRunner:
    with _state.lock:
        if _state.runner is None:
            approval_prompt.install(approvals)
            _state.runner = ToolRunner(
                default_registry(), root=os.getcwd, policies=_layers, approvals=approvals
            )
            _register_exit_hook()
        return _state.runner


def _register_exit_hook() -> None:
    if not _state.exit_hook:
        _state.exit_hook = True
        atexit.register(shutdown)


def shutdown() -> None:
    """Cancel background tasks and stop the private loop (at kernel exit)."""
    background = _state.background
    if background is not None:
        background.cancel_all()
    _state.loop.stop()
    runner = _state.runner
    if runner is not None:
        runner.close()


def checked_params(params: object, field_name: str = "params") -> Mapping[str, Any]:
    """``params`` as a dict; a ValidationError naming ``field_name`` unless it is a mapping (or
    None): ``dict()`` of a list or a string fails with a bare TypeError or ValueError."""
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        raise ValidationError(
            field_name, f"must be an object (a dict of arguments), got {type(params).__name__}"
        )
    return dict(params)


def check_call(name: str, params: object) -> None:
    """The params of a call of ``name``, checked now as ``run_tool`` checks them (a mapping that
    fits the tool's signature): a ValidationError naming ``params``. A tool this kernel does
    not know is left to whoever runs it (the server knows its own)."""
    checked = checked_params(params)
    runner = _runner()
    if name in runner.registry:
        runner.registry.get(name).bind(runner.context(), checked)


def _merge(params: Mapping[str, Any] | None, keywords: dict[str, Any]) -> dict[str, Any]:
    return {**checked_params(params), **keywords}


async def run_tool_async(
    name: str, params: Mapping[str, Any] | None = None, /, **keywords: Any
) -> ToolResult:
    """Run one tool on the caller's event loop: ``{"success", "data" | "error"}``."""
    try:
        merged = _merge(params, keywords)
    except ValidationError as error:
        return failed(str(error))  # run_tool never raises: its answer says what is wrong
    await _server_layer_async()
    return await _runner().run_tool(name, merged)


async def run_unattended(
    name: str, params: Mapping[str, Any] | None = None, *, caller: str = "this caller"
) -> ToolResult:
    """A call nobody can approve (a watcher): ``approve`` tools are refused, naming ``caller``;
    ``block`` and ``auto`` apply as for any call."""
    await _server_layer_async()
    return await _runner().run_tool(
        name,
        dict(params or {}),
        allow_approval=False,
        denial_reason=f"{caller} cannot ask for approval (set the policy to auto to allow it)",
    )


def run_unattended_sync(
    name: str, params: Mapping[str, Any] | None = None, *, caller: str = "this caller"
) -> ToolResult:
    """``run_unattended`` from a cell's thread (a heartbeat's beat), waiting for its result."""
    return _wait(run_unattended(name, params, caller=caller))


def kernel_runner() -> ToolRunner:
    """The kernel's ``ToolRunner`` (cwd root, server and kernel policies, notebook approvals)."""
    return _runner()


def run_tool(name: str, params: Mapping[str, Any] | None = None, /, **keywords: Any) -> ToolResult:
    """Run one tool and wait for its result (from a cell): ``run_tool("http.get", url=...)``
    or ``run_tool("http.get", {"url": ..., "params": {...}})``."""
    return _wait(run_tool_async(name, params, **keywords))


def _refuse_on_the_loop() -> None:
    if _state.loop.in_loop_thread():
        raise RuntimeError(
            "this runs on the jupyter_recall loop: use the *_async function "
            "(await jupyter_recall.run_parallel_async(...))"
        )


def _wait(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run on the private loop and wait (a cell): approvals are asked on the cell's stdin; an
    interrupt of the cell cancels the work."""

    if _state.loop.in_loop_thread():
        coroutine.close()
        _refuse_on_the_loop()
    _server_layer()  # here, in the caller's thread, not on the loop
    context = contextvars.copy_context()
    context.run(approval_prompt.waiting_cell.set, True)
    future = _state.loop.submit(coroutine, context)
    try:
        return approval_prompt.wait(future, approvals)
    except BaseException:
        future.cancel()
        raise


def set_concurrency_limits(limits: Mapping[str, int]) -> dict[str, int]:
    """Per-module limits of concurrent calls, e.g. ``{"http": 10, "shell": 4}`` (the
    default); modules not named are not limited."""
    _state.limits.set(limits)
    return _state.limits.limits


def _chosen_limits(limits: Mapping[str, int] | None) -> ConcurrencyLimits:
    return ConcurrencyLimits(limits) if limits is not None else _state.limits


async def _run_checked(
    runner: ToolRunner,
    checked: list[Action],
    chosen: ConcurrencyLimits,
    on_done: DoneCallback | None = None,
) -> list[ToolResult]:
    await _server_layer_async()
    return await run_actions(runner, checked, chosen, on_done=on_done)


async def run_parallel_async(
    actions: Any, *, limits: Mapping[str, int] | None = None
) -> list[ToolResult]:
    """``run_parallel`` on the caller's event loop (``await`` it in an async cell or tool)."""
    runner = _runner()
    checked = check_actions(actions, runner.registry)
    return await _run_checked(runner, checked, _chosen_limits(limits))


def run_parallel(actions: Any, *, limits: Mapping[str, int] | None = None) -> list[ToolResult]:
    """Run 1 to 50 tool calls (``[{"name": "http.get", "params": {...}}, ...]``) at once and
    return their results in input order: ``{index, name, success, data | error}``. One failure
    never cancels the others. ``limits`` replaces the per-module limits for this call. In a
    notebook with ipywidgets, a progress card shows each action as it ends."""

    runner = _runner()
    # All refused here, before any thread hop and before the progress card shows a run that
    # will not happen.
    checked = check_actions(actions, runner.registry)
    chosen = _chosen_limits(limits)
    _refuse_on_the_loop()
    if not widgets.available():
        return _wait(_run_checked(runner, checked, chosen))

    card = ParallelCard(checked)
    results: list[ToolResult] | None = None
    try:
        results = _wait(_run_checked(runner, checked, chosen, card.done))
        return results
    finally:
        card.finish(results)


# --- background tasks -------------------------------------------------------------------------


def _limited(runner: ToolRunner) -> ToolCall:
    """Background calls take a slot of their module's limit, like run_parallel's calls."""

    async def call(name: str, params: dict[str, Any]) -> ToolResult:
        async with _state.limits.slot(name.partition(".")[0]):
            return await runner.run_tool(name, params)

    return call


def _tasks() -> BackgroundTasks:
    runner = _runner()
    with _state.lock:
        if _state.background is None:
            background = BackgroundTasks(_state.loop, _limited(runner))
            background.on_finished.append(_notify_finished)
            _state.background = background
        return _state.background


_shown_lock = threading.Lock()
_shown: dict[str, tuple[Any, contextvars.Context]] = {}
"""Where each task's end is shown: a card or a text display in the cell that started it, and
that cell's context."""


def _ipython_kernel() -> Any:
    if "IPython" not in sys.modules:
        return None
    from IPython import get_ipython

    shell = get_ipython()
    return shell if shell is not None and getattr(shell, "kernel", None) is not None else None


def _bundle(text: str) -> dict[str, str]:
    import html

    return {"text/plain": text, "text/html": f"<pre>{html.escape(text)}</pre>"}


def _show_started(task: BackgroundTask) -> None:
    if _ipython_kernel() is None:
        return
    text = f"[BACKGROUND TASK STARTED] task_id={task.task_id}, tool={task.name}"
    shown: Any
    if widgets.available():
        shown = BackgroundCard(task, lambda: background_cancel(task.task_id), text)
    else:
        shown = approval_prompt.display(_bundle(text), raw=True, display_id=True)
    with _shown_lock:
        _shown[task.task_id] = (shown, contextvars.copy_context())


def _show_finished(task: BackgroundTask, text: str) -> None:
    with _shown_lock:
        shown = _shown.pop(task.task_id, None)
    if shown is None:
        return
    target, context = shown
    # In the starting cell's context: a display update carries that cell's parent message.
    if isinstance(target, BackgroundCard):
        context.run(target.finish, task, text)
    else:
        context.run(target.update, _bundle(text), raw=True)


def _notify_finished(task: BackgroundTask) -> None:
    elapsed = task.elapsed_shown  # one value for the field and the text
    text = notification_text(task, elapsed=elapsed)
    notifications.push(
        {
            "type": "background",
            "task_id": task.task_id,
            "tool": task.name,
            "status": task.status,
            "success": bool(task.result and task.result.get("success")),
            "elapsed": elapsed,
            "text": text,
        }
    )
    _show_finished(task, text)
    _tell_the_ui(task, text)


def _tell_the_ui(task: BackgroundTask, text: str) -> None:
    """The user's JupyterLab hears of the end too (a toast): a ``ui`` notification, sent from a
    thread of its own so that neither the private loop nor a cell waits on the server. Only
    from a kernel: anywhere else there is no notebook UI to tell."""
    if _ipython_kernel() is None:
        return
    threading.Thread(
        target=_send_ui_notification, args=(task, text), name="recall-background-ui", daemon=True
    ).start()


def _send_ui_notification(task: BackgroundTask, text: str) -> None:
    try:
        send_notification(
            "ui",
            text,
            title=f"Background task {task.name} {task.status}",
            priority="high" if task.status == "failed" else "normal",
            tags=["background", task.status],
            structured_data={
                "task_id": task.task_id,
                "tool": task.name,
                "status": task.status,
                "elapsed": task.elapsed_shown,
            },
        )
    except (RecallError, OSError, ValueError) as error:
        # The task's own notification and cell output are what count; the toast is a courtesy.
        _log.debug("background task %s: the UI was not told: %s", task.task_id, error)


def background_run(name: str, params: Mapping[str, Any] | None = None) -> str:
    """Start a tool call in the background; its task id. Its end is queued as a notification
    (``jupyter_recall.notifications``) and shown in this cell's output: a progress card with a
    Cancel button when ipywidgets is there, a text line otherwise. Unknown tools, bad params
    and a ``block`` policy are refused here (a ``RecallError``), not in a task."""
    runner = _runner()
    found = runner.registry.get(name)
    checked = checked_params(params)
    found.bind(runner.context(), checked)  # bad params are refused now, not in the task
    _server_layer()
    decision = runner.decision(found.name)
    if decision.policy == BLOCK:
        # run_tool's own refusal, raised now rather than as a task that can only fail.
        raise RecallError(decision.refusal())
    task = _tasks().start(found.name, checked, before=_show_started)
    return task.task_id


def background_status(task_id: str) -> TaskSummary:
    """``{task_id, tool, params, status, started_at, finished_at, elapsed}``; status is
    running, succeeded, failed or cancelled."""
    return _tasks().get(task_id).summary()


def background_result(task_id: str) -> TaskWithResult:
    """The status and the full ``result`` (None while running)."""
    return _tasks().get(task_id).with_result()


def background_cancel(task_id: str) -> TaskSummary:
    """Cancel a running task (a shell command is killed); a finished one is left as is."""
    return _tasks().cancel(task_id).summary()


def background_list(status: str | None = None) -> list[TaskSummary]:
    """Every task of this kernel (or those with ``status``), oldest first."""
    return [task.summary() for task in _tasks().list(status)]


@overload
def background_wait(task_id: str, timeout: float = DEFAULT_WAIT) -> TaskWaited: ...


@overload
def background_wait(task_id: None = None, timeout: float = DEFAULT_WAIT) -> TasksWaited: ...


def background_wait(
    task_id: str | None = None, timeout: float = DEFAULT_WAIT
) -> TaskWaited | TasksWaited:
    """Wait up to ``timeout`` seconds (at most 3600) for the task (its status and result), or
    without an id for every running task; ``timed_out`` says whether they were done in time."""
    return _tasks().wait(task_id, timeout)
