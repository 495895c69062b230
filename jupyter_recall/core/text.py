"""Jobs as plain text, shared by the magics' tables and the ``jupyter recall`` command (which
must not import the kernel side): one line of a value, a target in words, an aligned table;
and the one check of text that reaches a path or a URL (``check_plain_text``).

Widths are a terminal's columns, not characters: a CJK character or an emoji takes two, a
combining mark none (``display_width``), so that tables with such names stay aligned."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from jupyter_recall.core.errors import ValidationError

LONE_SURROGATE = re.compile("[\ud800-\udfff]")
"""A UTF-16 surrogate on its own (JSON's ``"\\ud800"``): no character, so no UTF-8 text, file
name or URL holds one."""


def check_unicode(value: str, field: str) -> str:
    """``value`` if it is Unicode text: a lone surrogate is refused naming ``field`` (encoding
    it for a URL, a file name or a request body would fail with a ``UnicodeEncodeError``)."""
    found = LONE_SURROGATE.search(value)
    if found is not None:
        raise ValidationError(
            field,
            f"holds a lone UTF-16 surrogate (U+{ord(found[0]):04X}), which is not text: give "
            "Unicode text",
        )
    return value


def check_plain_text(value: str, field: str) -> str:
    """``value`` if it can reach a path or a URL (a file, a notebook, a session): Unicode text
    (``check_unicode``) without a NUL character, which no path holds. The error names
    ``field``."""
    if "\x00" in value:
        raise ValidationError(field, "must not contain a NUL character: give text without it")
    return check_unicode(value, field)


ZERO_WIDTH = frozenset({"Mn", "Me", "Cf"})
"""Unicode categories drawn on the character before (combining marks) or not at all (format
characters: zero-width joiner and space, direction marks)."""


def char_width(char: str) -> int:
    """The columns one character takes: 2 for East Asian wide and fullwidth ones (CJK, most
    emoji), 0 for combining marks and format characters, else 1."""
    if unicodedata.category(char) in ZERO_WIDTH:
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def display_width(text: str) -> int:
    """The columns ``text`` takes in a terminal (``char_width`` of each character)."""
    return len(text) if text.isascii() else sum(char_width(char) for char in text)


def _fitting(text: str, width: int) -> str:
    """The longest start of ``text`` at most ``width`` columns wide."""
    used = 0
    for index, char in enumerate(text):
        used += char_width(char)
        if used > width:
            return text[:index]
    return text


BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""The embedding, override and isolate controls of bidirectional text (U+202A to U+202E, U+2066
to U+2069): in a name, U+202E (right-to-left override) shows what follows it backwards, up to
the end of the line: the next columns of a table too."""
_BIDI_CONTROL = re.compile("[\u202a-\u202e\u2066-\u2069]")

CONTROL_PICTURES = {
    **{code: 0x2400 + code for code in range(0x20)},
    0x7F: 0x2421,
    **{code: 0xFFFD for code in range(0x80, 0xA0)},
    **{ord(char): 0xFFFD for char in BIDI_CONTROLS},
}
"""Control characters as the symbols that picture them (ESC is ␛): a name holding
``\x1b[31m`` must not colour a terminal, move its cursor or fake output; nor a bidi control
reorder a table (a name stored before they were refused)."""


def check_name_text(value: str, field: str) -> str:
    """A name as given (``name``): no bidi control (``BIDI_CONTROLS``), which would reorder the
    tables that show it. Other control characters are pictured there (``clip``)."""
    found = _BIDI_CONTROL.search(value)
    if found is not None:
        raise ValidationError(
            field,
            f"must not contain the bidirectional control U+{ord(found[0]):04X}, which reorders "
            "the text after it (in tables too): give the name without it",
        )
    return value


_NAME_LINE = re.compile(r"[^\n]+")
NAME_SOURCE_LIMIT = 1_000
"""Characters of a line read to make a default name of it (a name keeps 60)."""
_LEFT_OUT_OF_NAMES = {
    **{code: " " if chr(code).isspace() else None for code in range(0x20)},
    0x7F: None,
    **{code: " " if chr(code).isspace() else None for code in range(0x80, 0xA0)},
    **{ord(char): None for char in BIDI_CONTROLS},
}


def name_line(text: str) -> str:
    """The first line of ``text`` that shows something, as a job's default name is made of it
    (the first line of its code, its message...): control characters left out (a tab, or
    another one that is a space, becomes a space) and so are bidi controls. ``code: "\x00"``
    gives ``""``: the name is then the action's type."""
    for found in _NAME_LINE.finditer(text):
        line = found[0][:NAME_SOURCE_LIMIT]
        if not line.isprintable():
            line = line.translate(_LEFT_OUT_OF_NAMES)
        line = line.strip()
        if line:
            return line
    return ""


def clip(text: object, width: int) -> str:
    """One line of at most ``width`` columns (``display_width``), cut with "…"; control
    characters shown as pictures (``CONTROL_PICTURES``)."""
    flat = " ".join(str(text).split())
    if not flat.isprintable():
        flat = flat.translate(CONTROL_PICTURES)
    if display_width(flat) <= width:
        return flat
    return _fitting(flat, width - 1) + "…"


def pad(text: str, width: int) -> str:
    """``text`` followed by spaces up to ``width`` columns (``str.ljust`` counts characters)."""
    return text + " " * (width - display_width(text))


def job_status(job: Mapping[str, Any]) -> str:
    """A job document's status, saying when the server paused it after its failures."""
    status = str(job.get("status"))
    return f"{status} (failures)" if status == "paused" and job.get("paused_reason") else status


def describe_target(target: Any) -> str:
    if not isinstance(target, Mapping):
        return "-"
    kind = target.get("type")
    if kind == "kernel":
        return f"kernel {target.get('path') or target.get('kernel_id')}"
    if kind == "headless":
        # Without a name the server chooses when it runs (a notebook's own spec, else its
        # default): naming one here would be a guess.
        name = target.get("kernel_name")
        return f"headless {name}" if name else "headless (default kernel spec)"
    return str(kind)


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Columns aligned in a terminal (by ``display_width``), two spaces apart, under a rule."""
    widths = [max(display_width(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(pad(cell, width) for cell, width in zip(row, widths, strict=True))
        for row in [header, *rows]
    ]
    rule = "  ".join("-" * width for width in widths)
    return "\n".join(line.rstrip() for line in [lines[0], rule, *lines[1:]])
