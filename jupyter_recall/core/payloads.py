"""Validation of the JSON payloads that describe what a job does (action) and where (target).

One place, used by every entry point (REST, kernel API, CLI), so that a bad payload gets the
same message everywhere: the field path and the accepted values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.limits import MAX_RUNS, MAX_SECONDS, TEXT_LIMITS

ACTION_TYPES = ("code", "instruction", "tool", "notebook", "notification")
TARGET_TYPES = ("kernel", "headless", "server")
MISSING_KERNEL_POLICIES = ("start", "skip", "fail")


def _require_mapping(value: object, field: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ValidationError(field, f"must be a JSON object, got {type(value).__name__}")
    return value


def _require_text(data: Mapping[str, Any], key: str, field: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(f"{field}.{key}", f"must be a non-empty string, got {value!r}")
    return value


def _optional_text(data: Mapping[str, Any], key: str, field: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValidationError(f"{field}.{key}", f"must be a string, got {value!r}")
    return value


def _optional_object(data: Mapping[str, Any], key: str, field: str) -> dict[str, Any]:
    value = data.get(key, {})
    if value is None:
        return {}
    return dict(_require_mapping(value, f"{field}.{key}"))


def _code(data: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "code", "code": _require_text(data, "code", "action")}


def _instruction(data: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": "instruction",
        "instruction": _require_text(data, "instruction", "action"),
    }
    comment = _optional_text(data, "comment", "action")
    if comment is not None:
        out["comment"] = comment
    return out


def _tool(data: Mapping[str, Any]) -> dict[str, Any]:
    name = _require_text(data, "name", "action")
    module, dot, action = name.partition(".")
    if not dot or not module or not action:
        raise ValidationError("action.name", f"must look like 'module.action', got {name!r}")
    return {"type": "tool", "name": name, "params": _optional_object(data, "params", "action")}


def _notebook(data: Mapping[str, Any]) -> dict[str, Any]:
    path = _require_text(data, "path", "action")
    if not path.endswith(".ipynb"):
        raise ValidationError("action.path", f"must name a .ipynb file, got {path!r}")
    return {
        "type": "notebook",
        "path": path,
        "parameters": _optional_object(data, "parameters", "action"),
    }


def _notification(data: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": "notification",
        "message": _require_text(data, "message", "action"),
    }
    for key in ("title", "channel", "priority"):
        value = _optional_text(data, key, "action")
        if value is not None:
            out[key] = value
    return out


_ACTION_PARSERS: dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = {
    "code": _code,
    "instruction": _instruction,
    "tool": _tool,
    "notebook": _notebook,
    "notification": _notification,
}


def validate_action(value: object) -> dict[str, Any]:
    """Return a normalised copy of an action payload, or raise ValidationError naming the field."""
    data = _require_mapping(value, "action")
    kind = data.get("type")
    parser = _ACTION_PARSERS.get(kind) if isinstance(kind, str) else None
    if parser is None:
        raise ValidationError("action.type", f"unknown action type {kind!r}", accepted=ACTION_TYPES)
    return parser(data)


def _kernel_target(data: Mapping[str, Any]) -> dict[str, Any]:
    path = _optional_text(data, "path", "target")
    kernel_id = _optional_text(data, "kernel_id", "target")
    if not path and not kernel_id:
        raise ValidationError("target", "a kernel target needs 'path' (notebook) or 'kernel_id'")
    out: dict[str, Any] = {"type": "kernel"}
    if path:
        out["path"] = path
    if kernel_id:
        out["kernel_id"] = kernel_id
    return out


def _headless_target(data: Mapping[str, Any]) -> dict[str, Any]:
    name = _optional_text(data, "kernel_name", "target") or "python3"
    out: dict[str, Any] = {"type": "headless", "kernel_name": name}
    cwd = _optional_text(data, "cwd", "target")
    if cwd:
        out["cwd"] = cwd
    return out


def _server_target(data: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "server"}


_TARGET_PARSERS: dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = {
    "kernel": _kernel_target,
    "headless": _headless_target,
    "server": _server_target,
}


def validate_target(value: object) -> dict[str, Any]:
    """Return a normalised copy of a target payload, or raise ValidationError naming the field."""
    data = _require_mapping(value, "target")
    kind = data.get("type")
    parser = _TARGET_PARSERS.get(kind) if isinstance(kind, str) else None
    if parser is None:
        raise ValidationError("target.type", f"unknown target type {kind!r}", accepted=TARGET_TYPES)
    return parser(data)


def check_action_fits_target(action: Mapping[str, Any], target: Mapping[str, Any]) -> None:
    """Refuse combinations that cannot run (kernel code on the server, a notebook in a kernel)."""
    if target["type"] == "server" and action["type"] in ("code", "instruction"):
        raise ValidationError(
            "target.type",
            f"a {action['type']!r} action runs in a kernel, not on the server",
            accepted=("kernel", "headless"),
        )
    if action["type"] == "notebook" and target["type"] == "kernel":
        raise ValidationError(
            "target.type",
            "a notebook action runs in a fresh kernel",
            accepted=("headless", "server"),
        )


def validate_options(value: object) -> dict[str, Any]:
    """Options read by executors (exclusive, exclusive_timeout, on_missing_kernel, ...)."""
    data = dict(_require_mapping(value, "options"))
    if "exclusive" in data and not isinstance(data["exclusive"], bool):
        raise ValidationError(
            "options.exclusive", f"must be true or false, got {data['exclusive']!r}"
        )
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
    policy = data.get("on_missing_kernel")
    if policy is not None and policy not in MISSING_KERNEL_POLICIES:
        raise ValidationError(
            "options.on_missing_kernel",
            f"unknown policy {policy!r}",
            accepted=MISSING_KERNEL_POLICIES,
        )
    return data


def check_text(value: str, field: str, limit: int) -> str:
    """A short text field (a name, a zone, a session): at most ``limit`` characters, no NUL."""
    if len(value) > limit:
        raise ValidationError(
            field, f"is {len(value):,} characters long; at most {limit:,} are accepted"
        )
    if "\x00" in value:
        raise ValidationError(field, "must not contain a NUL character")
    return value


_POLICY_RANGES: dict[str, tuple[float, float]] = {
    "max_runs": (1, MAX_RUNS),
    "catchup_window": (0, MAX_SECONDS),
    "jitter": (0, MAX_SECONDS),
}


def check_policy_bounds(policies: Mapping[str, Any]) -> None:
    """Numeric policies within their ranges (the types themselves are ``Policies``' to check)."""
    for key, (low, high) in _POLICY_RANGES.items():
        value = policies.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if not low <= value <= high:
            raise ValidationError(key, f"must be from {low:,} to {high:,}, got {value!r}")


def check_short_texts(data: Mapping[str, Any]) -> None:
    """The short text fields of a job (``TEXT_LIMITS``) that are strings, bounded by name."""
    for key, limit in TEXT_LIMITS.items():
        value = data.get(key)
        if isinstance(value, str):
            check_text(value, key, limit)


@contextmanager
def within(prefix: str) -> Iterator[None]:
    """Errors raised inside name their field from ``prefix`` (``jobs[2].when``)."""
    try:
        yield
    except ValidationError as error:
        field = f"{prefix}.{error.field}" if error.field else prefix
        raise ValidationError(field, error.message, accepted=error.accepted) from None
