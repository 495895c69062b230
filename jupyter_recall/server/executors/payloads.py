"""Typed views of a job's ``action``, ``target`` and executor ``options``.

Validation itself is ``jupyter_recall.core.payloads`` (the one place every entry point uses);
this module turns the validated JSON into small dataclasses, at fire time, so that a job stored
by an older release is checked again before it runs.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.records import (
    Action,
    CodeAction,
    HeadlessTarget,
    InstructionAction,
    JobOptions,
    KernelTarget,
    NotebookAction,
    NotificationAction,
    ServerTarget,
    Target,
    ToolAction,
    action_from_json,
    check_fits,
    target_from_json,
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


def parse_action(data: object) -> Action:
    """The action as executors take it: a notebook's path under the contents root, its
    parameter names checked (they become Python variables)."""
    action = action_from_json(data)
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


def parse_target(data: object) -> Target:
    """The target as executors take it: a kernel's notebook path under the contents root."""
    target = target_from_json(data)
    if isinstance(target, KernelTarget) and target.path is not None:
        return replace(target, path=target.relative_path)
    return target


def parse_job_payloads(action: object, target: object) -> tuple[Action, Target]:
    """Both payloads, refused together when the action cannot run on that target."""
    check_fits(action_from_json(action), target_from_json(target))
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


def missing_kernel_policy(options: dict[str, Any]) -> str:
    return JobOptions.from_json(options).on_missing_kernel


def exclusive_timeout(options: dict[str, Any]) -> float:
    return JobOptions.from_json(options).exclusive_timeout


def is_exclusive(options: dict[str, Any]) -> bool:
    return JobOptions.from_json(options).exclusive


def resolve_under(root_dir: str, relative: str | None, field_name: str) -> str:
    """A directory given relative to the contents root, refused if it leaves the root."""
    root = os.path.abspath(root_dir)
    if not relative:
        return root
    resolved = os.path.abspath(os.path.join(root, *relative.strip("/").split("/")))
    if os.path.commonpath([root, resolved]) != root:
        raise ValidationError(field_name, f"must stay inside the server's root, got {relative!r}")
    return resolved
