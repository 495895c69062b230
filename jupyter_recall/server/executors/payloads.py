"""Typed views of a job's ``action``, ``target`` and executor ``options``.

Validation itself is ``jupyter_recall.core.payloads`` (the one place every entry point uses);
this module turns the validated JSON into small dataclasses, at fire time, so that a job stored
by an older release is checked again before it runs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.payloads import (
    check_action_fits_target,
    validate_action,
    validate_options,
    validate_target,
)


@dataclass(frozen=True, slots=True)
class CodeAction:
    code: str


@dataclass(frozen=True, slots=True)
class InstructionAction:
    instruction: str


@dataclass(frozen=True, slots=True)
class NotificationAction:
    message: str
    title: str | None = None


@dataclass(frozen=True, slots=True)
class NotebookAction:
    path: str
    """Relative to the contents root, without a leading slash."""
    parameters: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ToolAction:
    name: str
    params: dict[str, Any] = field(default_factory=dict)


Action = CodeAction | InstructionAction | NotificationAction | NotebookAction | ToolAction


@dataclass(frozen=True, slots=True)
class KernelTarget:
    """A live kernel, named by notebook path (resolved at fire time) or by kernel id."""

    path: str | None = None
    kernel_id: str | None = None

    @property
    def label(self) -> str:
        return self.path if self.path is not None else str(self.kernel_id)


@dataclass(frozen=True, slots=True)
class HeadlessTarget:
    kernel_name: str | None = None
    cwd: str | None = None
    """Working directory relative to the contents root."""


@dataclass(frozen=True, slots=True)
class ServerTarget:
    pass


Target = KernelTarget | HeadlessTarget | ServerTarget


def parse_action(data: object) -> Action:
    action = validate_action(data)
    kind = action["type"]
    if kind == "code":
        return CodeAction(code=action["code"])
    if kind == "instruction":
        return InstructionAction(instruction=action["instruction"])
    if kind == "notification":
        return NotificationAction(message=action["message"], title=action.get("title"))
    if kind == "notebook":
        return _notebook_action(action)
    return ToolAction(name=action["name"], params=action["params"])


def _notebook_action(action: dict[str, Any]) -> NotebookAction:
    for name in action["parameters"]:
        if not name.isidentifier():
            raise ValidationError(
                "action.parameters", f"parameter names must be Python identifiers, got {name!r}"
            )
    return NotebookAction(path=action["path"].lstrip("/"), parameters=action["parameters"])


def parse_target(data: object) -> Target:
    target = validate_target(data)
    kind = target["type"]
    if kind == "kernel":
        path = target.get("path")
        return KernelTarget(
            path=path.lstrip("/") if path is not None else None,
            kernel_id=target.get("kernel_id"),
        )
    if kind == "headless":
        return HeadlessTarget(kernel_name=target.get("kernel_name"), cwd=target.get("cwd"))
    return ServerTarget()


def parse_job_payloads(action: object, target: object) -> tuple[Action, Target]:
    """Both payloads, refused together when the action cannot run on that target."""
    check_action_fits_target(validate_action(action), validate_target(target))
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
    return str(validate_options(options).get("on_missing_kernel", "fail"))


def exclusive_timeout(options: dict[str, Any]) -> float:
    return float(validate_options(options).get("exclusive_timeout", 300))


def is_exclusive(options: dict[str, Any]) -> bool:
    return bool(validate_options(options).get("exclusive", False))


def resolve_under(root_dir: str, relative: str | None, field_name: str) -> str:
    """A directory given relative to the contents root, refused if it leaves the root."""
    root = os.path.abspath(root_dir)
    if not relative:
        return root
    resolved = os.path.abspath(os.path.join(root, *relative.strip("/").split("/")))
    if os.path.commonpath([root, resolved]) != root:
        raise ValidationError(field_name, f"must stay inside the server's root, got {relative!r}")
    return resolved
