"""The wire format of events between servers (``engine/event_relay.py``): notes packed into
payloads no larger than the store's limit (PostgreSQL: under 8000 bytes per NOTIFY).

A note is one JSON object per line, ASCII only (so a payload's length in characters is its
length in bytes), naming the engine that sent it (``e``) and what it says (``k``): an event
type with references (``j`` job id, ``r`` run id, ``a`` approval id, ``o`` owner), run
output with its text (``t``) and offset (``n``), a deleted job with its row (``row``: it can
no longer be read), or presence (``here``, ``gone``, ``who``). A note too long for one
payload travels as parts (``k`` = ``part``) that the receiver joins.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from jupyter_recall.core.model import Job
from jupyter_recall.store import codec
from jupyter_recall.store.rows import JobRow

HERE = "here"
"""The sender's engine has live views open: send it your events (for ``PRESENCE_FOR`` s)."""
GONE = "gone"
"""The sender's views closed: stop sending for it."""
WHO = "who"
"""The sender just started: engines with views open say ``here`` at once."""
PART = "part"

PART_ROOM = 200
"""Bytes of a payload kept for a part's own keys."""

Note = dict[str, str | int | list[str | int | None]]
"""One note as sent: string keys, JSON values (a deleted job's row is a list)."""


def presence(engine_id: str, kind: str) -> Note:
    return {"e": engine_id, "k": kind}


def deleted_job_row(job: Job) -> list[str | int | None]:
    return list(codec.job_row(job))


def job_of_row(values: Sequence[str | int | None]) -> Job:
    return codec.job_from_row(JobRow._make(values))


def pack(notes: Sequence[Note], limit: int, engine_id: str, serial: Iterator[int]) -> list[str]:
    """The payloads carrying ``notes`` in order, each at most ``limit`` bytes; a note longer
    than that is split into parts (``serial`` numbers them)."""
    payloads: list[str] = []
    current: list[str] = []
    size = 0
    for note in notes:
        for line in _lines(json.dumps(note, separators=(",", ":")), limit, engine_id, serial):
            if current and size + 1 + len(line) > limit:
                payloads.append("\n".join(current))
                current, size = [], 0
            current.append(line)
            size += len(line) + (1 if size else 0)
    if current:
        payloads.append("\n".join(current))
    return payloads


def _lines(line: str, limit: int, engine_id: str, serial: Iterator[int]) -> list[str]:
    if len(line) <= limit:
        return [line]
    # Escaping the line again as a JSON string at most doubles it.
    step = max(1, (limit - PART_ROOM) // 2)
    pieces = [line[i : i + step] for i in range(0, len(line), step)]
    number = next(serial)
    return [
        json.dumps(
            {"e": engine_id, "k": PART, "s": number, "i": index, "m": len(pieces), "x": piece},
            separators=(",", ":"),
        )
        for index, piece in enumerate(pieces)
    ]


@dataclass
class Reader:
    """Turns payloads back into notes, joining parts; a note whose parts do not all come
    (the sender stopped) is dropped once ``keep`` others are pending."""

    keep: int = 64
    _parts: dict[tuple[str, int], list[str]] = field(default_factory=dict)

    def notes(self, payload: str) -> list[Note]:
        found: list[Note] = []
        for line in payload.split("\n"):
            note = _parse(line)
            if note is None:
                continue
            if note.get("k") == PART:
                joined = self._join(note)
                if joined is not None:
                    found.append(joined)
            else:
                found.append(note)
        return found

    def _join(self, part: Note) -> Note | None:
        key = (str(part.get("e")), int(str(part.get("s", 0))))
        pieces = self._parts.setdefault(key, [])
        pieces.append(str(part.get("x", "")))
        if len(pieces) < int(str(part.get("m", 1))):
            while len(self._parts) > self.keep:
                del self._parts[next(iter(self._parts))]
            return None
        del self._parts[key]
        return _parse("".join(pieces))


def _parse(line: str) -> Note | None:
    """A note, or None for a line that is not one (another release's, a broken part)."""
    try:
        value = json.loads(line)
    except ValueError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("e"), str):
        return None
    return value
