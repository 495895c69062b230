"""Time expressions: ``parse_when`` turns what users type into a :class:`ScheduleSpec`.

The parser is strict and deterministic: the base instant and the zone are arguments, the whole
text must be understood, and anything else is a :class:`ParseError` listing ``ACCEPTED_FORMS``.
Semantics (DST, drift, defaults) are documented in ``docs/time-expressions.md``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone, tzinfo
from typing import Any, Literal

from jupyter_recall.core.cron import MACROS, parse_cron
from jupyter_recall.core.errors import ParseError, ValidationError
from jupyter_recall.core.triggers.base import Trigger
from jupyter_recall.core.triggers.cron import CronTrigger
from jupyter_recall.core.triggers.interval import IntervalTrigger
from jupyter_recall.core.triggers.once import OnceTrigger
from jupyter_recall.core.triggers.wallclock import instant_to_wall, local_instant, wall_to_instant
from jupyter_recall.core.tz import lookup_tz, normalize_tz, resolve_tz

UTC = timezone.utc
SPEC_VERSION = 1

ScheduleKind = Literal["once", "interval", "cron", "immediate"]

ACCEPTED_FORMS: tuple[str, ...] = (
    "relative: '30m', '2h 15m', '1d 6h', '90s', 'in 3 hours', 'in 45 minutes', 'in 2 weeks'",
    "absolute: 'at 17:00', 'at 5pm', 'today at 17:00', 'tomorrow', 'tomorrow at 09:00', "
    "'tomorrow 14:30', 'on 2026-06-01', 'on 2026-06-01 at 12:00'",
    "ISO 8601 / RFC 3339: '2026-06-01T12:00:00+02:00', '2026-06-01T10:00:00Z', "
    "'2026-06-01 12:00' (no offset: in the schedule's time zone)",
    "intervals: 'every 30 minutes', 'every 2 hours', 'every 30m', 'every 1h30m', "
    "'every hour', 'hourly'",
    "wall clock: 'every day at 09:00', 'daily', 'every week on monday at 10:00', 'weekly', "
    "'every friday at 17:00', 'every weekday at 08:30'",
    "cron: 5 fields 'minute hour day-of-month month day-of-week' such as '*/15 9-17 * * 1-5', "
    "or @hourly, @daily, @midnight, @weekly, @monthly, @yearly, @annually",
    "immediate: 'now', 'immediately'",
    "French: 'dans 30 minutes', 'demain', 'demain à 9h', 'tous les jours à 9h', "
    "'toutes les 15 minutes', 'tous les lundis à 8h30', 'maintenant'",
)

MAX_TEXT_LENGTH = 200
"""Longer texts are refused before any matching: no time expression is that long."""

MAX_DURATION_SECONDS = 36525 * 86400
"""Durations (relative times and intervals) up to 100 years: beyond that, datetimes overflow."""

DEFAULT_TIME_OF_DAY = time(9, 0)
"""The time of forms that name a day but no time (``tomorrow``, ``on 2026-06-01``, ``daily``)."""

DEFAULT_WEEKDAY = 1
"""The cron day of week of ``weekly`` / ``every week`` without a day: Monday."""

# --------------------------------------------------------------------------------------------
# Vocabulary
# --------------------------------------------------------------------------------------------

_UNIT_SECONDS: dict[str, int] = {
    name: seconds
    for names, seconds in (
        (("s", "sec", "secs", "second", "seconds", "seconde", "secondes"), 1),
        (("m", "min", "mins", "minute", "minutes"), 60),
        (("h", "hr", "hrs", "hour", "hours", "heure", "heures"), 3600),
        (("d", "day", "days", "j", "jour", "jours"), 86400),
        (("w", "wk", "wks", "week", "weeks", "semaine", "semaines"), 604800),
    )
    for name in names
}

_WEEKDAYS: dict[str, int] = {
    name: cron_day
    for names, cron_day in (
        (("monday", "mon", "lundi"), 1),
        (("tuesday", "tue", "tues", "mardi"), 2),
        (("wednesday", "wed", "weds", "mercredi"), 3),
        (("thursday", "thu", "thur", "thurs", "jeudi"), 4),
        (("friday", "fri", "vendredi"), 5),
        (("saturday", "sat", "samedi"), 6),
        (("sunday", "sun", "dimanche"), 0),
    )
    for name in names
}

_DAY_NAMES = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")


def _alternation(words: Any) -> str:
    return "|".join(sorted((re.escape(w) for w in words), key=len, reverse=True))


_UNIT = rf"(?:{_alternation(_UNIT_SECONDS)})(?![a-zà-ÿ])"
_PART = rf"(?:[+-]?\d+\s*|(?:an?|une?)\s+){_UNIT}"
_PART_RE = re.compile(rf"(?:(?P<n>[+-]?\d+)\s*|(?P<article>an?|une?)\s+)(?P<unit>{_UNIT})")
_DURATION = rf"{_PART}(?:(?:\s*,\s*|\s+and\s+|\s+et\s+|\s*){_PART})*"
_WEEKDAY = rf"(?:{_alternation(_WEEKDAYS)})"
_AT = r"(?:at|à|a|@)"
# An optional time after a day word: "tomorrow 9am", "tomorrow at 9am", "demain à 9h".
_OPT_TIME = rf"(?:\s+(?:{_AT}\s+)?(?P<time>.+?))?"
_DATE = r"\d{4}-\d{2}-\d{2}"

_TIME_RE = re.compile(
    r"(?P<h>\d{1,2})(?::(?P<m>\d{2})(?::(?P<s>\d{2}))?)?\s*(?P<ampm>[ap]\.?m\.?)?"
    r"|(?P<fh>\d{1,2})h(?P<fm>\d{2})?"
    r"|(?P<word>noon|midday|midnight|midi|minuit)"
)
_WORD_TIMES = {
    "noon": time(12),
    "midday": time(12),
    "midi": time(12),
    "midnight": time(0),
    "minuit": time(0),
}


# --------------------------------------------------------------------------------------------
# The spec
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ScheduleSpec:
    """A parsed schedule: when something fires, as pure functions of explicit instants.

    ``anchor`` is the parse-time ``now`` for interval and cron specs (interval occurrences are
    ``anchor + k * interval``; a cron's first fire time is its first occurrence after the
    anchor); once and immediate specs carry their instant in the trigger and have no anchor.
    """

    kind: ScheduleKind
    canonical: str
    tz: str
    trigger: Trigger
    anchor: datetime | None = None

    @property
    def is_recurring(self) -> bool:
        return self.kind in ("interval", "cron")

    def first_fire_time(self) -> datetime | None:
        if isinstance(self.trigger, OnceTrigger):
            return self.trigger.at
        if self.anchor is None:  # pragma: no cover - construction guarantees an anchor
            raise ValueError(f"{self.kind} schedule without an anchor")
        return self.trigger.next_after(self.anchor)

    def next_after(self, after: datetime) -> datetime | None:
        """The earliest fire time strictly after ``after`` (aware UTC), or None if none remain.

        A recurring schedule has no occurrence at or before its anchor (the parse-time ``now``).
        """
        _aware("after", after)
        if self.anchor is not None and after < self.anchor:
            after = self.anchor
        return self.trigger.next_after(after)

    def next_fire_times(self, n: int, after: datetime | None = None) -> list[datetime]:
        """Up to ``n`` fire times: from the first fire time, or strictly after ``after``."""
        times: list[datetime] = []
        current = self.first_fire_time() if after is None else self.next_after(after)
        while current is not None and len(times) < n:
            times.append(current)
            current = self.trigger.next_after(current)
        return times

    def describe(self) -> str:
        """Human words for UI cards, e.g. ``every day at 09:00 (Europe/Paris)``."""
        if isinstance(self.trigger, IntervalTrigger):
            return f"every {_describe_seconds(self.trigger.seconds)}"
        if isinstance(self.trigger, CronTrigger):
            return f"{_describe_cron(self.trigger.expression)} ({self.tz})"
        if self.kind == "immediate":
            return "immediately"
        fire = self.first_fire_time()
        assert fire is not None
        local = fire.astimezone(resolve_tz(self.tz))
        stamp = local.strftime("%Y-%m-%d %H:%M:%S" if local.second else "%Y-%m-%d %H:%M")
        return f"once at {stamp} ({self.tz})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": SPEC_VERSION,
            "kind": self.kind,
            "canonical": self.canonical,
            "tz": self.tz,
            "anchor": None if self.anchor is None else self.anchor.isoformat(),
            "trigger": self.trigger.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScheduleSpec:
        try:
            return _spec_from_dict(data)
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, ValidationError):
                raise
            raise ValidationError("schedule", f"not a valid schedule payload ({exc!r})") from None


def _spec_from_dict(data: dict[str, Any]) -> ScheduleSpec:
    version = data.get("version")
    if version != SPEC_VERSION:
        raise ValidationError(
            "schedule.version", f"unsupported version {version!r}", accepted=[str(SPEC_VERSION)]
        )
    kind = data["kind"]
    if kind not in _TRIGGER_TYPE_OF_KIND:
        raise ValidationError("schedule.kind", f"unknown kind {kind!r}", accepted=_KINDS)
    trigger_data = data["trigger"]
    expected_type = _TRIGGER_TYPE_OF_KIND[kind]
    if trigger_data["type"] != expected_type:
        raise ValidationError(
            "schedule.trigger.type",
            f"a {kind} schedule has a {expected_type!r} trigger, got {trigger_data['type']!r}",
            accepted=[expected_type],
        )
    anchor_text = data.get("anchor")
    anchor = None if anchor_text is None else datetime.fromisoformat(anchor_text).astimezone(UTC)
    if (anchor is None) == (kind in ("interval", "cron")):
        raise ValidationError(
            "schedule.anchor", "an anchor goes with interval and cron schedules only"
        )
    return ScheduleSpec(
        kind=kind,
        canonical=str(data["canonical"]),
        tz=normalize_tz(data["tz"]),
        trigger=_TRIGGER_LOADERS[expected_type](trigger_data),
        anchor=anchor,
    )


_TRIGGER_TYPE_OF_KIND: dict[str, str] = {
    "once": "once",
    "immediate": "once",
    "interval": "interval",
    "cron": "cron",
}
_KINDS: tuple[ScheduleKind, ...] = ("once", "interval", "cron", "immediate")
_TRIGGER_LOADERS: dict[str, Callable[[dict[str, Any]], Trigger]] = {
    "once": OnceTrigger.from_dict,
    "interval": IntervalTrigger.from_dict,
    "cron": CronTrigger.from_dict,
}


def _aware(name: str, value: datetime) -> datetime:
    if not isinstance(value, datetime) or value.tzinfo is None:
        raise ValidationError(name, f"must be a timezone-aware datetime, got {value!r}")
    return value


# --------------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Context:
    text: str
    now: datetime  # aware UTC
    tz: str
    zone: tzinfo = field(repr=False)

    def fail(self, reason: str) -> ParseError:
        return ParseError(self.text, reason, accepted=ACCEPTED_FORMS)

    def once(self, instant: datetime) -> ScheduleSpec:
        if instant < self.now:
            local = instant.astimezone(self.zone).isoformat()
            raise self.fail(f"{local} is in the past (now is {self.now.isoformat()})")
        return _once_spec(instant, self.tz, self.zone)

    def local_today(self) -> date:
        return instant_to_wall(self.now, self.zone).date()

    def at_wall(self, day: date, at: time) -> datetime:
        return wall_to_instant(datetime.combine(day, at), self.zone)

    def interval(self, seconds: int) -> ScheduleSpec:
        if seconds <= 0:
            raise self.fail(f"an interval must be positive, got {seconds} s")
        if seconds > MAX_DURATION_SECONDS:
            raise self.fail(f"an interval must be at most {MAX_DURATION_SECONDS // 86400} days")
        return ScheduleSpec(
            kind="interval",
            canonical=f"every {_compact_seconds(seconds)}",
            tz=self.tz,
            trigger=IntervalTrigger(self.now, seconds),
            anchor=self.now,
        )

    def cron(self, expression: str) -> ScheduleSpec:
        trigger = CronTrigger(expression, self.tz)
        if trigger.next_after(self.now) is None:
            raise self.fail(f"cron {expression!r} never fires")
        return ScheduleSpec(
            kind="cron", canonical=expression, tz=self.tz, trigger=trigger, anchor=self.now
        )


def _once_spec(instant: datetime, tz: str, zone: tzinfo) -> ScheduleSpec:
    local = instant.astimezone(zone)
    return ScheduleSpec("once", local.isoformat(), tz, OnceTrigger(local.astimezone(UTC)))


def parse_when(text: str, *, now: datetime, tz: str) -> ScheduleSpec:
    """Parse a time expression relative to ``now`` (aware) in zone ``tz`` (IANA or ``±HH:MM``).

    Raises ParseError (a ValueError) naming the text and listing ``ACCEPTED_FORMS``, and
    ValidationError("tz", ...) for an unknown zone.
    """
    if not isinstance(now, datetime) or now.tzinfo is None:
        raise ValidationError("now", f"must be a timezone-aware datetime, got {now!r}")
    name, zone = lookup_tz(tz)
    if now.tzinfo is not UTC:
        now = now.astimezone(UTC)
    if not isinstance(text, str):
        raise _Context(repr(text), now, name, zone).fail("a time expression must be a string")
    stripped = text.strip()
    try:
        # The ISO path comes first and builds no context: it is the hot path of bulk job creation.
        if len(stripped) > 10 and stripped[:4].isdigit():
            local = _iso_local(stripped, zone)
            if local is not None and local >= now:
                canonical = _isoformat(local, stripped)
                return ScheduleSpec("once", canonical, name, OnceTrigger(local.astimezone(UTC)))
        ctx = _Context(text, now, name, zone)
        iso = _parse_iso(stripped, ctx)
        if iso is not None:
            return iso
        return _parse_words(" ".join(stripped.lower().split()), ctx)
    except OverflowError:
        reason = "the time is outside the supported range (years 1 to 9999)"
        raise _Context(text, now, name, zone).fail(reason) from None


def _iso_local(stripped: str, zone: tzinfo) -> datetime | None:
    """An ISO 8601 / RFC 3339 date-time as an aware datetime in ``zone``, or None."""
    parsed = _fromisoformat(stripped)
    if parsed is None:
        return None
    if parsed.tzinfo is None:
        return local_instant(parsed, zone)
    return parsed.astimezone(zone)


_ZULU = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?)[Zz]"
)
"""An RFC 3339 date-time in UTC, written with "Z"."""

_READS_ZULU = sys.version_info >= (3, 11)
"""Whether ``datetime.fromisoformat`` reads "Z" (3.11 on); 3.10 reads "+00:00" only."""


def _fromisoformat(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        pass
    try:  # RFC 3339 allows a lower-case "t" and "z".
        return datetime.fromisoformat(text.upper())
    except ValueError:
        pass
    zulu = None if _READS_ZULU else _ZULU.fullmatch(text)
    if zulu is None:
        return None
    try:
        return datetime.fromisoformat(zulu[1] + "+00:00")
    except ValueError:
        return None


_UTC_ISOFORMAT = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{6})?\+00:00"
)
"""What ``isoformat()`` writes for an instant in UTC (``timezone.utc``)."""


def _isoformat(local: datetime, text: str) -> str:
    """``local.isoformat()``, where ``local`` was read from ``text``: ``text`` itself when it is
    written so already, as when a program submits ``isoformat()`` texts (recognising the text
    costs a fifth of writing it anew, in the hot path of bulk creation).

    In UTC, ``local`` has the fields written in ``text`` (which the pattern bounds to valid
    ranges), so the texts agree, but for the fraction ``isoformat`` omits when it is zero.
    """
    match = _UTC_ISOFORMAT.fullmatch(text) if local.tzinfo is UTC else None
    if match is not None and (match[1] is None) == (local.microsecond == 0):
        return text
    return local.isoformat()


def _parse_iso(stripped: str, ctx: _Context) -> ScheduleSpec | None:
    """ISO dates (at the default time of day) and the ISO date-times the hot path refused."""
    if len(stripped) < 8 or not stripped[:4].isdigit():
        return None
    if len(stripped) <= 10:
        try:
            day = date.fromisoformat(stripped)
        except ValueError:
            return None
        return ctx.once(ctx.at_wall(day, DEFAULT_TIME_OF_DAY))
    local = _iso_local(stripped, ctx.zone)
    return None if local is None else ctx.once(local)


Handler = Callable[["re.Match[str]", _Context], ScheduleSpec]


def _parse_words(normal: str, ctx: _Context) -> ScheduleSpec:
    if not normal:
        raise ctx.fail("the text is empty")
    if len(normal) > MAX_TEXT_LENGTH:
        raise ctx.fail(f"the text is longer than {MAX_TEXT_LENGTH} characters")
    first_error: ParseError | None = None
    for pattern, handler in _RULES:
        match = pattern.fullmatch(normal)
        if match is None:
            continue
        try:
            return handler(match, ctx)
        except ParseError as exc:
            first_error = first_error or exc
    if first_error is not None:
        raise first_error
    fallback = _parse_natural(normal, ctx)
    if fallback is not None:
        return fallback
    raise ctx.fail(_leftover_reason(normal))


def _leftover_reason(normal: str) -> str:
    """Name what was not understood: the tail after the longest understood prefix."""
    best = 0
    for pattern, _ in _RULES:
        for end in range(len(normal) - 1, 0, -1):
            if normal[end] == " " and pattern.fullmatch(normal[:end]):
                best = max(best, end)
                break
    if best:
        return f"unexpected {normal[best:].strip()!r} after {normal[:best]!r}"
    return "not a recognised time expression"


# Words after which the fallback is not consulted: recurring phrases must never become one-shots,
# and parsedatetime resolves "this <part of day>" months away (2.6: "this evening" in November).
_NO_FALLBACK_WORDS = frozenset({"every", "each", "tous", "toutes", "chaque", "this"})


def _parse_natural(normal: str, ctx: _Context) -> ScheduleSpec | None:
    """parsedatetime as a last resort, only when it understands the whole text as one date.

    Texts without a letter are refused: "2026" could be a year or 20:26.
    """
    words = normal.split()
    if _NO_FALLBACK_WORDS.intersection(words) or not any(c.isalpha() for c in normal):
        return None
    import parsedatetime

    calendar = parsedatetime.Calendar(version=parsedatetime.VERSION_CONTEXT_STYLE)
    found = calendar.nlp(normal, sourceTime=instant_to_wall(ctx.now, ctx.zone))
    if not found or len(found) != 1:
        return None
    wall, context, start, end, _ = found[0]
    if start != 0 or end != len(normal) or not context.hasDateOrTime:
        return None
    if not context.hasTime:
        wall = datetime.combine(wall.date(), DEFAULT_TIME_OF_DAY)
    return ctx.once(wall_to_instant(wall, ctx.zone))


# --------------------------------------------------------------------------------------------
# Pieces: durations, times of day
# --------------------------------------------------------------------------------------------


def _duration_seconds(text: str) -> int:
    total = 0
    for part in _PART_RE.finditer(text):
        count = 1 if part["article"] else int(part["n"])
        total += count * _UNIT_SECONDS[part["unit"]]
    return total


def _parse_time(text: str | None, ctx: _Context) -> time:
    if text is None:
        return DEFAULT_TIME_OF_DAY
    match = _TIME_RE.fullmatch(text)
    if match is None:
        raise ctx.fail(f"{text!r} is not a time of day (use 17:00, 5pm or 17h30)")
    if match["word"]:
        return _WORD_TIMES[match["word"]]
    if match["fh"]:
        return _clock_time(int(match["fh"]), int(match["fm"] or 0), 0, text, ctx)
    hour, minute, second = int(match["h"]), int(match["m"] or 0), int(match["s"] or 0)
    if match["ampm"]:
        if not 1 <= hour <= 12:
            raise ctx.fail(f"{text!r}: an am/pm hour must be between 1 and 12")
        hour = hour % 12 + (12 if match["ampm"].startswith("p") else 0)
    return _clock_time(hour, minute, second, text, ctx)


def _clock_time(hour: int, minute: int, second: int, text: str, ctx: _Context) -> time:
    if hour > 23 or minute > 59 or second > 59:
        raise ctx.fail(f"{text!r} is not a valid time of day")
    return time(hour, minute, second)


def _cron_time(text: str | None, ctx: _Context) -> tuple[int, int]:
    at = _parse_time(text, ctx)
    if at.second:
        raise ctx.fail("recurring wall-clock times have minute precision")
    return at.minute, at.hour


def _compact_seconds(seconds: int) -> str:
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts)


def _describe_seconds(seconds: int) -> str:
    parts = []
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60), ("second", 1)):
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count} {unit}{'s' if count > 1 else ''}")
    if len(parts) == 1 and parts[0].startswith("1 "):
        return parts[0][2:]
    return " ".join(parts)


def _describe_cron(expression: str) -> str:
    minute, hour, dom, month, dow = expression.split()
    if not minute.isdigit() or dom != "*" or month != "*":
        return f"cron {expression}"
    if hour == "*" and dow == "*":
        return f"every hour at minute {int(minute):02d}"
    if not hour.isdigit():
        return f"cron {expression}"
    at = f"at {int(hour):02d}:{int(minute):02d}"
    if dow == "*":
        return f"every day {at}"
    if dow == "1-5":
        return f"every weekday {at}"
    if dow.isdigit():
        return f"every {_DAY_NAMES[int(dow) % 7]} {at}"
    return f"cron {expression}"


# --------------------------------------------------------------------------------------------
# Rules: (pattern matched against the lower-cased, space-collapsed text, handler)
# --------------------------------------------------------------------------------------------


def _immediate(match: re.Match[str], ctx: _Context) -> ScheduleSpec:
    return ScheduleSpec(kind="immediate", canonical="now", tz=ctx.tz, trigger=OnceTrigger(ctx.now))


def _relative(match: re.Match[str], ctx: _Context) -> ScheduleSpec:
    seconds = _duration_seconds(match["duration"])
    if seconds <= 0:
        raise ctx.fail(f"a relative time must be in the future, got {seconds} s")
    if seconds > MAX_DURATION_SECONDS:
        raise ctx.fail(f"a relative time must be at most {MAX_DURATION_SECONDS // 86400} days")
    return ctx.once(ctx.now + timedelta(seconds=seconds))


def _day_word(match: re.Match[str], ctx: _Context) -> ScheduleSpec:
    offset = 0 if match["day"] in ("today", "aujourd'hui", "aujourd’hui") else 1
    day = ctx.local_today() + timedelta(days=offset)
    return ctx.once(ctx.at_wall(day, _parse_time(match["time"], ctx)))


def _at_time(match: re.Match[str], ctx: _Context) -> ScheduleSpec:
    at = _parse_time(match["time"], ctx)
    today = ctx.local_today()
    instant = ctx.at_wall(today, at)
    if instant <= ctx.now:
        instant = ctx.at_wall(today + timedelta(days=1), at)
    return ctx.once(instant)


def _on_date(match: re.Match[str], ctx: _Context) -> ScheduleSpec:
    try:
        day = date.fromisoformat(match["date"])
    except ValueError:
        raise ctx.fail(f"{match['date']!r} is not a calendar date") from None
    return ctx.once(ctx.at_wall(day, _parse_time(match["time"], ctx)))


def _every_duration(match: re.Match[str], ctx: _Context) -> ScheduleSpec:
    return ctx.interval(_duration_seconds(match["duration"]))


def _every_unit(match: re.Match[str], ctx: _Context) -> ScheduleSpec:
    return ctx.interval(_UNIT_SECONDS[match["unit"]])


def _hourly(match: re.Match[str], ctx: _Context) -> ScheduleSpec:
    return ctx.interval(3600)


def _daily(match: re.Match[str], ctx: _Context) -> ScheduleSpec:
    minute, hour = _cron_time(match["time"], ctx)
    return ctx.cron(f"{minute} {hour} * * *")


def _weekly(match: re.Match[str], ctx: _Context) -> ScheduleSpec:
    minute, hour = _cron_time(match["time"], ctx)
    day = _WEEKDAYS[match["day"]] if match["day"] else DEFAULT_WEEKDAY
    return ctx.cron(f"{minute} {hour} * * {day}")


def _every_weekday_name(match: re.Match[str], ctx: _Context) -> ScheduleSpec:
    minute, hour = _cron_time(match["time"], ctx)
    return ctx.cron(f"{minute} {hour} * * {_WEEKDAYS[match['day']]}")


def _working_days(match: re.Match[str], ctx: _Context) -> ScheduleSpec:
    minute, hour = _cron_time(match["time"], ctx)
    return ctx.cron(f"{minute} {hour} * * 1-5")


def _macro(match: re.Match[str], ctx: _Context) -> ScheduleSpec:
    return ctx.cron(MACROS[match[0]])


def _cron(match: re.Match[str], ctx: _Context) -> ScheduleSpec:
    expression = match[0]
    try:
        parse_cron(expression)
    except ParseError as exc:
        raise ctx.fail(exc.reason) from None
    return ctx.cron(expression)


_EVERY = r"(?:every|each|chaque)"
_SINGULAR_INTERVAL_UNITS = r"(?P<unit>second|minute|hour|seconde|heure)"

_RULES: tuple[tuple[re.Pattern[str], Handler], ...] = tuple(
    (re.compile(pattern), handler)
    for pattern, handler in (
        (r"now|immediately|right now|maintenant|immédiatement|tout de suite", _immediate),
        (rf"(?:(?:in|dans)\s+)?(?P<duration>{_DURATION})(?:\s+from now)?", _relative),
        (rf"(?P<day>today|tomorrow|aujourd'hui|aujourd’hui|demain){_OPT_TIME}", _day_word),
        (rf"{_AT}\s+(?P<time>.+)", _at_time),
        (r"(?P<time>\d{1,2}(?::\d{2}){1,2}\s*(?:[ap]\.?m\.?)?|\d{1,2}\s*[ap]\.?m\.?)", _at_time),
        (rf"(?:on|le)\s+(?P<date>{_DATE}){_OPT_TIME}", _on_date),
        (rf"(?:{_EVERY}|toutes les)\s+(?P<duration>{_DURATION})", _every_duration),
        (rf"{_EVERY}\s+(?:an?\s+|une\s+)?{_SINGULAR_INTERVAL_UNITS}", _every_unit),
        (r"toutes les (?P<unit>secondes|minutes|heures)", _every_unit),
        (r"hourly", _hourly),
        (
            rf"(?:{_EVERY}\s+day|daily|tous les jours|chaque jour|quotidiennement){_OPT_TIME}",
            _daily,
        ),
        (
            rf"(?:{_EVERY}\s+week|weekly|toutes les semaines|chaque semaine)"
            rf"(?:\s+(?:on|le)\s+(?P<day>{_WEEKDAY}))?{_OPT_TIME}",
            _weekly,
        ),
        (rf"(?:{_EVERY}|tous les)\s+(?P<day>{_WEEKDAY})s?{_OPT_TIME}", _every_weekday_name),
        (rf"{_EVERY}\s+(?:weekday|working day|business day)s?{_OPT_TIME}", _working_days),
        (r"@(?:yearly|annually|monthly|weekly|daily|midnight|hourly)", _macro),
        (r"[0-9*][0-9*/,-]*(?: [0-9a-z*/,?#-]+){4}", _cron),
    )
)
