"""Typed records of what a job does (its action), where (its target) and how (its options).

Each record is parsed from JSON in one place (``from_json``, naming the field of any error:
``action.code``, ``target.type``, ``options.exclusive_timeout``; an unknown field of an
action or target is refused by name, ``action.zzz``, ``target.zzz``) and written back to JSON in one
place (``to_json``, the normalised form the REST API answers and the stores persist, under the
payload ``version`` the codec adds). Frozen dataclasses with slots: no dependency, immutable (a
record can be shared by every job of a batch), and cheap to build.
"""

from __future__ import annotations

import difflib
import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar, NotRequired, TypedDict, TypeVar

from jupyter_recall.core.documents import OutputConfigJSON, output_config_of
from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.limits import MAX_SECONDS, NOTIFICATION_PRIORITIES
from jupyter_recall.core.text import check_plain_text, name_line

ACTION_TYPES = ("code", "instruction", "tool", "notebook", "notification")
TARGET_TYPES = ("kernel", "headless", "server")
MISSING_KERNEL_POLICIES = ("start", "skip", "fail")
NOTIFICATION_MESSAGE_LIMIT = 10_000
NOTIFICATION_TITLE_LIMIT = 200

R = TypeVar("R")


# --- the JSON of each record (what ``to_json`` writes) --------------------------------------------


class CodeActionJSON(TypedDict):
    type: str
    code: str


class InstructionActionJSON(TypedDict):
    type: str
    instruction: str
    comment: NotRequired[str]


class ToolActionJSON(TypedDict):
    type: str
    name: str
    params: dict[str, Any]
    """Free-form: the tool's own arguments."""


class NotebookActionJSON(TypedDict):
    type: str
    path: str
    parameters: dict[str, Any]
    """Free-form: the notebook's parameters."""


class NotificationActionJSON(TypedDict):
    type: str
    message: str
    title: NotRequired[str]
    channel: NotRequired[str]
    priority: NotRequired[str]


ActionJSON = (
    CodeActionJSON
    | InstructionActionJSON
    | ToolActionJSON
    | NotebookActionJSON
    | NotificationActionJSON
)


class KernelTargetJSON(TypedDict):
    type: str
    path: NotRequired[str]
    kernel_id: NotRequired[str]


class HeadlessTargetJSON(TypedDict):
    type: str
    kernel_name: NotRequired[str]
    cwd: NotRequired[str]


class ServerTargetJSON(TypedDict):
    type: str


TargetJSON = KernelTargetJSON | HeadlessTargetJSON | ServerTargetJSON


def require_mapping(value: object, field_name: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ValidationError(field_name, f"must be a JSON object, got {type(value).__name__}")
    return value


def _require_text(data: Mapping[str, Any], key: str, prefix: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(f"{prefix}.{key}", f"must be a non-empty string, got {value!r}")
    return value


def refuse_unknown(data: Mapping[str, Any], accepted: tuple[str, ...], prefix: str = "") -> None:
    """Refuse a key of ``data`` outside ``accepted``, naming it (``prefix.key``) and listing
    the accepted ones: a misspelt field would otherwise be dropped without a word."""
    unknown = sorted(str(key) for key in data if key not in accepted)
    if unknown:
        field_name = f"{prefix}.{unknown[0]}" if prefix else unknown[0]
        raise ValidationError(field_name, "unknown field", accepted=accepted)


def contents_path(path: str, field_name: str) -> str:
    """A path under the server's contents root in the one form sessions and the contents API
    use (``./sub//nb.ipynb`` is ``sub/nb.ipynb``; a leading ``/``, the root, is kept): a job
    must find its notebook's kernel by it. A path that leaves the root is refused."""
    root = "/" if path.startswith("/") else ""
    normal = posixpath.normpath(path.lstrip("/"))
    if normal in (".", "..") or normal.startswith("../"):
        raise ValidationError(
            field_name, f"must be a path under the server's root directory, got {path!r}"
        )
    return root + normal


def _optional_text(data: Mapping[str, Any], key: str, prefix: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValidationError(f"{prefix}.{key}", f"must be a string, got {value!r}")
    return value


def optional_object(data: Mapping[str, Any], key: str, prefix: str = "") -> dict[str, Any]:
    """A free-form object (tool params, notebook parameters, a channel's settings): ``{}``
    when absent or null; the error names ``prefix.key`` (``key`` without a prefix)."""
    value = data.get(key)
    if value is None:
        return {}
    # A copy: the record must not change when the caller's dict does.
    return dict(require_mapping(value, f"{prefix}.{key}" if prefix else key))


# --- notifications: the one rule of a notification's priority and lengths ------------------------
# ``engine/notify.py`` (the notifications endpoint, the kernel, watchers) and the notification
# action of a job check with these.


def notification_priority(value: object, field_name: str = "priority") -> str:
    """One of ``NOTIFICATION_PRIORITIES``, or a ValidationError naming ``field_name``."""
    if not isinstance(value, str) or value not in NOTIFICATION_PRIORITIES:
        raise ValidationError(
            field_name, f"unknown priority {value!r}", accepted=NOTIFICATION_PRIORITIES
        )
    return value


def check_notification_length(value: str, field_name: str, limit: int) -> str:
    """A notification's message or title: at most ``limit`` characters."""
    if len(value) > limit:
        raise ValidationError(field_name, f"longer than {limit} characters ({len(value)})")
    return value


# --- actions ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CodeAction:
    """Python code run in a kernel."""

    type: ClassVar[str] = "code"
    fields: ClassVar[tuple[str, ...]] = ("type", "code")
    code: str

    @property
    def headline(self) -> str:
        """The text a job's default name is taken from: its first line that shows something,
        without control or bidi characters (``core.text.name_line``)."""
        return name_line(self.code)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CodeAction:
        refuse_unknown(data, cls.fields, "action")
        return cls(code=_require_text(data, "code", "action"))

    def to_json(self) -> CodeActionJSON:
        return {"type": "code", "code": self.code}


@dataclass(frozen=True, slots=True)
class InstructionAction:
    """A recall: an instruction handed back to the notebook (or its agent) at the time."""

    type: ClassVar[str] = "instruction"
    fields: ClassVar[tuple[str, ...]] = ("type", "instruction", "comment")
    instruction: str
    comment: str | None = None

    @property
    def headline(self) -> str:
        return name_line(self.instruction)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> InstructionAction:
        refuse_unknown(data, cls.fields, "action")
        return cls(
            instruction=_require_text(data, "instruction", "action"),
            comment=_optional_text(data, "comment", "action"),
        )

    def to_json(self) -> InstructionActionJSON:
        out: InstructionActionJSON = {"type": "instruction", "instruction": self.instruction}
        if self.comment is not None:
            out["comment"] = self.comment
        return out


@dataclass(frozen=True, slots=True)
class ToolAction:
    """A named tool (``module.action``) called with free-form JSON ``params``."""

    type: ClassVar[str] = "tool"
    fields: ClassVar[tuple[str, ...]] = ("type", "name", "params")
    name: str
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def headline(self) -> str:
        return name_line(self.name)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ToolAction:
        refuse_unknown(data, cls.fields, "action")
        name = _require_text(data, "name", "action")
        module, dot, action = name.partition(".")
        if not dot or not module or not action:
            raise ValidationError("action.name", f"must look like 'module.action', got {name!r}")
        return cls(name=name, params=optional_object(data, "params", "action"))

    def to_json(self) -> ToolActionJSON:
        return {"type": "tool", "name": self.name, "params": dict(self.params)}


@dataclass(frozen=True, slots=True)
class NotebookAction:
    """A whole notebook run in a fresh kernel, with free-form papermill-style ``parameters``."""

    type: ClassVar[str] = "notebook"
    fields: ClassVar[tuple[str, ...]] = ("type", "path", "parameters")
    path: str
    """As the user wrote it; ``relative_path`` is the path under the contents root."""
    parameters: dict[str, Any] = field(default_factory=dict)

    @property
    def headline(self) -> str:
        return name_line(self.path)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> NotebookAction:
        refuse_unknown(data, cls.fields, "action")
        path = _require_text(data, "path", "action")
        if not path.endswith(".ipynb"):
            raise ValidationError("action.path", f"must name a .ipynb file, got {path!r}")
        path = contents_path(path, "action.path")
        return cls(path=path, parameters=optional_object(data, "parameters", "action"))

    @property
    def relative_path(self) -> str:
        return self.path.lstrip("/")

    def to_json(self) -> NotebookActionJSON:
        return {"type": "notebook", "path": self.path, "parameters": dict(self.parameters)}


@dataclass(frozen=True, slots=True)
class NotificationAction:
    """A notification sent to a channel (the session's by default)."""

    type: ClassVar[str] = "notification"
    fields: ClassVar[tuple[str, ...]] = ("type", "message", "title", "channel", "priority")
    message: str
    title: str | None = None
    channel: str | None = None
    priority: str | None = None

    @property
    def headline(self) -> str:
        return name_line(self.message)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> NotificationAction:
        refuse_unknown(data, cls.fields, "action")
        return cls(
            message=_require_text(data, "message", "action"),
            title=_optional_text(data, "title", "action"),
            channel=_optional_text(data, "channel", "action"),
            priority=_optional_text(data, "priority", "action"),
        )

    def check(self) -> None:
        """The notifications endpoint's checks (``notification_priority``, the lengths), made
        when a job is created or changed (``check_fits``), not when a stored job is decoded."""
        check_notification_length(self.message, "action.message", NOTIFICATION_MESSAGE_LIMIT)
        if self.title is not None:
            check_notification_length(self.title, "action.title", NOTIFICATION_TITLE_LIMIT)
        if self.priority is not None:
            notification_priority(self.priority, "action.priority")

    def to_json(self) -> NotificationActionJSON:
        out: NotificationActionJSON = {"type": "notification", "message": self.message}
        if self.title is not None:
            out["title"] = self.title
        if self.channel is not None:
            out["channel"] = self.channel
        if self.priority is not None:
            out["priority"] = self.priority
        return out


Action = CodeAction | InstructionAction | ToolAction | NotebookAction | NotificationAction

_ACTIONS: dict[str, Callable[[Mapping[str, Any]], Action]] = {
    "code": CodeAction.from_json,
    "instruction": InstructionAction.from_json,
    "tool": ToolAction.from_json,
    "notebook": NotebookAction.from_json,
    "notification": NotificationAction.from_json,
}


def _by_type(
    value: object, name: str, parsers: Mapping[str, Callable[[Mapping[str, Any]], R]]
) -> R:
    """The record of a JSON payload (an action, a target) by its ``type``."""
    data = require_mapping(value, name)
    kind = data.get("type")
    parse = parsers.get(kind) if isinstance(kind, str) else None
    if parse is None:
        raise ValidationError(
            f"{name}.type", f"unknown {name} type {kind!r}", accepted=tuple(parsers)
        )
    return parse(data)


def action_from_json(value: object) -> Action:
    """The action record of a JSON payload, or a ValidationError naming the field."""
    return _by_type(value, "action", _ACTIONS)


# --- targets ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class KernelTarget:
    """A live kernel, named by notebook path (resolved at fire time) or by kernel id."""

    type: ClassVar[str] = "kernel"
    fields: ClassVar[tuple[str, ...]] = ("type", "path", "kernel_id")
    path: str | None = None
    kernel_id: str | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> KernelTarget:
        refuse_unknown(data, cls.fields, "target")
        path = _optional_text(data, "path", "target")
        kernel_id = _optional_text(data, "kernel_id", "target")
        if not path and not kernel_id:
            raise ValidationError(
                "target", "a kernel target needs 'path' (notebook) or 'kernel_id'"
            )
        path = contents_path(path, "target.path") if path else None
        return cls(path=path, kernel_id=kernel_id or None)

    @property
    def relative_path(self) -> str | None:
        return None if self.path is None else self.path.lstrip("/")

    @property
    def label(self) -> str:
        return self.path if self.path is not None else str(self.kernel_id)

    def to_json(self) -> KernelTargetJSON:
        out: KernelTargetJSON = {"type": "kernel"}
        if self.path:
            out["path"] = self.path
        if self.kernel_id:
            out["kernel_id"] = self.kernel_id
        return out


@dataclass(frozen=True, slots=True)
class HeadlessTarget:
    """A fresh kernel started for each run."""

    type: ClassVar[str] = "headless"
    fields: ClassVar[tuple[str, ...]] = ("type", "kernel_name", "cwd")
    kernel_name: str | None = None
    """None: a notebook's own kernel spec (a notebook action), else the server's default
    kernel spec (``python3`` unless its kernel manager's ``default_kernel_name`` says
    otherwise)."""
    cwd: str | None = None
    """Working directory relative to the contents root."""

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> HeadlessTarget:
        refuse_unknown(data, cls.fields, "target")
        name = _optional_text(data, "kernel_name", "target") or None
        cwd = _optional_text(data, "cwd", "target")
        return cls(kernel_name=name, cwd=contents_path(cwd, "target.cwd") if cwd else None)

    def to_json(self) -> HeadlessTargetJSON:
        out: HeadlessTargetJSON = {"type": "headless"}
        if self.kernel_name is not None:
            out["kernel_name"] = self.kernel_name
        if self.cwd:
            out["cwd"] = self.cwd
        return out


@dataclass(frozen=True, slots=True)
class ServerTarget:
    """The Jupyter server itself (tools, notifications)."""

    type: ClassVar[str] = "server"
    fields: ClassVar[tuple[str, ...]] = ("type",)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ServerTarget:
        refuse_unknown(data, cls.fields, "target")
        return SERVER_TARGET

    def to_json(self) -> ServerTargetJSON:
        return {"type": "server"}


SERVER_TARGET = ServerTarget()

Target = KernelTarget | HeadlessTarget | ServerTarget

_TARGETS: dict[str, Callable[[Mapping[str, Any]], Target]] = {
    "kernel": KernelTarget.from_json,
    "headless": HeadlessTarget.from_json,
    "server": ServerTarget.from_json,
}


def target_from_json(value: object) -> Target:
    """The target record of a JSON payload, or a ValidationError naming the field."""
    return _by_type(value, "target", _TARGETS)


_TARGET_FIELDS = {cls.type: cls.fields for cls in (KernelTarget, HeadlessTarget, ServerTarget)}


def target_from_stored(value: Mapping[str, Any]) -> Target:
    """A stored target's record, its keys outside its type's fields dropped: a store written
    before targets refused unknown keys (``{"type": "server", "path": ...}``) still lists."""
    known = _TARGET_FIELDS.get(str(value.get("type")))
    kept = value if known is None else {key: value[key] for key in value if key in known}
    return target_from_json(kept)


def check_fits(action: Action, target: Target) -> None:
    """Refuse an action that cannot run as given: values its record reads but its JSON form
    does not bound (a notification's priority and lengths), and combinations that cannot run
    (kernel code on the server, a notebook in a kernel). Made at every creation and change of
    a job and before each run, never when a stored job is decoded (a job stored by an older
    release still lists)."""
    if isinstance(action, NotificationAction):
        action.check()
    check_types_fit(action.type, target.type)
    _check_paths(action, target)


def _check_paths(action: Action, target: Target) -> None:
    """The paths a run hands to the contents manager and the file system: no NUL and no lone
    surrogate, which no path holds (a run failed on them). Checked here rather than in
    ``contents_path``, so that a job stored with one before still lists (and is refused when
    it is run or changed)."""
    paths = {
        "target.path": target.path if isinstance(target, KernelTarget) else None,
        "target.cwd": target.cwd if isinstance(target, HeadlessTarget) else None,
        "action.path": action.path if isinstance(action, NotebookAction) else None,
    }
    for field_name, path in paths.items():
        if path is not None:
            check_plain_text(path, field_name)


def check_types_fit(action_type: str, target_type: str) -> None:
    """``check_fits`` by type names: the rule for payloads already checked one by one."""
    if target_type == "server" and action_type in ("code", "instruction"):
        raise ValidationError(
            "target.type",
            f"a {action_type!r} action runs in a kernel, not on the server",
            accepted=("kernel", "headless"),
        )
    if action_type == "notebook" and target_type == "kernel":
        raise ValidationError(
            "target.type",
            "a notebook action runs in a fresh kernel",
            accepted=("headless", "server"),
        )


# --- options ------------------------------------------------------------------------------------


def _exclusive(data: Mapping[str, Any]) -> bool | None:
    value = data.get("exclusive")
    if "exclusive" in data and not isinstance(value, bool):
        raise ValidationError("options.exclusive", f"must be true or false, got {value!r}")
    return value


def _exclusive_timeout(data: Mapping[str, Any]) -> float | None:
    timeout = data.get("exclusive_timeout")
    if timeout is not None and (
        isinstance(timeout, bool)
        or not isinstance(timeout, (int, float))
        or not 0 < timeout <= MAX_SECONDS
    ):
        raise ValidationError(
            "options.exclusive_timeout",
            f"must be a number of seconds above 0 and at most {MAX_SECONDS:,}, got {timeout!r}",
        )
    return timeout


def _missing_kernel(data: Mapping[str, Any]) -> str | None:
    policy = data.get("on_missing_kernel")
    if policy is not None and policy not in MISSING_KERNEL_POLICIES:
        raise ValidationError(
            "options.on_missing_kernel",
            f"unknown policy {policy!r}",
            accepted=MISSING_KERNEL_POLICIES,
        )
    return policy


@dataclass(frozen=True, slots=True)
class JobOptions:
    """Settings read by the executors, typed, and the options the outer layers own (the
    watcher's configuration, ``output_channel``...), kept as given in ``values``."""

    values: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """Every option as submitted (the JSON form): the API answers them unchanged."""
    exclusive: bool = False
    exclusive_timeout: float = 300.0
    on_missing_kernel: str = "fail"

    @classmethod
    def from_json(cls, value: object) -> JobOptions:
        data = require_mapping(value, "options")
        if not data:
            return NO_OPTIONS
        exclusive = _exclusive(data)
        timeout = _exclusive_timeout(data)
        missing = _missing_kernel(data)
        return cls(
            # Read-only: a decoded record is shared by every job holding the same text.
            values=MappingProxyType(dict(data)),
            exclusive=bool(exclusive),
            exclusive_timeout=300.0 if timeout is None else float(timeout),
            on_missing_kernel=missing or "fail",
        )

    @property
    def output_channel(self) -> str | None:
        """The channel a job's run outcomes go to (``engine/notify.py``), if named."""
        channel = self.values.get("output_channel")
        return channel if isinstance(channel, str) and channel else None

    @property
    def output_config(self) -> OutputConfigJSON:
        """That channel's settings (each channel checks the keys it reads when it sends)."""
        config = self.values.get("output_config")
        return output_config_of(config) if isinstance(config, Mapping) else {}

    def check(self) -> None:
        """The options the notifier reads (``engine/notify.py``) with the type it reads, made
        when a job is created or changed (``check_options_fit``), not when a stored job is
        decoded: a value of another type would be kept and silently ignored."""
        channel = self.values.get("output_channel")
        if channel is not None and (not isinstance(channel, str) or not channel.strip()):
            raise ValidationError(
                "options.output_channel", f"must be a channel's name, got {channel!r:.80}"
            )
        config = self.values.get("output_config")
        if config is not None and not isinstance(config, Mapping):
            raise ValidationError(
                "options.output_config",
                f"must be a JSON object (the channel's settings), got {config!r:.80}",
            )

    def to_json(self) -> dict[str, Any]:
        return dict(self.values)


NO_OPTIONS = JobOptions()

READ_OPTIONS = (
    "exclusive",
    "exclusive_timeout",
    "on_missing_kernel",
    "output_channel",
    "output_config",
    "watcher",
)
"""The option keys something of ours reads; other keys are kept for whoever wrote them."""


def option_warnings(options: JobOptions) -> list[str]:
    """A warning per option key that looks like a misspelt one we read (``output_chanel``):
    kept, as every other key is, but nothing would read it."""
    warnings = []
    for key in options.values:
        if key in READ_OPTIONS:
            continue
        close = difflib.get_close_matches(str(key), READ_OPTIONS, n=1, cutoff=0.8)
        if close:
            warnings.append(
                f"warning: options.{key} is kept but nothing reads it: did you mean "
                f"options.{close[0]}?"
            )
    return warnings


def check_options_fit(options: JobOptions, target: Target) -> None:
    """Refuse options that would be kept and silently do nothing: the notifier's of another
    type (``JobOptions.check``), kernel options set on a job that runs in no notebook's live
    kernel (``exclusive`` waits for that kernel to be idle; ``on_missing_kernel`` says what to
    do when it is not running)."""
    options.check()
    if target.type == "kernel":
        return
    where = f"not on a {target.type!r} target"
    if options.exclusive:
        raise ValidationError(
            "options.exclusive", f"applies to a notebook's live kernel (target 'kernel'), {where}"
        )
    if options.on_missing_kernel != "fail":
        raise ValidationError(
            "options.on_missing_kernel",
            f"applies to a notebook's live kernel (target 'kernel'), {where}",
        )
