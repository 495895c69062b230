"""``%watch``: watchers from a cell (``kernel/watchers/watch.py``).

```text
%watch filesystem.read path=build.log --every 10 --notify on_change --label "build log"
%watch http.get url=https://example.org/health --notify on_error
%watch filesystem.read path=train.json --notify on_threshold --expression "result.size > 1000"
%watch list [--all] | status <id> | history <id> [--last 20] | pause|resume|stop <id>
```

``key=value`` values are read as JSON when they are JSON (``timeout=5``), else as text; quote
values with spaces. Domain errors are printed as the server's message on stderr.
"""

from __future__ import annotations

import html
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypedDict

from IPython.core.magic import Magics, line_magic, magics_class, no_var_expand
from IPython.display import display

from jupyter_recall.client import tables
from jupyter_recall.core.errors import RecallError, ValidationError
from jupyter_recall.kernel.magics.jobs import resolve_reference, show_card
from jupyter_recall.kernel.magics.writ import (
    MagicOptions,
    Option,
    documented,
    named_as_typed,
    options_usage,
    split_options,
    subcommand_arguments,
)
from jupyter_recall.kernel.watchers import watch

START_OPTIONS = (
    Option(
        "--every",
        "interval",
        integer=True,
        metavar="SECONDS",
        help="between checks: 5-3600 (default 30)",
    ),
    Option("--label", "label", metavar="TEXT", help="the watcher's name"),
    Option(
        "--notify",
        "notify_when",
        metavar="STRATEGY",
        help="on_change (default)|on_error|on_threshold|summary|always",
    ),
    Option(
        "--expression",
        "expression",
        metavar="EXPR",
        help="on_threshold's condition: 'result.status_code != 200'",
    ),
    Option(
        "--batch-size",
        "batch_size",
        integer=True,
        help="summary: notify every N checks (default 10)",
    ),
    Option("--channel", "output_channel", metavar="NAME", help="notify there, not this session"),
    Option("--params", "params", metavar="JSON", help="the tool's parameters: '{\"key\": 1}'"),
)
ALL = Option("--all", "all", takes_value=False, help="list: every watcher of the user")
LAST = Option("--last", "last", integer=True, help="status, history: the N latest checks (10)")
COMMAND_OPTIONS = (ALL, LAST)
USAGE = f"""\
usage:
  %watch <tool> key=value ... [options]       start a watcher (start is optional)
  %watch list [--all] | status <id> | history <id> [--last N] | pause|resume|stop <id>
                                              <id> may be {{expr}} or $name
{options_usage(START_OPTIONS + COMMAND_OPTIONS)}
example: %watch filesystem.read path=build.log --every 10 --label 'build log'"""
NEEDS_ID = ("status", "history", "pause", "resume", "stop")
COMMANDS = ("list", *NEEDS_ID)
OPTIONS_OF = {"list": (ALL,), "status": (LAST,), "history": (LAST,)}
"""The options each subcommand takes: ``--all`` lists, ``--last`` shows checks."""
COLUMNS = ("id", "label", "tool", "every", "strategy", "status", "checks", "notified", "last check")
HISTORY_COLUMNS = ("check", "at", "result", "reason", "notified")
RESULT_WIDTH = 60


def _show(bundle: dict[str, str]) -> None:
    show: Callable[..., Any] = display
    show(bundle, raw=True)


def _bundle(header: Sequence[str], rows: list[tuple[str, ...]], empty: str) -> dict[str, str]:
    if not rows:
        return {"text/plain": empty, "text/html": f"<p>{html.escape(empty)}</p>"}
    return {
        "text/plain": tables.text_table(header, rows),
        "text/html": tables.html_table(header, rows),
    }


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _params(words: Sequence[str], given: str | None) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if given is not None:
        decoded = _value(given)
        if not isinstance(decoded, dict):
            raise ValidationError("--params", f"must be a JSON object, got {given!r}")
        params.update(decoded)
    for pair in words:
        key, equals, value = pair.partition("=")
        if not equals or not key.isidentifier():
            raise ValidationError("params", f"expected key=value after the tool, got {pair!r}")
        params[key] = _value(value)
    return params


class NotifyConfig(TypedDict, total=False):
    """The escalation settings ``--expression`` and ``--batch-size`` give."""

    expression: str
    batch_size: int


def _notify_config(options: MagicOptions) -> NotifyConfig:
    config: NotifyConfig = {}
    expression, batch_size = options.text("expression"), options.integer("batch_size")
    if expression is not None:
        config["expression"] = expression
    if batch_size is not None:
        config["batch_size"] = batch_size
    return config


def start(words: list[str], options: MagicOptions) -> watch.Watcher:
    if words[:1] == ["start"]:
        words = words[1:]
    if not words:
        raise ValidationError("tool", "missing: %watch <module.action> key=value ...")
    notify_when = options.text("notify_when")
    if notify_when is None and "expression" in options:
        notify_when = "on_threshold"
    if notify_when is None and "batch_size" in options:
        notify_when = "summary"
    interval = options.integer("interval")
    with named_as_typed(START_OPTIONS):
        created = watch.watch_start(
            words[0],
            _params(words[1:], options.text("params")),
            interval=watch.DEFAULT_INTERVAL if interval is None else interval,
            label=options.text("label") or "",
            notify_when=notify_when or "on_change",
            notify_config=_notify_config(options),
            output_channel=options.text("output_channel"),
        )
    print(f"watcher {created.id}: {created.get('hint')}")

    show_card(created)
    return created


def _row(watcher: Mapping[str, Any]) -> tuple[str, ...]:
    return (
        str(watcher.get("watcher_id")),
        str(watcher.get("label") or "-"),
        str(watcher.get("tool_name")),
        f"{watcher.get('interval')}s",
        str(watcher.get("notify_when")),
        str(watcher.get("status")),
        str(watcher.get("checks", 0)),
        str(watcher.get("notifications", 0)),
        tables.short_instant(watcher.get("last_check_at")),
    )


def show_list(everything: bool) -> None:
    found = watch.watch_list(all=everything)
    empty = "no watchers" + ("" if everything else " for this notebook")
    _show(_bundle(COLUMNS, [_row(w) for w in found], empty))


def _shown_result(entry: Mapping[str, Any]) -> str:
    """The check's value as a person reads it (``tables.result_text``), not its raw JSON."""
    result = entry.get("result") or {}
    if result.get("success"):
        return tables.result_text(result.get("data"), RESULT_WIDTH)
    return tables.clip(f"error: {result.get('error')}", RESULT_WIDTH)


def _history_rows(history: Sequence[Mapping[str, Any]]) -> list[tuple[str, ...]]:
    return [
        (
            str(entry.get("check")),
            tables.short_instant(entry.get("checked_at")),
            " ".join(_shown_result(entry).split()),
            str(entry.get("reason")),
            "yes" if entry.get("notified") else "",
        )
        for entry in history
    ]


def show_status(watcher_id: str, last_n: int) -> None:
    current = watch.watch_status(watcher_id, last_n=last_n)
    config = json.dumps(current.get("notify_config") or {})
    print(
        f"watcher {current.id} {current.get('label')!r}: {current.get('tool_name')} "
        f"{json.dumps(current.get('params'))} every {current.get('interval')}s, "
        f"{current.get('notify_when')} {config}, {current.get('status')}\n"
        f"{current.get('checks')} checks, {current.get('notifications')} notifications, "
        f"last check {tables.short_instant(current.get('last_check_at'))}, next "
        f"{tables.short_instant(current.get('next_check_at'))}, notifications to "
        f"{current.get('output_channel') or 'this session'}"
    )
    _show(_bundle(HISTORY_COLUMNS, _history_rows(current["history"]), "no checks yet"))


def _command(name: str, argument: str | None, options: MagicOptions) -> None:
    if name == "list":
        show_list(options.flag("all"))
        return
    if argument is None:
        raise ValidationError(name, f"needs a watcher id: %watch {name} <id>")
    last = options.integer("last")
    last_n = watch.DEFAULT_HISTORY if last is None else last
    if name in ("status", "history"):
        show_status(argument, last_n)
    elif name == "stop":
        watch.watch_stop(argument)
        print(f"stopped watcher {argument}; its history is deleted")
    else:
        changed = watch.watch_pause(argument) if name == "pause" else watch.watch_resume(argument)
        print(f"watcher {changed.id}: {changed.get('status')}")


def run_watch(line: str) -> None:
    line = line.strip()
    if not line:
        print(USAGE)
        show_list(False)
        return
    first, *rest = line.split(None, 1)
    if first in COMMANDS:
        # An id may be {expr}, spaces and quotes included (split_arguments).
        arguments, options = subcommand_arguments(first, "".join(rest), OPTIONS_OF, magic="watch")
        _check_arguments(first, arguments)
        _command(first, resolve_reference(arguments[0] if arguments else None), options)
        return
    words, options = split_options(line, START_OPTIONS)
    start(words, options)


def _check_arguments(name: str, arguments: list[str]) -> None:
    """``list`` takes no argument, the others one watcher id."""
    given = " ".join(arguments)
    if name == "list" and arguments:
        raise ValidationError(name, f"takes no arguments, got {given!r}")
    if len(arguments) > 1:
        raise ValidationError(name, f"takes one watcher id, got {given!r}")


@magics_class
class WatchMagics(Magics):
    """``%watch``; registered by ``%load_ext jupyter_recall``."""

    @line_magic
    @no_var_expand  # stored as typed, parsed in linear time (see magics.py)
    @documented("Watch a tool: check it on an interval, be notified when it changes.", USAGE)
    def watch(self, line: str) -> None:
        try:
            run_watch(line)
        except RecallError as error:
            print(str(error), file=sys.stderr)
