"""Request bodies, decoded and bounded in one place for every route.

What a handler gets from ``decode_body`` is a JSON object of UTF-8 text, at most
``MAX_BODY_BYTES`` long and ``MAX_DEPTH`` deep, whose numbers are finite (integers of at most
``MAX_INTEGER_DIGITS`` digits) and whose strings are valid Unicode (no lone surrogates).
Anything else is a ValidationError naming where it is (``body``, ``jobs[0]``, ``name``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from typing import Any

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.limits import MAX_BODY_BYTES, MAX_DEPTH, MAX_INTEGER_DIGITS

BODY = "body"
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def holds_lone_surrogate(text: str) -> bool:
    """Whether ``text`` holds a lone UTF-16 surrogate (only a ``\\u`` escape in JSON makes
    one): no store or encoder can take it."""
    return _LONE_SURROGATE.search(text) is not None


def decode_body(raw: bytes) -> dict[str, Any]:
    """The request body as a JSON object (``{}`` when empty), or a ValidationError."""
    if len(raw) > MAX_BODY_BYTES:
        raise ValidationError(
            BODY, f"is {len(raw):,} bytes; at most {MAX_BODY_BYTES:,} bytes are accepted"
        )
    if not raw.strip():
        return {}
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValidationError(BODY, f"is not UTF-8 text (byte {error.start})") from None
    value = _parse(text)
    if not isinstance(value, dict):
        raise ValidationError(BODY, f"must be a JSON object, got {json_type(value)}")
    if _may_break_bounds(text):
        _check_tree(value)
    return value


def _may_break_bounds(text: str) -> bool:
    """Whether walking the decoded document could find what ``_check_tree`` refuses: a lone
    surrogate comes only from a ``\\u`` escape (UTF-8 text holds none), and a container
    deeper than ``MAX_DEPTH`` needs more than ``MAX_DEPTH`` brackets. Most bodies have
    neither, and the walk cost as much as decoding them."""
    return "\\u" in text or text.count("{") + text.count("[") > MAX_DEPTH


def json_type(value: object) -> str:
    """The JSON name of a decoded value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _parse(text: str) -> Any:
    try:
        if text.startswith("\ufeff"):  # as json.loads says it
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        return _DECODER.decode(text)
    except json.JSONDecodeError as error:
        raise ValidationError(BODY, f"is not valid JSON: {error}") from None
    except RecursionError:
        raise ValidationError(
            BODY, f"is nested too deeply: at most {MAX_DEPTH} levels are accepted"
        ) from None


def _refuse_constant(name: str) -> Any:
    raise ValidationError(BODY, f"{name} is not a JSON number; only finite numbers are accepted")


def _bounded_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INTEGER_DIGITS:
        raise ValidationError(
            BODY,
            f"holds an integer of {len(digits.lstrip('-')):,} digits "
            f"({digits[:12]}...); at most {MAX_INTEGER_DIGITS} digits are accepted",
        )
    return int(digits)


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValidationError(BODY, f"the number {text[:30]} is too large to be finite")
    return number


_DECODER = json.JSONDecoder(
    parse_constant=_refuse_constant, parse_int=_bounded_int, parse_float=_finite_float
)
"""Made once: ``json.loads`` with hooks makes a decoder, and its scanner, on every call."""


def _check_tree(document: dict[str, Any]) -> None:
    for path, depth, value in _walk(document):
        if depth > MAX_DEPTH and isinstance(value, (dict, list)):
            raise ValidationError(
                path, f"is nested too deeply: at most {MAX_DEPTH} levels are accepted"
            )
        if isinstance(value, str) and holds_lone_surrogate(value):
            raise ValidationError(path, "holds a lone UTF-16 surrogate, which is not text")
        if isinstance(value, str) and "\x00" in value:
            # No text a user means holds one (Python refuses it in source), and PostgreSQL
            # cannot store it: refused here, for every store alike, naming where it is.
            raise ValidationError(path, "must not contain a NUL character: give text without it")


def _walk(document: dict[str, Any]) -> Iterator[tuple[str, int, Any]]:
    """Every value and key of the document with its path and depth, without recursion."""
    stack: list[tuple[str, int, Any]] = [("", 1, document)]
    while stack:
        path, depth, value = stack.pop()
        yield path or BODY, depth, value
        if isinstance(value, dict):
            for key, item in value.items():
                child = f"{path}.{key}" if path else str(key)
                yield child, depth, key
                stack.append((child, depth + 1, item))
        elif isinstance(value, list):
            stack.extend((f"{path}[{i}]", depth + 1, item) for i, item in enumerate(value))
