"""The built-in tools: ``filesystem.*``, ``http.*`` and ``shell.run``."""

from __future__ import annotations

from jupyter_recall.tools.builtin import filesystem, http, shell
from jupyter_recall.tools.registry import Tool, ToolRegistry

BUILTIN_TOOLS: tuple[Tool, ...] = (*filesystem.TOOLS, *http.TOOLS, *shell.TOOLS)


def register_builtins(registry: ToolRegistry) -> ToolRegistry:
    for tool in BUILTIN_TOOLS:
        registry.add(tool)
    return registry
