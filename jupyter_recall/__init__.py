"""jupyter_recall: make code and agents in Jupyter kernels act later and in the background."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

from jupyter_recall._version import __version__
from jupyter_recall.core.errors import (
    ConflictError,
    NotFoundError,
    ParseError,
    PassedWhilePaused,
    PendingRecallExists,
    RecallError,
    ValidationError,
)
from jupyter_recall.core.when import ScheduleSpec, parse_when

if TYPE_CHECKING:
    from jupyter_server.extension.application import ExtensionApp

    from jupyter_recall.kernel.agent import tools as agent

    # Tools, parallel and background calls (kernel/calls/primitives.py).
    from jupyter_recall.kernel.calls.primitives import (
        approvals,
        background_cancel,
        background_list,
        background_result,
        background_run,
        background_status,
        background_wait,
        refresh_tool_policies,
        run_parallel,
        run_parallel_async,
        run_tool,
        run_tool_async,
        set_concurrency_limits,
        set_tool_policy,
        tool,
        tool_policies,
        tool_policy,
    )
    from jupyter_recall.kernel.connection import notifications
    from jupyter_recall.kernel.connection.client import (
        RecallConnectionError,
        require_server_kernel,
    )

    # Watchers and notifications (kernel/watchers/watch.py).
    from jupyter_recall.kernel.connection.send import send_notification
    from jupyter_recall.kernel.jobs.api import Job, job, jobs, recall, schedule
    from jupyter_recall.kernel.jobs.heartbeat import heartbeat_gate
    from jupyter_recall.kernel.jobs.recall import on_recall
    from jupyter_recall.kernel.jobs.retention import prune_runs
    from jupyter_recall.kernel.watchers.watch import (
        watch_history,
        watch_list,
        watch_pause,
        watch_resume,
        watch_start,
        watch_status,
        watch_stop,
    )

__all__ = [
    "ConflictError",
    "Job",
    "NotFoundError",
    "ParseError",
    "PassedWhilePaused",
    "PendingRecallExists",
    "RecallConnectionError",
    "RecallError",
    "ScheduleSpec",
    "ValidationError",
    "__version__",
    "agent",
    "approvals",
    "background_cancel",
    "background_list",
    "background_result",
    "background_run",
    "background_status",
    "background_wait",
    "heartbeat_gate",
    "job",
    "jobs",
    "load_ipython_extension",
    "notifications",
    "on_recall",
    "parse_when",
    "prune_runs",
    "recall",
    "refresh_tool_policies",
    "require_server_kernel",
    "run_parallel",
    "run_parallel_async",
    "run_tool",
    "run_tool_async",
    "schedule",
    "send_notification",
    "set_concurrency_limits",
    "set_tool_policy",
    "tool",
    "tool_policies",
    "tool_policy",
    "unload_ipython_extension",
    "watch_history",
    "watch_list",
    "watch_pause",
    "watch_resume",
    "watch_start",
    "watch_status",
    "watch_stop",
]

# The kernel API is imported on first use (module __getattr__): `import jupyter_recall` stays
# cheap and never imports IPython or jupyter_server.
_KERNEL_API = {
    "schedule": "jupyter_recall.kernel.jobs.api",
    "recall": "jupyter_recall.kernel.jobs.api",
    "jobs": "jupyter_recall.kernel.jobs.api",
    "job": "jupyter_recall.kernel.jobs.api",
    "Job": "jupyter_recall.kernel.jobs.api",
    "on_recall": "jupyter_recall.kernel.jobs.recall",
    "prune_runs": "jupyter_recall.kernel.jobs.retention",
    "heartbeat_gate": "jupyter_recall.kernel.jobs.heartbeat",
    "RecallConnectionError": "jupyter_recall.kernel.connection.client",
    "require_server_kernel": "jupyter_recall.kernel.connection.client",
}
# Tools, parallel and background calls.
_KERNEL_API.update(
    dict.fromkeys(
        (
            "tool",
            "run_tool",
            "run_tool_async",
            "run_parallel",
            "run_parallel_async",
            "background_run",
            "background_status",
            "background_result",
            "background_cancel",
            "background_list",
            "background_wait",
            "approvals",
            "set_tool_policy",
            "tool_policies",
            "tool_policy",
            "refresh_tool_policies",
            "set_concurrency_limits",
        ),
        "jupyter_recall.kernel.calls.primitives",
    )
)
# Watchers and notifications.
_KERNEL_API.update(
    dict.fromkeys(
        (
            "watch_start",
            "watch_stop",
            "watch_pause",
            "watch_resume",
            "watch_status",
            "watch_list",
            "watch_history",
        ),
        "jupyter_recall.kernel.watchers.watch",
    )
)
_KERNEL_API["send_notification"] = "jupyter_recall.kernel.connection.send"
_KERNEL_MODULES = {
    "agent": "jupyter_recall.kernel.agent.tools",
    "notifications": "jupyter_recall.kernel.connection.notifications",
}


def __dir__() -> list[str]:
    """What the module holds, and the kernel API it resolves on first use (``__all__``): so
    ``dir(jupyter_recall)`` and tab completion list ``schedule``, ``watch_start``, ..."""
    return sorted({*globals(), *__all__})


def __getattr__(name: str) -> Any:
    import importlib

    if name in _KERNEL_API:
        return getattr(importlib.import_module(_KERNEL_API[name]), name)
    if name in _KERNEL_MODULES:
        return importlib.import_module(_KERNEL_MODULES[name])
    raise AttributeError(f"module 'jupyter_recall' has no attribute {name!r}")


def load_ipython_extension(ipython: Any) -> None:
    """`%load_ext jupyter_recall`: the magics, the server connection and notifications."""
    from jupyter_recall.kernel.extension import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext jupyter_recall``: our magics go (IPython's ``%recall`` and ``%rep`` come
    back) and this kernel stops listening for notifications; its jobs stay on the server."""
    from jupyter_recall.kernel.extension import unload_ipython_extension as unload

    unload(ipython)


class ExtensionPoint(TypedDict):
    """What Jupyter Server reads to load the extension: its module and its application."""

    module: str
    app: type[ExtensionApp]


def _jupyter_server_extension_points() -> list[ExtensionPoint]:
    # Imported lazily: `import jupyter_recall` in a kernel must not import jupyter_server.
    from jupyter_recall.server.app import RecallApp

    return [{"module": "jupyter_recall.server.app", "app": RecallApp}]
