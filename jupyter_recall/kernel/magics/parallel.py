"""``%parallel`` / ``%%parallel``: tool calls at once from a cell.

```text
%parallel http.get url=https://example.org ; filesystem.read path=notes.txt
%parallel --limit http=2 http.get url=https://a.org ; http.get url=https://b.org
%%parallel                     one call per line (or ';'), or a JSON list of {name, params}
shell.run command='sleep 1; echo a'
shell.run command='sleep 1; echo b'
```

``key=value`` values are read as JSON when they are JSON (``timeout=5``, ``append=true``,
``headers='{"A": "b"}'``), else as text; quote values with spaces or ``;``. The magic shows a
table and returns the results (``results = %parallel ...``).
"""

from __future__ import annotations

import html
import json
import shlex
import sys
from collections.abc import Iterable, Sequence
from typing import Any, TypedDict

from jupyter_recall.core.errors import RecallError, ValidationError
from jupyter_recall.kernel.calls.primitives import run_parallel
from jupyter_recall.kernel.magics.writ import UNKNOWN_OPTION
from jupyter_recall.tools import ToolResult

USAGE = """\
usage:
  %parallel [--limit module=n,...] tool key=value ... ; tool key=value ...
  %%parallel [--limit module=n,...]   one call per line, or a JSON list of {"name", "params"}
options:
  --limit module=n,...  at most n calls of that module at once (default http=10, shell=4)
example: results = %parallel http.get url=https://example.org ; filesystem.read path=notes.txt"""
SUMMARY_WIDTH = 100
SHOWN = 60
"""Characters of an unreadable line shown in its error."""


class ParallelResults(list[ToolResult]):
    """The results of ``run_parallel``, shown as a table."""

    def _rows(self) -> Iterable[tuple[str, str, str, str]]:
        for result in self:
            ok = "ok" if result.get("success") else "failed"
            shown = result.get("data") if result.get("success") else result.get("error")
            text = shown if isinstance(shown, str) else json.dumps(shown, default=repr)
            if len(text) > SUMMARY_WIDTH:
                text = text[: SUMMARY_WIDTH - 3] + "..."
            yield str(result.get("index")), str(result.get("name")), ok, text

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        lines = [f"{i:>3}  {name:<20} {ok:<7} {text}" for i, name, ok, text in self._rows()]
        printer.text("\n".join(lines))

    def _repr_html_(self) -> str:
        rows = "".join(
            "<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>"
            for row in self._rows()
        )
        head = "<tr><th>#</th><th>tool</th><th>result</th><th>data / error</th></tr>"
        return f"<table>{head}{rows}</table>"


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _tokens(text: str) -> list[str]:
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError as error:
        # shlex says "No closing quotation" / "No escaped character"; the line may be long.
        shown = text if len(text) <= SHOWN else text[:SHOWN] + "..."
        raise ValidationError("actions", f"cannot read {shown!r}: {error}") from None


class ToolCall(TypedDict):
    """One call of ``%parallel``: the tool and its (free-form) parameters."""

    name: str
    params: dict[str, Any]


def _action(words: list[str], index: int) -> ToolCall:
    name, *pairs = words
    params = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals or not key.isidentifier():
            raise ValidationError(
                f"actions[{index}].params", f"expected key=value after {name}, got {pair!r}"
            )
        params[key] = _value(value)
    return {"name": name, "params": params}


def parse_actions(text: str) -> list[ToolCall]:
    """Calls separated by ``;`` or new lines: ``tool key=value ...``."""
    actions: list[ToolCall] = []
    words: list[str] = []
    for token in [*_tokens(text.replace("\n", " ; ")), ";"]:
        if token != ";":
            words.append(token)
        elif words:
            actions.append(_action(words, len(actions)))
            words = []
    return actions


def parse_limits(text: str) -> dict[str, int]:
    limits: dict[str, int] = {}
    for item in filter(None, text.split(",")):
        module, equals, count = item.partition("=")
        if not equals or not count.strip().isdigit():
            raise ValidationError("--limit", f"expected module=n, got {item!r}")
        limits[module.strip()] = int(count)
    return limits


def _options(line: str) -> tuple[dict[str, int] | None, str]:
    words = line.strip().split(None, 2)
    if words[:1] == ["--limit"]:
        if len(words) < 2:
            raise ValidationError("--limit", "expected module=n[,module=n]")
        return parse_limits(words[1]), words[2] if len(words) > 2 else ""
    if words and words[0].startswith("--"):
        # Else read as a tool named "--bogus", refused as an unknown tool.
        raise ValidationError(words[0], UNKNOWN_OPTION, accepted=["--limit"])
    return None, line


def _cell_actions(cell: str) -> Sequence[object]:
    """The calls of the cell: ``tool key=value`` lines, or a JSON list (``run_parallel``
    checks each item, naming it)."""
    body = cell.strip()
    if body.startswith("{"):
        # One object is JSON too, but not calls written one per line: say what the JSON must be.
        raise ValidationError("actions", "the JSON must be a list of {name, params}, not an object")
    if body.startswith("["):
        try:
            actions = json.loads(body)
        except ValueError as error:
            raise ValidationError("actions", f"not a valid JSON list: {error}") from None
        if not isinstance(actions, list):
            raise ValidationError("actions", "the JSON must be a list of {name, params}")
        return actions
    return parse_actions(body)


def run_parallel_magic(line: str, cell: str | None) -> ParallelResults | None:
    try:
        limits, rest = _options(line)
        actions = _cell_actions(cell) if cell is not None else parse_actions(rest)
        if not actions:
            print(USAGE)
            return None
        return ParallelResults(run_parallel(actions, limits=limits))
    except RecallError as error:
        print(f"%parallel: {error}", file=sys.stderr)
        return None
