"""Which jupyter_server permissions a job needs: those that doing its work directly would need.

The one table of the rule (docs/server.md shows it), read when a request creates or changes a
job and again when a run starts (``authorization.py``). Pure: the payloads in, the permissions
out, each with the reason a refusal names.

Doing the work directly means, in jupyter_server's terms: starting a kernel is ``POST
/api/kernels`` (``write`` on ``kernels``); running code in a kernel is its channels websocket
(``execute`` on ``kernels``); opening a notebook's session is ``POST /api/sessions`` (``write``
on ``sessions``); reading or saving a notebook or file is ``GET``/``PUT /api/contents``
(``read``/``write`` on ``contents``); running a command on the server is a terminal (``POST
/api/terminals``, then its websocket: ``write`` and ``execute`` on ``terminals``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from jupyter_recall.core.records import (
    Action,
    CodeAction,
    InstructionAction,
    JobOptions,
    NotebookAction,
    Target,
    ToolAction,
)

WATCHER_KIND = "watcher"


@dataclass(frozen=True, slots=True)
class Permission:
    """One (action, resource) pair as jupyter_server's ``Authorizer.is_authorized`` takes it."""

    action: str
    """read, write or execute"""
    resource: str
    """kernels, sessions, contents, terminals"""

    def __str__(self) -> str:
        return f"{self.action} on resource: {self.resource}"


@dataclass(frozen=True, slots=True)
class Requirement:
    permission: Permission
    reason: str
    """What the job does that needs it, as a refusal says it."""


START_KERNEL = Permission("write", "kernels")
EXECUTE_KERNELS = Permission("execute", "kernels")
OPEN_SESSION = Permission("write", "sessions")
READ_CONTENTS = Permission("read", "contents")
WRITE_CONTENTS = Permission("write", "contents")
START_TERMINAL = Permission("write", "terminals")
EXECUTE_TERMINALS = Permission("execute", "terminals")

FRESH_KERNEL = "starts a fresh kernel for each run (as POST /api/kernels)"
RUNS_CODE = "runs code in a kernel (as the kernel's channels websocket)"

SERVER_TOOLS: Mapping[str, tuple[Requirement, ...]] = {
    "shell.run": (
        Requirement(START_TERMINAL, "starts a process on the server (as POST /api/terminals)"),
        Requirement(EXECUTE_TERMINALS, "runs a command on the server (as a terminal)"),
    ),
    "filesystem.read": (Requirement(READ_CONTENTS, "reads a file (as GET /api/contents)"),),
    "filesystem.list": (Requirement(READ_CONTENTS, "lists a directory (as GET /api/contents)"),),
    "filesystem.write": (Requirement(WRITE_CONTENTS, "writes a file (as PUT /api/contents)"),),
    "http.download": (
        Requirement(WRITE_CONTENTS, "saves the download as a file (as PUT /api/contents)"),
    ),
}
"""Built-in tools run on the server. ``http.get``/``http.post`` touch nothing of the server's;
tools registered in the server process by installed code are what its operator chose to offer
(and ``RecallApp.tool_policies`` governs): neither needs more than the ``recall`` permission."""


def required_permissions(
    kind: str, action: Action, target: Target, options: JobOptions
) -> tuple[Requirement, ...]:
    """The permissions a job of this ``kind`` (job, recall, watcher) with these payloads needs,
    beyond ``recall`` itself (a notification needs nothing more)."""
    if isinstance(action, (CodeAction, InstructionAction)):
        return _kernel_code(action.type, target, options)
    if isinstance(action, NotebookAction):
        return _notebook()
    if isinstance(action, ToolAction):
        return _tool(kind, action.name, target)
    return ()


def _kernel_code(action_type: str, target: Target, options: JobOptions) -> tuple[Requirement, ...]:
    if target.type == "headless":
        return (
            Requirement(START_KERNEL, f"a {action_type} job on a headless target {FRESH_KERNEL}"),
            Requirement(EXECUTE_KERNELS, f"a {action_type} job {RUNS_CODE}"),
        )
    runs = (Requirement(EXECUTE_KERNELS, f"a {action_type} job {RUNS_CODE}"),)
    if options.on_missing_kernel == "start":
        opens = Requirement(
            OPEN_SESSION,
            "on_missing_kernel 'start' opens the notebook's session when no kernel runs "
            "(as POST /api/sessions)",
        )
        return (*runs, opens)
    return runs


def _notebook() -> tuple[Requirement, ...]:
    return (
        Requirement(START_KERNEL, f"a notebook job {FRESH_KERNEL}"),
        Requirement(EXECUTE_KERNELS, "a notebook job runs the notebook's cells in a kernel"),
        Requirement(READ_CONTENTS, "a notebook job reads the notebook (as GET /api/contents)"),
        Requirement(
            WRITE_CONTENTS, "a notebook job saves the executed copy (as PUT /api/contents)"
        ),
    )


def _tool(kind: str, name: str, target: Target) -> tuple[Requirement, ...]:
    if kind == WATCHER_KIND and target.type == "kernel":
        return (
            Requirement(
                EXECUTE_KERNELS, f"a watcher of {name} runs each check in the notebook's kernel"
            ),
        )
    return tuple(
        Requirement(need.permission, f"the tool {name} {need.reason}")
        for need in SERVER_TOOLS.get(name, ())
    )
