"""The one writ syntax of the magics: ``[options] <when>: <what>``.

The schedule text ends at the first ``:`` followed by a space or by the end of the line, so
``at 09:00`` and ISO instants keep their colons, and the code after the separator may hold any.
Options (``--tz Europe/Paris``, ``--name "nightly report"``, ``--headless``) may come anywhere
before the separator. Parsing is pure: the server parses the time itself.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from jupyter_recall.core.errors import ParseError, ValidationError, renamed_by
from jupyter_recall.core.when_words import VOCABULARY

SUBCOMMANDS_SCHEDULE = (
    "list",
    "cancel",
    "delete",
    "pause",
    "resume",
    "skip",
    "run",
    "status",
    "info",
)
SUBCOMMANDS_RECALL = ("list", "cancel", "skip", "status")
SUBCOMMAND_CUTOFF = 0.6
"""How alike (difflib ratio) a word must be to a subcommand to be offered: "cancle", "lsit"."""
WORD_CUTOFF = 0.75
"""As ``core/suggest.py``: a word this close to one of a time is a mistyped time."""
NEEDS_ID = ("cancel", "delete", "pause", "resume", "skip", "run", "status")
OptionValue = str | int | float | bool
"""An option's value: its text, a count, seconds, or True for a flag."""
F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Option:
    """One ``--flag`` of a magic: how it is read, and how its usage shows it (``metavar`` names
    its value, ``help`` says what it does: the usage is made from the options, never apart)."""

    flag: str
    key: str
    takes_value: bool = True
    integer: bool = False
    seconds: bool = False
    zero: bool = False
    """With ``seconds``: 0 is a value too (a retry's backoff, as REST's ``backoff: 0``; a
    time limit must be above 0)."""
    minimum: int = 0
    """With ``integer``: the least count (``--max-runs`` 1; ``--keep-runs`` 0)."""
    metavar: str = ""
    help: str = ""

    @property
    def spelled(self) -> str:
        """As the usage writes it: ``--max-runs N``, ``--headless``."""
        if not self.takes_value:
            return self.flag
        return f"{self.flag} {self.metavar or ('N' if self.integer else 'VALUE')}"

    def convert(self, value: str) -> OptionValue:
        if self.seconds:
            return _seconds(self.flag, value, zero=self.zero)
        if not self.integer:
            return value
        if not re.fullmatch(r"[0-9]+", value) or int(value) < self.minimum:
            bound = (
                "a positive integer"
                if self.minimum == 1
                else f"an integer of {self.minimum} or more"
            )
            raise ValidationError(self.flag, f"must be {bound}, got {value!r}")
        return int(value)


def named_as_typed(options: tuple[Option, ...]) -> AbstractContextManager[None]:
    """A ValidationError leaving the block names the option the user typed (``typed_flag``)."""
    return renamed_by(lambda error: typed_flag(error, options))


def typed_flag(error: ValidationError, options: tuple[Option, ...]) -> str | None:
    """The option the user typed (``--max-runs``, ``--every``) that fills the field ``error``
    names (``max_runs``, ``notify_config.expression``: its last part); None for none, or for a
    time that was not read (its message quotes the text, not the field)."""
    key = error.field.rsplit(".", 1)[-1]
    flag = next((option.flag for option in options if option.key == key), None)
    return None if isinstance(error, ParseError) else flag


def _seconds(flag: str, value: str, *, zero: bool) -> float:
    if not re.fullmatch(r"[0-9]+(\.[0-9]+)?", value) or (float(value) == 0 and not zero):
        bound = "0 or more" if zero else "above 0"
        raise ValidationError(flag, f"must be a number of seconds {bound}, got {value!r}")
    return float(value)


SCHEDULE_OPTIONS = (
    Option(
        "--headless",
        "headless",
        takes_value=False,
        help="a fresh kernel per run (the server's default kernel spec)",
    ),
    Option(
        "--kernel-name", "kernel_name", metavar="NAME", help="its kernel spec (implies --headless)"
    ),
    Option("--exclusive", "exclusive", takes_value=False, help="wait until this kernel is idle"),
    Option("--tz", "tz", metavar="ZONE", help="IANA zone or ±HH:MM (default: the server's)"),
    Option(
        "--name", "name", metavar="NAME", help="the job's name (default: the code's first line)"
    ),
    Option("--max-runs", "max_runs", integer=True, minimum=1, help="stop after N runs"),
    Option(
        "--timeout",
        "timeout",
        seconds=True,
        metavar="SECONDS",
        help="stop a run still going after it (timed_out)",
    ),
    Option("--retries", "retries", integer=True, help="run a failed occurrence again, N times"),
    Option(
        "--retry-backoff",
        "retry_backoff",
        seconds=True,
        zero=True,
        metavar="SECONDS",
        help="with --retries: the first wait (10 s), doubling",
    ),
    Option(
        "--on-missing-kernel",
        "on_missing_kernel",
        metavar="POLICY",
        help="start|skip|fail: when the notebook has no kernel at fire time",
    ),
    Option(
        "--pause-after-failures",
        "pause_after_failures",
        integer=True,
        minimum=1,
        help="pause after N failed occurrences in a row",
    ),
    Option("--keep-runs", "keep_runs", integer=True, help="keep the N newest runs"),
    Option(
        "--keep-runs-for",
        "keep_runs_for",
        metavar="AGE",
        help="keep runs ended less than AGE ago (7d)",
    ),
)
COMMAND_OPTIONS = (
    Option("--all", "all", takes_value=False, help="every job of the user, not this notebook's"),
)
RESUME_OPTIONS = (
    Option(
        "--catch-up",
        "catch_up",
        takes_value=False,
        help="run what passed while it was paused (a one-shot's time)",
    ),
)
SCHEDULE_COMMAND_OPTIONS = {"list": COMMAND_OPTIONS, "resume": RESUME_OPTIONS}
"""The options of each ``%schedule`` subcommand; the others take none."""
RECALL_OPTIONS = (
    Option("--tz", "tz", metavar="ZONE", help="IANA zone or ±HH:MM (default: the server's)"),
    Option(
        "--name", "name", metavar="NAME", help="its name (default: the instruction's first line)"
    ),
    Option("--max-runs", "max_runs", integer=True, minimum=1, help="stop after N runs"),
)


def documented(summary: str, usage: str) -> Callable[[F], F]:
    """A magic's docstring, what ``%magic?`` shows: one line saying what it does, then the
    usage it prints when called with no arguments."""

    def apply(magic: F) -> F:
        magic.__doc__ = f"{summary}\n\n{usage}"
        return magic

    return apply


def options_usage(options: tuple[Option, ...]) -> str:
    """The ``options:`` part of a magic's usage: one option a line, from the parser's own
    table, so no option the parser takes can be left out."""
    width = max(len(option.spelled) for option in options)
    lines = [f"  {option.spelled:<{width}}  {option.help}".rstrip() for option in options]
    return "\n".join(["options:", *lines])


@dataclass(frozen=True, eq=False)
class MagicOptions(Mapping[str, OptionValue]):
    """The options given to a magic, by key, each converted by its ``Option`` (text, a count,
    seconds, or True for a flag); read typed. A mapping, equal to a dict of the same options."""

    given: Mapping[str, OptionValue] = field(default_factory=dict)

    def __getitem__(self, key: str) -> OptionValue:
        return self.given[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.given)

    def __len__(self) -> int:
        return len(self.given)

    def text(self, key: str) -> str | None:
        value = self.given.get(key)
        return None if value is None else str(value)

    def integer(self, key: str) -> int | None:
        value = self.given.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def seconds(self, key: str) -> float | None:
        value = self.given.get(key)
        return float(value) if isinstance(value, (int, float)) else None

    def flag(self, key: str) -> bool:
        return self.given.get(key) is True


@dataclass(frozen=True)
class Writ:
    """A request to schedule: the time text, what to run, and the options given."""

    when: str
    body: str
    options: MagicOptions = field(default_factory=MagicOptions)


@dataclass(frozen=True)
class Command:
    """A management subcommand such as ``cancel 3f9c2a1b7d0e`` or ``list``."""

    name: str
    argument: str | None = None
    options: MagicOptions = field(default_factory=MagicOptions)


def _starts_token(text: str, index: int) -> bool:
    """A quote here opens a value: at a token's start or right after ``key=``."""
    return index == 0 or text[index - 1].isspace() or text[index - 1] == "="


QUOTE_SHOWN = 40
"""Characters of an unclosed quoted value shown in its error."""


def unclosed_quote(text: str, start: int) -> ValidationError:
    """The error for a quote opened at ``start`` and never closed."""
    shown = text[start : start + QUOTE_SHOWN]
    more = "..." if len(text) - start > QUOTE_SHOWN else ""
    return ValidationError(
        "quote", f"unclosed {text[start]} in {shown + more!r}: close it, or drop it"
    )


def split_writ(text: str) -> tuple[str, str] | None:
    """``(head, body)`` split at the first ``": "`` (or a final ``":"``) outside quotes that
    open a token; None when there is no separator. A quote left open before any separator is
    an error: everything after it would be read as the quoted value."""
    quote: str | None = None
    opened = 0
    for index, char in enumerate(text):
        if quote is not None:
            if char == quote:
                quote = None
            continue
        if char in "\"'" and _starts_token(text, index):
            quote, opened = char, index
            continue
        if char == ":" and (index + 1 == len(text) or text[index + 1].isspace()):
            return text[:index], text[index + 1 :].strip()
    if quote is not None:
        raise unclosed_quote(text, opened)
    return None


_TOKEN = re.compile(r"""(?P<key>[^\s"'=]*=)?(?:"(?P<dq>[^"]*)"|'(?P<sq>[^']*)'|(?P<plain>\S+))""")


def tokens(text: str) -> list[str]:
    """Whitespace-separated tokens. A quote that opens a token, or its value after ``=``
    (``--label 'build log'``, ``path='my notes.txt'``), runs to the closing one; one that never
    closes is an error. Linear in the text's length."""
    found = []
    for match in _TOKEN.finditer(text):
        plain = match.group("plain")
        if plain is not None and plain[0] in "\"'":
            # The quoted alternatives failed: no closing quote anywhere after this one.
            raise unclosed_quote(text, match.start("plain"))
        value = next(v for v in match.group("dq", "sq", "plain") if v is not None)
        found.append((match.group("key") or "") + value)
    return found


UNKNOWN_OPTION = "unknown option"
"""The message of a refused option: ``subcommand_arguments`` looks for it among the others'."""


def _option_named(flag: str, allowed: tuple[Option, ...]) -> Option:
    for option in allowed:
        if option.flag == flag:
            return option
    raise ValidationError(flag, UNKNOWN_OPTION, accepted=[option.flag for option in allowed])


def split_options(text: str, allowed: tuple[Option, ...]) -> tuple[list[str], MagicOptions]:
    """The words that are not options, and the options."""
    words: list[str] = []
    options: dict[str, OptionValue] = {}
    items = iter(tokens(text))
    for token in items:
        if not token.startswith("--") or token == "--":
            words.append(token)
            continue
        flag, equals, inline = token.partition("=")
        option = _option_named(flag, allowed)
        if not option.takes_value:
            if equals:
                raise ValidationError(flag, "takes no value")
            options[option.key] = True
            continue
        value = inline if equals else next(items, None)
        if value is None or (not equals and value.startswith("--")):
            raise ValidationError(flag, "needs a value")
        options[option.key] = option.convert(value)
    return words, MagicOptions(options)


def parse_writ(
    line: str, cell: str | None, allowed: tuple[Option, ...], what: str, *, magic: str = ""
) -> Writ:
    """Parse ``[options] <when>: <body>`` (line magic) or ``[options] <when>`` + cell body.

    ``what`` names the body in messages ("code", "instruction"), ``magic`` the magic
    ("recall"): a cell with no time is told to write it as ``%%recall in 30m``.
    """
    split = split_writ(line)
    head, inline = split if split is not None else (line, "")
    words, options = split_options(head, allowed)
    when = " ".join(words)
    if not when:
        raise _missing_when(what, magic if cell is not None and not inline else None)
    body = cell if cell is not None and cell.strip() else ""
    if body and inline:
        raise ValidationError(
            what, f"give the {what} either after '<when>: ' or as the cell body, not both"
        )
    if body:
        return Writ(when=when, body=body, options=options)
    if cell is not None and not inline:
        raise ValidationError(what, f"the cell is empty: write the {what} in the cell body")
    if split is None:
        raise ValidationError(
            what, f"missing ': ' after the time: write '<when>: <{what}>', e.g. 'in 30m: ...'"
        )
    if not inline:
        raise ValidationError(what, f"nothing to schedule after '{head.strip()}:'")
    return Writ(when=when, body=inline, options=options)


def _missing_when(what: str, cell_magic: str | None) -> ValidationError:
    """No time given: the cell form writes it on the magic's line, the line form before ``: ``."""
    if cell_magic is None:
        return ValidationError("when", f"missing: write '<when>: <{what}>', e.g. 'in 30m: ...'")
    example = f"%%{cell_magic} in 30m" if cell_magic else "in 30m"
    return ValidationError("when", f"missing: write the time on the magic's line, e.g. '{example}'")


_BRACED = re.compile(r"(?<!\S)\{[^{}]*\}(?!\S)")
"""An argument written ``{expr}``: one word, whatever spaces and quotes the expression holds."""


def split_arguments(text: str, allowed: tuple[Option, ...]) -> tuple[list[str], MagicOptions]:
    """``split_options`` for a subcommand's arguments, where an id may be written ``{expr}``
    (``{ids['my job']}``): such an argument is kept whole, as typed, and comes first."""
    braced = _BRACED.findall(text)
    words, options = split_options(_BRACED.sub(" ", text), allowed)
    return [*braced, *words], options


def subcommand_arguments(
    name: str, text: str, options_of: Mapping[str, tuple[Option, ...]], *, magic: str
) -> tuple[list[str], MagicOptions]:
    """``split_arguments`` with the options of subcommand ``name`` alone: another's would be
    taken and do nothing (``%schedule cancel --all``), so it is refused naming its own."""
    allowed = options_of.get(name, ())
    try:
        return split_arguments(text, allowed)
    except ValidationError as error:
        if error.message != UNKNOWN_OPTION:
            raise
        for other, options in options_of.items():
            for option in options:
                if option.flag == error.field:
                    usage = f"%{magic} {other} {option.spelled}" + (
                        "" if other == "list" else " <id>"
                    )
                    raise ValidationError(option.flag, f"goes with {other}: {usage}") from None
        if allowed:
            raise
        raise ValidationError(error.field, f"{UNKNOWN_OPTION}: {name} takes none") from None


def parse_command(
    line: str,
    names: tuple[str, ...],
    options_of: Mapping[str, tuple[Option, ...]],
    *,
    magic: str = "schedule",
) -> Command | None:
    """A management subcommand, or None when the line is a writ to schedule (a ``: `` inside
    a subcommand's ``{expr}`` argument is no writ's separator); ``options_of`` the options
    each subcommand takes."""
    words = line.split(None, 1)
    head = _BRACED.sub(" ", line) if words and words[0] in names else line
    if split_writ(head) is not None or not words:
        return None
    if words[0] not in names:
        _refuse_unknown_subcommand(words[0], names)
        return None
    rest = words[1] if len(words) > 1 else ""
    arguments, options = subcommand_arguments(words[0], rest, options_of, magic=magic)
    if arguments and words[0] not in NEEDS_ID:
        raise ValidationError(words[0], f"takes no arguments, got {' '.join(arguments)!r}")
    if len(arguments) > 1:
        raise ValidationError(words[0], f"takes at most one job id, got {' '.join(arguments)!r}")
    return Command(words[0], arguments[0] if arguments else None, options)


def _refuse_unknown_subcommand(word: str, names: tuple[str, ...]) -> None:
    """A line with no ``: `` whose first word is no word of a time (``frobnicate``, ``cancle``)
    is a mistyped subcommand: saying so beats reading it as a time missing its ``: ``. A word
    close to a time's (``tomorow``) is left to the time's own message."""
    lowered = word.lower()
    if not lowered.isalpha() or lowered in VOCABULARY:
        return
    nearest = difflib.get_close_matches(lowered, names, n=1, cutoff=SUBCOMMAND_CUTOFF)
    if not nearest and difflib.get_close_matches(lowered, VOCABULARY, n=1, cutoff=WORD_CUTOFF):
        return
    hint = f"; did you mean {nearest[0]!r}?" if nearest else ""
    raise ValidationError(
        "subcommand",
        f"unknown subcommand {word!r}{hint} (to schedule, write '<when>: ...')",
        accepted=names,
    )
