"""Typed views of a job's ``action``, ``target`` and executor ``options``.

The records are ``jupyter_recall.core.records``' (parsed once at the edge or from the store);
this module adds what executors need of them: paths under the contents root, the checks of a
notebook's parameter names, and which executor runs a job.
"""

from __future__ import annotations

import os
from dataclasses import replace

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.records import (
    Action,
    CodeAction,
    HeadlessTarget,
    InstructionAction,
    KernelTarget,
    NotebookAction,
    NotificationAction,
    ServerTarget,
    Target,
    ToolAction,
    check_fits,
)

__all__ = [
    "Action",
    "CodeAction",
    "HeadlessTarget",
    "InstructionAction",
    "KernelTarget",
    "NotebookAction",
    "NotificationAction",
    "ServerTarget",
    "Target",
    "ToolAction",
]


def parse_action(action: Action) -> Action:
    """The action as executors take it: a notebook's path under the contents root, its
    parameter names checked (they become Python variables)."""
    if isinstance(action, NotebookAction):
        return _notebook_action(action)
    return action


def _notebook_action(action: NotebookAction) -> NotebookAction:
    for name in action.parameters:
        if not name.isidentifier():
            raise ValidationError(
                "action.parameters", f"parameter names must be Python identifiers, got {name!r}"
            )
    return replace(action, path=action.relative_path)


def parse_target(target: Target) -> Target:
    """The target as executors take it: a kernel's notebook path under the contents root."""
    if isinstance(target, KernelTarget) and target.path is not None:
        return replace(target, path=target.relative_path)
    return target


def parse_job_payloads(action: Action, target: Target) -> tuple[Action, Target]:
    """Both payloads, refused together when the action cannot run on that target (a job
    stored by an older release is checked again before it runs)."""
    check_fits(action, target)
    return parse_action(action), parse_target(target)


def route(action: Action, target: Target) -> str:
    """Which executor runs it: server-side actions go to the server whatever the target says,
    notebooks always get a fresh kernel, and code or instructions go where the target points."""
    if isinstance(action, (NotificationAction, ToolAction)):
        return "server"
    if isinstance(action, NotebookAction):
        return "headless"
    if isinstance(target, KernelTarget):
        return "kernel"
    if isinstance(target, HeadlessTarget):
        return "headless"
    return "server"


def resolve_under(root_dir: str, relative: str | None, field_name: str) -> str:
    """A directory given relative to the contents root, refused if it leaves the root."""
    root = os.path.abspath(root_dir)
    if not relative:
        return root
    resolved = os.path.abspath(os.path.join(root, *relative.strip("/").split("/")))
    if os.path.commonpath([root, resolved]) != root:
        raise ValidationError(field_name, f"must stay inside the server's root, got {relative!r}")
    return resolved
