"""Agent tools for tool calls at once and in the background (``kernel/calls/primitives.py``).

``run_parallel``, ``background_run``, ``background_status``, ``background_result``,
``background_cancel``, ``background_list``, ``background_wait``: specifications in the shape of
``toolspec.Tool`` so that ``agent.tool_specs`` and ``agent.dispatch`` serve them with the rest.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

from jupyter_recall.client.toolspec import (
    TOOL_NAME_PATTERN,
    ArrayParam,
    NumberParam,
    Param,
    ParamSchema,
    Tool,
    ToolArguments,
)
from jupyter_recall.core.errors import NotFoundError, ValidationError
from jupyter_recall.kernel.agent.answers import (
    CallAnswer,
    ParallelAnswer,
    TaskAnswer,
    TaskListing,
    TaskResultAnswer,
    TaskShown,
    TasksWaitedAnswer,
    TaskWaitedAnswer,
)
from jupyter_recall.kernel.calls import primitives
from jupyter_recall.tools.background import MAX_WAIT, STATUSES, TaskSummary
from jupyter_recall.tools.parallel import MAX_ACTIONS

T = TypeVar("T")


def _plain(value: T) -> T:
    """JSON-safe: a user tool may return anything; the agent gets JSON (what JSON cannot hold
    becomes its ``repr``, the shape stays)."""
    plain: T = json.loads(json.dumps(value, default=repr))
    return plain


def _shown(task: TaskSummary) -> TaskShown:
    shown: TaskShown = {
        "tool_name": task["tool"],
        "task_id": task["task_id"],
        "params": task["params"],
        "status": task["status"],
        "started_at": task["started_at"],
        "finished_at": task["finished_at"],
        "elapsed": task["elapsed"],
    }
    return _plain(shown)


def _task(call: Callable[..., T], task_id: str, *args: Any) -> T:
    try:
        return call(task_id, *args)
    except NotFoundError:
        raise ValidationError(
            "task_id", f"no background task {task_id!r} in this kernel (see background_list)"
        ) from None


def _run_parallel(args: ToolArguments) -> ParallelAnswer:
    results = primitives.run_parallel(args.items("actions"), limits=args.mapping("limits"))
    succeeded = sum(1 for result in results if result.get("success"))
    return {
        **args.succeeded(),
        "results": _plain(results),
        "succeeded": succeeded,
        "failed": len(results) - succeeded,
    }


def _answer(args: ToolArguments, task: TaskSummary) -> TaskAnswer:
    return {**args.succeeded(), **_shown(task)}


def _background_run(args: ToolArguments) -> TaskAnswer:
    task_id = primitives.background_run(args.text("name"), args.mapping("params"))
    return _answer(args, primitives.background_status(task_id))


def _background_status(args: ToolArguments) -> TaskAnswer:
    return _answer(args, _task(primitives.background_status, args.text("task_id")))


def _background_result(args: ToolArguments) -> TaskResultAnswer:
    task = _task(primitives.background_result, args.text("task_id"))
    return {**_answer(args, task), "result": _plain(task["result"])}


def _background_cancel(args: ToolArguments) -> TaskAnswer:
    return _answer(args, _task(primitives.background_cancel, args.text("task_id")))


def _background_list(args: ToolArguments) -> TaskListing:
    tasks = primitives.background_list(args.optional_text("status"))
    return {**args.succeeded(), "tasks": [_shown(task) for task in tasks], "total": len(tasks)}


def _background_wait(args: ToolArguments) -> TaskWaitedAnswer | TasksWaitedAnswer:
    task_id, timeout = args.optional_text("task_id"), args.number("timeout")
    if task_id is None:
        waited = primitives.background_wait(None, timeout)
        return {
            **args.succeeded(),
            "tasks": [_shown(task) for task in waited["tasks"]],
            "timed_out": waited["timed_out"],
        }
    task = _task(primitives.background_wait, task_id, timeout)
    result = _plain(task["result"])
    return {**_answer(args, task), "result": result, "timed_out": task["timed_out"]}


_TASK_ID = Param("task_id", "string", "The id background_run returned.", True)
_ACTION_ITEMS: ParamSchema = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "module.action, e.g. http.get"},
        "params": {"type": "object"},
    },
    "required": ["name"],
}

PRIMITIVE_TOOLS: tuple[Tool[CallAnswer], ...] = (
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
