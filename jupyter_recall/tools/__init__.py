"""Tools: named actions ``module.action``, their policies, and running them.

``tools`` is I/O code at the engine's level: it imports ``core`` only, never the server or the
kernel. The server and the kernel each build a ``ToolRunner`` over ``default_registry()`` with
their own root, policy layers and approvals.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from jupyter_recall.tools.approval import ApprovalRequest, Approvals
from jupyter_recall.tools.policy import Decision, PolicyLayer, decide
from jupyter_recall.tools.registry import (
    OUTPUT_LIMIT,
    Tool,
    ToolContext,
    ToolRegistry,
    ToolResult,
    ToolRunner,
    failed,
    ok,
)

__all__ = [
    "OUTPUT_LIMIT",
    "ApprovalRequest",
    "Approvals",
    "Decision",
    "PolicyLayer",
    "Tool",
    "ToolContext",
    "ToolRegistry",
    "ToolResult",
    "ToolRunner",
    "decide",
    "default_registry",
    "failed",
    "ok",
    "tool",
]

F = TypeVar("F", bound=Callable[..., Any])

_lock = threading.Lock()
_registry: list[ToolRegistry] = []


def default_registry() -> ToolRegistry:
    """The process's registry: the built-ins and every ``@tool`` registered here."""
    with _lock:
        if not _registry:
            from jupyter_recall.tools.builtin import register_builtins

            _registry.append(register_builtins(ToolRegistry()))
        return _registry[0]


def tool(name: str, func: F | None = None, *, description: str | None = None) -> Any:
    """Register a user tool (sync or async function) under ``module.action``::

        @jupyter_recall.tool("mymod.fetch")
        async def fetch(url: str) -> dict: ...

    Its params are its keyword arguments; its return value is the result's ``data``; an
    exception it raises is the result's ``error``. The docstring is its description.
    """
    return default_registry().register(name, func, description=description)
