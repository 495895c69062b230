"""Checks of what describes a job beyond its payload records: short texts, policy bounds, the
fit of an action's and a target's types, and errors named within a prefix (``jobs[2].when``).

The rules of actions, targets and options are their records' (``core/records.py``), so that a
bad payload gets the same message at every entry point: the field path and the accepted values.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.limits import MAX_RUNS, MAX_SECONDS, TEXT_LIMITS
from jupyter_recall.core.records import (
    ACTION_TYPES,
    MISSING_KERNEL_POLICIES,
    TARGET_TYPES,
    check_types_fit,
)
from jupyter_recall.core.text import check_name_text, check_plain_text

__all__ = ["ACTION_TYPES", "MISSING_KERNEL_POLICIES", "TARGET_TYPES"]


def check_action_fits_target(action: Mapping[str, Any], target: Mapping[str, Any]) -> None:
    """Refuse combinations that cannot run (kernel code on the server, a notebook in a kernel):
    ``action`` and ``target`` are payloads already validated."""
    check_types_fit(action["type"], target["type"])


def check_text(value: str, field: str, limit: int) -> str:
    """A short text field (a name, a zone, a session): at most ``limit`` characters, no NUL,
    no lone surrogate (``check_plain_text``); a ``name`` no bidi control either, which would
    reorder the tables showing it (``check_name_text``)."""
    if len(value) > limit:
        raise ValidationError(
            field, f"is {len(value):,} characters long; at most {limit:,} are accepted"
        )
    check_plain_text(value, field)
    return check_name_text(value, field) if field == "name" else value


_POLICY_RANGES: dict[str, tuple[float, float]] = {
    "max_runs": (1, MAX_RUNS),
    "catchup_window": (0, MAX_SECONDS),
    "jitter": (0, MAX_SECONDS),
    "timeout": (0, MAX_SECONDS),
}
_ABOVE_LOW = frozenset({"timeout"})
"""Ranges whose low end is excluded: a time limit of 0 would stop every run at once
(``Policies`` and openapi.yaml's ``exclusiveMinimum`` say the same)."""


def check_policy_bounds(policies: Mapping[str, Any]) -> None:
    """Numeric policies within their ranges (the types themselves are ``Policies``' to check)."""
    for key, (low, high) in _POLICY_RANGES.items():
        value = policies.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if key in _ABOVE_LOW and not low < value <= high:
            raise ValidationError(key, f"must be above {low:,} and at most {high:,}, got {value!r}")
        if not low <= value <= high:
            raise ValidationError(key, f"must be from {low:,} to {high:,}, got {value!r}")


def check_short_texts(data: Mapping[str, Any]) -> None:
    """The short text fields of a job (``TEXT_LIMITS``) that are strings, bounded by name."""
    for key, limit in TEXT_LIMITS.items():
        value = data.get(key)
        if isinstance(value, str):
            check_text(value, key, limit)


def merge_patch(target: Mapping[str, object], patch: Mapping[str, object]) -> dict[str, object]:
    """``target`` with a JSON merge patch applied (RFC 7386): keys given replace, null removes
    a key, an object merges into the object it meets (into nothing when it meets another
    value), keys not given are kept. Neither argument changes."""
    merged = dict(target)
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, Mapping):
            base = merged.get(key)
            merged[key] = merge_patch(base if isinstance(base, Mapping) else {}, value)
        else:
            merged[key] = value
    return merged


@contextmanager
def within(prefix: str) -> Iterator[None]:
    """Errors raised inside name their field from ``prefix`` (``jobs[2].when``)."""
    try:
        yield
    except ValidationError as error:
        field = f"{prefix}.{error.field}" if error.field else prefix
        raise ValidationError(field, error.message, accepted=error.accepted) from None
