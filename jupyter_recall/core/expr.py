"""Safe threshold expressions: a hand-written tokenizer and recursive-descent parser.

Watchers with the ``on_threshold`` strategy decide with a condition such as
``result.status_code != 200`` or ``result.data.progress >= 100``. The text comes from users and
agents, so it is never handed to ``eval`` or any Python parser: it is read by the grammar
below, into a small tree whose only operations are dictionary and list lookups and
comparisons of JSON values. Anything else is a ``ValidationError`` naming the expression.

Grammar::

    expression  := disjunction END
    disjunction := conjunction ("or" conjunction)*
    conjunction := negation ("and" negation)*
    negation    := "not" negation | "(" disjunction ")" | comparison
    comparison  := operand ("==" | "!=" | ">" | "<" | ">=" | "<=") operand
    operand     := path | number | string | "null" | "true" | "false"
    path        := "result" ("." (name | index))*

Evaluation never raises: a path that leads nowhere is ``null``; an ordering between values of
different kinds (a number and a string, anything and null) is false.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jupyter_recall.core.errors import ExpressionSyntaxError, ValidationError

MAX_LENGTH = 1000
MAX_DEPTH = 32
"""Nested parentheses and ``not``: bounds the recursion of the parser and of evaluation."""
ROOT = "result"
OPERATORS = ("==", "!=", ">", "<", ">=", "<=")
KEYWORDS = ("and", "or", "not", "null", "true", "false")
ACCEPTED = (
    "result.<path> <operator> <value>, e.g. result.status_code != 200",
    "paths: result.a.b, list items as result.items.0",
    "operators: == != > < >= <=",
    "values: numbers, 'quoted' or \"quoted\" strings, null, true, false, other paths",
    "combine with and, or, not and parentheses",
)

_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INDEX = re.compile(r"[0-9]+")
_SPACE = re.compile(r"[ \t\r\n]+")
_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "t": "\t"}
_LITERAL_WORDS: dict[str, bool | None] = {"null": None, "true": True, "false": False}


# --- the tree -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Literal:
    value: str | int | float | bool | None

    def value_in(self, result: Any) -> Any:
        return self.value

    def __str__(self) -> str:
        if self.value is None:
            return "null"
        if isinstance(self.value, bool):
            return "true" if self.value else "false"
        if isinstance(self.value, str):
            escaped = self.value.replace("\\", "\\\\").replace('"', '\\"')
            return '"' + escaped.replace("\n", "\\n").replace("\t", "\\t") + '"'
        return repr(self.value)


@dataclass(frozen=True, slots=True)
class Path:
    segments: tuple[str | int, ...]
    """After the root ``result``: key names and list indexes."""

    def value_in(self, result: Any) -> Any:
        current = result
        for segment in self.segments:
            current = _step(current, segment)
        return current

    def __str__(self) -> str:
        return ".".join([ROOT, *(str(segment) for segment in self.segments)])


Operand = Literal | Path


def _step(value: Any, segment: str | int) -> Any:
    if isinstance(segment, int):
        if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
            return value[segment] if segment < len(value) else None
        if isinstance(value, Mapping):
            return value.get(str(segment))
        return None
    if isinstance(value, Mapping):
        return value.get(segment)
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _equal(left: Any, right: Any) -> bool:
    # JSON booleans are not numbers: true == 1 is false here, unlike in Python.
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left is right
    if _is_number(left) and _is_number(right):
        return bool(left == right)
    return type(left) is type(right) and bool(left == right)


def _ordered(op: str, left: Any, right: Any) -> bool:
    comparable = (_is_number(left) and _is_number(right)) or (
        isinstance(left, str) and isinstance(right, str)
    )
    if not comparable:
        return False
    if op == ">":
        return bool(left > right)
    if op == "<":
        return bool(left < right)
    if op == ">=":
        return bool(left >= right)
    return bool(left <= right)


@dataclass(frozen=True, slots=True)
class Compare:
    op: str
    left: Operand
    right: Operand

    def holds(self, result: Any) -> bool:
        left, right = self.left.value_in(result), self.right.value_in(result)
        if self.op == "==":
            return _equal(left, right)
        if self.op == "!=":
            return not _equal(left, right)
        return _ordered(self.op, left, right)

    def __str__(self) -> str:
        return f"{self.left} {self.op} {self.right}"


@dataclass(frozen=True, slots=True)
class Not:
    item: Condition

    def holds(self, result: Any) -> bool:
        return not self.item.holds(result)

    def __str__(self) -> str:
        return f"not {_grouped(self.item)}"


@dataclass(frozen=True, slots=True)
class And:
    items: tuple[Condition, ...]

    def holds(self, result: Any) -> bool:
        return all(item.holds(result) for item in self.items)

    def __str__(self) -> str:
        return " and ".join(_grouped(item) for item in self.items)


@dataclass(frozen=True, slots=True)
class Or:
    items: tuple[Condition, ...]

    def holds(self, result: Any) -> bool:
        return any(item.holds(result) for item in self.items)

    def __str__(self) -> str:
        return " or ".join(_grouped(item) for item in self.items)


Condition = Compare | Not | And | Or


def _grouped(item: Condition) -> str:
    return f"({item})" if isinstance(item, (And, Or)) else str(item)


@dataclass(frozen=True, slots=True)
class Expression:
    """A parsed condition: ``holds(result)`` decides; ``str()`` is its canonical text."""

    text: str
    condition: Condition

    def holds(self, result: Any) -> bool:
        return self.condition.holds(result)

    def __str__(self) -> str:
        return str(self.condition)


# --- the tokenizer ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Token:
    kind: str
    """``name``, ``index``, ``number``, ``string``, ``op``, ``.``, ``(``, ``)`` or ``end``."""
    text: str
    value: Any
    position: int


def _read_string(text: str, start: int) -> tuple[str, int]:
    quote = text[start]
    chars: list[str] = []
    position = start + 1
    while position < len(text):
        char = text[position]
        if char == quote:
            return "".join(chars), position + 1
        if char == "\\":
            escaped = text[position + 1 : position + 2]
            if escaped not in _ESCAPES:
                raise ExpressionSyntaxError(f"unknown escape \\{escaped}", position)
            chars.append(_ESCAPES[escaped])
            position += 2
            continue
        chars.append(char)
        position += 1
    raise ExpressionSyntaxError("unterminated string", start)


def _read_number(match: re.Match[str], position: int) -> Token:
    text = match.group()
    value: int | float = float(text) if any(c in text for c in ".eE") else int(text)
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        raise ExpressionSyntaxError(f"number {text} is too large", position)
    return Token("number", text, value, position)


def _next_token(text: str, position: int, previous: Token | None) -> Token:
    char = text[position]
    after_dot = previous is not None and previous.kind == "."
    if after_dot and (index := _INDEX.match(text, position)):
        return Token("index", index.group(), int(index.group()), position)
    if char in "'\"":
        value, end = _read_string(text, position)
        return Token("string", text[position:end], value, position)
    two = text[position : position + 2]
    if two in OPERATORS:
        return Token("op", two, two, position)
    if char in "<>":
        return Token("op", char, char, position)
    if char in ".()":
        return Token(char, char, char, position)
    if number := _NUMBER.match(text, position):
        return _read_number(number, position)
    if name := _NAME.match(text, position):
        return Token("name", name.group(), name.group(), position)
    raise ExpressionSyntaxError(f"unexpected character {char!r}", position)


def tokenize(text: str) -> Iterator[Token]:
    """Tokens one at a time, so that the parser reports the earliest fault; ends with ``end``."""
    previous: Token | None = None
    position = 0
    while True:
        space = _SPACE.match(text, position)
        if space:
            position = space.end()
        if position >= len(text):
            yield Token("end", "", None, position)
            return
        previous = _next_token(text, position, previous)
        yield previous
        position += len(previous.text)


# --- the parser -------------------------------------------------------------------------------


class _Parser:
    def __init__(self, tokens: Iterator[Token]) -> None:
        self.tokens = tokens
        self.current = next(tokens)
        self.depth = 0

    def advance(self) -> Token:
        token = self.current
        if token.kind != "end":
            self.current = next(self.tokens)
        return token

    def at_word(self, word: str) -> bool:
        return self.current.kind == "name" and self.current.value == word

    def fail(self, reason: str) -> ExpressionSyntaxError:
        token = self.current
        found = "the end" if token.kind == "end" else repr(token.text)
        return ExpressionSyntaxError(f"{reason}, found {found}", token.position)

    def expression(self) -> Condition:
        condition = self.disjunction()
        if self.current.kind != "end":
            raise self.fail("expected and, or or the end")
        return condition

    def disjunction(self) -> Condition:
        items = [self.conjunction()]
        while self.at_word("or"):
            self.advance()
            items.append(self.conjunction())
        return items[0] if len(items) == 1 else Or(tuple(items))

    def conjunction(self) -> Condition:
        items = [self.negation()]
        while self.at_word("and"):
            self.advance()
            items.append(self.negation())
        return items[0] if len(items) == 1 else And(tuple(items))

    def negation(self) -> Condition:
        if not (self.at_word("not") or self.current.kind == "("):
            return self.comparison()
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.fail(f"nested deeper than {MAX_DEPTH} levels")
        if self.at_word("not"):
            self.advance()
            condition: Condition = Not(self.negation())
        else:
            self.advance()
            condition = self.disjunction()
            if self.current.kind != ")":
                raise self.fail("expected ')'")
            self.advance()
        self.depth -= 1
        return condition

    def comparison(self) -> Compare:
        left = self.operand()
        if self.current.kind != "op":
            raise self.fail(f"expected an operator ({' '.join(OPERATORS)})")
        op = self.advance().value
        return Compare(op, left, self.operand())

    def operand(self) -> Operand:
        token = self.current
        if token.kind in ("number", "string"):
            self.advance()
            return Literal(token.value)
        if token.kind != "name":
            raise self.fail("expected a path (result.…), a number, a quoted string or a word")
        if token.value in _LITERAL_WORDS:
            self.advance()
            return Literal(_LITERAL_WORDS[token.value])
        if token.value != ROOT:
            raise self.fail(f"paths start with '{ROOT}' (values: null, true, false, quoted)")
        self.advance()
        return Path(self.segments())

    def segments(self) -> tuple[str | int, ...]:
        found: list[str | int] = []
        while self.current.kind == ".":
            self.advance()
            token = self.current
            if token.kind not in ("name", "index"):
                raise self.fail("expected a key name or a list index after '.'")
            found.append(token.value)
            self.advance()
        return tuple(found)


def parse_expression(text: object, *, field: str = "expression") -> Expression:
    """Parse a threshold condition, or raise ValidationError (``field``) naming the text."""
    if not isinstance(text, str):
        raise ValidationError(field, f"must be a string, got {text!r}", accepted=ACCEPTED)
    if not text.strip():
        raise ValidationError(field, "must not be empty", accepted=ACCEPTED)
    if len(text) > MAX_LENGTH:
        raise ValidationError(
            field, f"longer than {MAX_LENGTH} characters: {text[:40]!r}…", accepted=ACCEPTED
        )
    try:
        condition = _Parser(tokenize(text)).expression()
    except ExpressionSyntaxError as failure:
        raise ValidationError(
            field,
            f"cannot parse {text!r}: {failure.reason} at position {failure.position}",
            accepted=ACCEPTED,
        ) from None
    return Expression(text, condition)
