"""Agent tools for tool calls at once and in the background (``kernel/calls/primitives.py``).

``run_parallel``, ``background_run``, ``background_status``, ``background_result``,
``background_cancel``, ``background_list``, ``background_wait``: specifications in the shape of
``toolspec.Tool`` so that ``agent.tool_specs`` and ``agent.dispatch`` serve them with the rest.
"""

from __future__ import annotations

import json
from typing import Any

from jupyter_recall.client.toolspec import (
    TOOL_NAME_PATTERN,
    ArrayParam,
    NumberParam,
    Param,
    ParamSchema,
    Result,
    Tool,
    ToolArguments,
)
from jupyter_recall.core.errors import NotFoundError, ValidationError
from jupyter_recall.kernel.calls import primitives
from jupyter_recall.tools.background import MAX_WAIT, STATUSES, TaskSummary
from jupyter_recall.tools.parallel import MAX_ACTIONS


def _plain(value: Any) -> Any:
    """JSON-safe: a user tool may return anything; the agent gets JSON."""
    return json.loads(json.dumps(value, default=repr))


def _summary(task: TaskSummary) -> Result:
    # ``tool`` in a dispatch answer names the agent tool; the task's tool is ``tool_name``.
    shown = {key: value for key, value in task.items() if key != "tool"}
    return dict(_plain({"tool_name": task["tool"], **shown}))


def _task(call: Any, task_id: str, *args: Any) -> Any:
    try:
        return call(task_id, *args)
    except NotFoundError:
        raise ValidationError(
            "task_id", f"no background task {task_id!r} in this kernel (see background_list)"
        ) from None


def _run_parallel(args: ToolArguments) -> Result:
    results = primitives.run_parallel(args.items("actions"), limits=args.mapping("limits"))
    succeeded = sum(1 for result in results if result.get("success"))
    return {
        "results": _plain(results),
        "succeeded": succeeded,
        "failed": len(results) - succeeded,
    }


def _background_run(args: ToolArguments) -> Result:
    task_id = primitives.background_run(args.text("name"), args.mapping("params"))
    return _summary(primitives.background_status(task_id))


def _background_status(args: ToolArguments) -> Result:
    return _summary(_task(primitives.background_status, args.text("task_id")))


def _background_result(args: ToolArguments) -> Result:
    return _summary(_task(primitives.background_result, args.text("task_id")))


def _background_cancel(args: ToolArguments) -> Result:
    return _summary(_task(primitives.background_cancel, args.text("task_id")))


def _background_list(args: ToolArguments) -> Result:
    tasks = primitives.background_list(args.optional_text("status"))
    return {"tasks": [_summary(task) for task in tasks], "total": len(tasks)}


def _background_wait(args: ToolArguments) -> Result:
    task_id, timeout = args.optional_text("task_id"), args.number("timeout")
    if task_id is None:
        waited = primitives.background_wait(None, timeout)
        return {
            "tasks": [_summary(task) for task in waited["tasks"]],
            "timed_out": waited["timed_out"],
        }
    return _summary(_task(primitives.background_wait, task_id, timeout))


_TASK_ID = Param("task_id", "string", "The id background_run returned.", True)
_ACTION_ITEMS: ParamSchema = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "module.action, e.g. http.get"},
        "params": {"type": "object"},
    },
    "required": ["name"],
}

PRIMITIVE_TOOLS: tuple[Tool, ...] = (
    Tool(
        "run_parallel",
        f"Run 1 to {MAX_ACTIONS} tool calls (filesystem.read|write|list, http.get|post|download, "
        "shell.run, or tools registered in the kernel) at the same time and return every "
        "result in input order: {index, name, success, data | error}. One failure does not "
        "stop the others; the total time is about the slowest call's.",
        (
            ArrayParam(
                "actions",
                "array",
                "The calls: [{name: 'http.get', params: {url: ...}}, ...].",
                True,
                min_items=1,
                max_items=MAX_ACTIONS,
                items=_ACTION_ITEMS,
            ),
            Param("limits", "object", "Concurrent calls per module, e.g. {http: 5, shell: 2}."),
        ),
        _run_parallel,
    ),
    Tool(
        "background_run",
        "Start one tool call in the background and return its task_id at once. When it ends "
        "you get a '[BACKGROUND TASK COMPLETED]' (or FAILED) notification with the result; "
        "or ask background_status / background_result / background_wait.",
        (
            Param("name", "string", "The tool, module.action.", True, pattern=TOOL_NAME_PATTERN),
            Param("params", "object", "The tool's parameters."),
        ),
        _background_run,
    ),
    Tool(
        "background_status",
        "Status of a background task: running, succeeded, failed or cancelled, and elapsed time.",
        (_TASK_ID,),
        _background_status,
    ),
    Tool(
        "background_result",
        "The full result of a background task (null while it runs).",
        (_TASK_ID,),
        _background_result,
    ),
    Tool(
        "background_cancel",
        "Cancel a running background task (a running command is killed).",
        (_TASK_ID,),
        _background_cancel,
    ),
    Tool(
        "background_list",
        "List the background tasks of this kernel, optionally only those with a status.",
        (Param("status", "string", "Only tasks with this status.", enum=STATUSES),),
        _background_list,
    ),
    Tool(
        "background_wait",
        "Wait until a background task ends (or, without task_id, every running one), at most "
        "timeout seconds; timed_out tells whether it ended in time.",
        (
            Param("task_id", "string", "The task to wait for (default: every running task)."),
            NumberParam(
                "timeout",
                "number",
                f"Seconds to wait, 0 to {MAX_WAIT:g}.",
                minimum=0,
                maximum=MAX_WAIT,
                default=60,
            ),
        ),
        _background_wait,
    ),
)
