"""Tools as function-calling specifications: each argument's JSON schema and its check.

A small subset of JSON Schema (string, integer, object; enum, minimum, pattern, maxLength),
enough for the agent tools, checked here so that every bad argument is refused with a message
naming it (a string longer than its ``maxLength`` before any request: a long one in a query
string had made the server drop the request, and the tool answer "cannot reach the server").
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, NotRequired, TypedDict, TypeVar

from jupyter_recall.client.json_values import check_json
from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.text import check_plain_text, check_unicode

T = TypeVar("T")


class ToolOk(TypedDict):
    """The head of every answer of a call that succeeded, ``{"ok": true, "tool": name, ...}``:
    each tool's answer is a ``TypedDict`` that adds its own fields to these two."""

    ok: Literal[True]
    tool: str


class ToolFailure(TypedDict):
    """The answer of a call that failed: ``field`` names the argument at fault (or ``None``),
    ``accepted`` lists the values it takes when there is a fixed set."""

    ok: Literal[False]
    error: str
    field: str | None
    accepted: NotRequired[list[str]]


A = TypeVar("A", bound=ToolOk)
A_co = TypeVar("A_co", bound=ToolOk, covariant=True)


class ParamSchema(TypedDict, total=False):
    """The JSON schema of one argument (the subset the tools use)."""

    type: str
    description: str
    enum: list[str]
    minimum: float
    maximum: float
    pattern: str
    maxLength: int
    minLength: int
    default: Any
    minItems: int
    maxItems: int
    items: ParamSchema
    properties: dict[str, ParamSchema]
    required: list[str]
    additionalProperties: bool


class InputSchema(TypedDict):
    """The JSON schema of a tool's arguments."""

    type: str
    properties: dict[str, ParamSchema]
    required: list[str]
    additionalProperties: bool


class FunctionSpec(TypedDict):
    name: str
    description: str
    parameters: InputSchema


class OpenAISpec(TypedDict):
    """A tool as OpenAI's function calling takes it."""

    type: str
    function: FunctionSpec


class AnthropicSpec(TypedDict):
    """A tool as Anthropic's tool use (and MCP) takes it."""

    name: str
    description: str
    input_schema: InputSchema


def _clipped(text: str) -> str:
    return text if len(text) <= 80 else text[:77] + "..."


def _shown(value: Any) -> str:
    try:
        return _clipped(json.dumps(value))
    except (TypeError, ValueError):  # no JSON value (bytes, a set, an object): its type too
        return _clipped(f"{type(value).__name__} {value!r}")


@dataclass(frozen=True)
class Param:
    """One argument of a tool: its JSON schema and its check."""

    name: str
    type: str
    description: str
    required: bool = False
    enum: tuple[str, ...] = ()
    minimum: int | None = None
    pattern: str | None = None
    default: Any = None
    max_length: int | None = None
    """A string's most characters (its ``maxLength``)."""
    plain: bool = False
    """A string that reaches a path or a URL (a file, a notebook, a session): no NUL either
    (``core.text.check_plain_text``). Every string must be Unicode text (no lone surrogate)."""

    def schema(self) -> ParamSchema:
        schema: ParamSchema = {"type": self.type, "description": self.description}
        if self.enum:
            schema["enum"] = list(self.enum)
        if self.minimum is not None:
            schema["minimum"] = self.minimum
        if self.pattern is not None:
            schema["pattern"] = self.pattern
        if self.max_length is not None:
            schema["maxLength"] = self.max_length
        if self.default is not None:
            schema["default"] = self.default
        return schema

    def check(self, value: Any) -> Any:
        checker = _CHECKERS[self.type]
        return checker(self, value)


def _check_string(param: Param, value: Any) -> str:
    if not isinstance(value, str):
        raise ValidationError(param.name, f"must be a string, got {_shown(value)}")
    if param.plain:
        check_plain_text(value, param.name)
    else:
        check_unicode(value, param.name)
    if param.max_length is not None and len(value) > param.max_length:
        raise ValidationError(
            param.name,
            f"is {len(value):,} characters long; at most {param.max_length:,} are accepted",
        )
    if param.enum and value not in param.enum:
        shown = _clipped(repr(value))
        raise ValidationError(param.name, f"unknown value {shown}", accepted=param.enum)
    if param.required and not value.strip():
        raise ValidationError(param.name, "must not be empty")
    if param.pattern is not None and not re.fullmatch(param.pattern, value):
        raise ValidationError(param.name, f"{_clipped(repr(value))} does not match {param.pattern}")
    return value


def _check_integer(param: Param, value: Any) -> int:
    # JSON numbers decoded as 900.0 are still the integer 900.
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(param.name, f"must be an integer, got {_shown(value)}")
    if param.minimum is not None and value < param.minimum:
        raise ValidationError(param.name, f"must be >= {param.minimum}, got {value}")
    return value


def _check_object(param: Param, value: Any) -> dict[str, object]:
    if not isinstance(value, Mapping):
        raise ValidationError(param.name, f"must be a JSON object, got {_shown(value)}")
    checked = {str(key): item for key, item in value.items()}
    check_json(checked, param.name)
    return checked


def _check_boolean(param: Param, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValidationError(param.name, f"must be true or false, got {_shown(value)}")
    return value


_CHECKERS: dict[str, Callable[[Param, Any], Any]] = {
    "string": _check_string,
    "integer": _check_integer,
    "boolean": _check_boolean,
    "object": _check_object,
}


@dataclass(frozen=True)
class ToolArguments:
    """One call's arguments once its specification checked them (types, enums, ranges; a left
    out argument holds its default): each read typed. Asking a reader of another type than the
    argument's, or for an argument the tool does not have, is a bug of the tool (``TypeError``,
    ``KeyError``), never the caller's."""

    tool: str
    values: Mapping[str, object]

    def _read(self, name: str, kind: type[T] | tuple[type[T], ...]) -> T | None:
        value = self.values[name]
        if value is None or isinstance(value, kind):
            return value
        raise TypeError(f"{self.tool}.{name} is a {type(value).__name__}")

    def optional_text(self, name: str) -> str | None:
        return self._read(name, str)

    def text(self, name: str) -> str:
        """A required string argument (or one with a default)."""
        value = self.optional_text(name)
        if value is None:
            raise ValidationError(name, f"required by {self.tool}")
        return value

    def optional_integer(self, name: str) -> int | None:
        return self._read(name, int)

    def integer(self, name: str) -> int:
        """An integer argument with a default (0 when the tool says "0: none")."""
        return self.optional_integer(name) or 0

    def flag(self, name: str) -> bool:
        """A boolean argument (false when left out)."""
        return bool(self._read(name, bool))

    def number(self, name: str) -> float:
        value = self._read(name, (int, float))
        if value is None:
            raise ValidationError(name, f"required by {self.tool}")
        return float(value)

    def texts(self, name: str) -> list[str] | None:
        value = self._read(name, list)
        return None if value is None else [str(item) for item in value]

    def items(self, name: str) -> list[object]:
        """An array argument's items (checked by its schema), ``[]`` when left out."""
        return list(self._read(name, list) or [])

    def mapping(self, name: str) -> dict[str, Any] | None:
        """A JSON object argument, free-form by nature (a tool's parameters, per-delivery
        settings, a machine-readable payload), ``None`` when left out."""
        value = self._read(name, dict)
        return None if value is None else dict(value)

    def given(self) -> dict[str, object]:
        """The arguments that have a value, as the caller gave them (or their default)."""
        return {name: value for name, value in self.values.items() if value is not None}

    def succeeded(self) -> ToolOk:
        """The head of this call's answer (its tool adds its fields after it)."""
        return {"ok": True, "tool": self.tool}


@dataclass(frozen=True)
class ToolSpec:
    """What an agent is told of a tool: its name, description and arguments, without what it
    does (a kernel and the MCP server run the same specification each in its own way)."""

    name: str
    description: str
    params: tuple[Param, ...]
    fields: Mapping[str, str] = field(default_factory=dict)
    """Server field names -> this tool's argument names, for error messages."""

    def input_schema(self) -> InputSchema:
        return {
            "type": "object",
            "properties": {param.name: param.schema() for param in self.params},
            "required": [param.name for param in self.params if param.required],
            "additionalProperties": False,
        }

    def spec(self, style: str = "openai") -> OpenAISpec | AnthropicSpec:
        parameters = self.input_schema()
        if style == "anthropic":
            return {"name": self.name, "description": self.description, "input_schema": parameters}
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": parameters,
            },
        }

    def arguments(self, given: Mapping[str, Any]) -> ToolArguments:
        known = {param.name for param in self.params}
        unknown = sorted(set(given) - known)
        if unknown:
            raise ValidationError(
                unknown[0], f"unknown argument of {self.name}", accepted=sorted(known)
            )
        values: dict[str, object] = {}
        for param in self.params:
            value = given.get(param.name)
            if value is None:
                if param.required:
                    raise ValidationError(param.name, f"required by {self.name}")
                values[param.name] = param.default
            else:
                values[param.name] = param.check(value)
        return ToolArguments(self.name, values)

    def bound(self, run: Callable[[ToolArguments], A]) -> Tool[A]:
        """This specification run by ``run``."""
        return Tool(self.name, self.description, self.params, run, self.fields)


@dataclass(frozen=True)
class Tool(Generic[A_co]):
    """A specification with what runs it (in this process), answering an ``A_co``."""

    name: str
    description: str
    params: tuple[Param, ...]
    run: Callable[[ToolArguments], A_co]
    fields: Mapping[str, str] = field(default_factory=dict)
    """Server field names -> this tool's argument names, for error messages."""

    @property
    def described(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.params, self.fields)

    def spec(self, style: str = "openai") -> OpenAISpec | AnthropicSpec:
        return self.described.spec(style)

    def arguments(self, given: Mapping[str, Any]) -> ToolArguments:
        return self.described.arguments(given)


TOOL_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*$"
"""Anchored: a JSON Schema ``pattern`` matches anywhere in the text, the checks the whole of it."""


@dataclass(frozen=True)
class ArrayParam(Param):
    min_items: int = 0
    max_items: int | None = None
    items: ParamSchema | None = None

    def schema(self) -> ParamSchema:
        schema: ParamSchema = {"type": "array", "description": self.description}
        schema["minItems"] = self.min_items
        if self.max_items is not None:
            schema["maxItems"] = self.max_items
        if self.items is not None:
            schema["items"] = self.items
        return schema

    def check(self, value: Any) -> Any:
        if not isinstance(value, list):
            raise ValidationError(self.name, f"must be an array, got {_shown(value)}")
        return value


@dataclass(frozen=True)
class NumberParam(Param):
    """A number between bounds; ``type`` ``integer`` for a whole one (a watcher's interval)."""

    maximum: float | None = None

    def schema(self) -> ParamSchema:
        schema = super().schema()
        if self.maximum is not None:
            schema["maximum"] = self.maximum
        return schema

    def check(self, value: Any) -> Any:
        whole = self.type == "integer"
        number = _check_integer(self, value) if whole else self._number(value)
        if self.maximum is not None and number > self.maximum:
            shown = number if whole else value  # an integer as read (900.0 is 900)
            raise ValidationError(self.name, f"must be <= {self.maximum:g}, got {shown}")
        return number

    def _number(self, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValidationError(self.name, f"must be a number, got {_shown(value)}")
        if self.minimum is not None and value < self.minimum:
            raise ValidationError(self.name, f"must be >= {self.minimum}, got {value}")
        return float(value)


def decode_arguments(arguments: Any) -> Mapping[str, Any]:
    if arguments is None:
        return {}
    if isinstance(arguments, (str, bytes)):
        try:
            arguments = json.loads(arguments or "{}")
        except ValueError as error:
            raise ValidationError("arguments", f"not valid JSON: {error}") from None
    if not isinstance(arguments, Mapping):
        raise ValidationError("arguments", f"must be a JSON object, got {_shown(arguments)}")
    return arguments


def failure(error: ValidationError, tool: ToolSpec | Tool[ToolOk] | None) -> ToolFailure:
    server_field = error.field
    argument = (tool.fields.get(server_field) if tool else None) or server_field
    if "." in argument and tool is not None and argument not in {p.name for p in tool.params}:
        argument = tool.fields.get(argument.split(".", 1)[0], argument)
    message = str(error)
    if server_field != argument and message.startswith(f"{server_field}: "):
        message = f"{argument}: " + message[len(server_field) + 2 :]
    result: ToolFailure = {"ok": False, "error": message, "field": argument}
    if error.accepted:
        result["accepted"] = list(error.accepted)
    return result
