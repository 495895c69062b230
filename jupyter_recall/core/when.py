"""Time expressions: ``parse_when`` turns what users type into a :class:`ScheduleSpec`.

The parser is strict and deterministic: the base instant and the zone are arguments, the whole
text must be understood, and anything else is a :class:`ParseError` listing ``ACCEPTED_FORMS``.
Semantics (DST, drift, defaults) are documented in ``docs/time-expressions.md``.
"""

from __future__ import annotations

import calendar
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import date, datetime, time, timedelta, timezone, tzinfo
from functools import lru_cache
from typing import Any

from jupyter_recall.core import when_calendar
from jupyter_recall.core.cron import MACROS, parse_cron
from jupyter_recall.core.dependency import parse_after
from jupyter_recall.core.errors import ParseError, ValidationError
from jupyter_recall.core.schedule import SPEC_VERSION, ScheduleKind, ScheduleSpec
from jupyter_recall.core.suggest import did_you_mean
from jupyter_recall.core.triggers.after import AfterTrigger
from jupyter_recall.core.triggers.cron import CronTrigger
from jupyter_recall.core.triggers.interval import IntervalTrigger
from jupyter_recall.core.triggers.once import OnceTrigger
from jupyter_recall.core.triggers.wallclock import instant_to_wall, local_instant, wall_to_instant
from jupyter_recall.core.triggers.weeks import WeeksTrigger, monday_of
from jupyter_recall.core.tz import is_zone, lookup_tz, nearest_zone
from jupyter_recall.core.when_words import (
    AT,
    DURATION,
    EVERY,
    EXAMPLES,
    OPT_TIME,
    TIME_RE,
    UNIT_SECONDS,
    VOCABULARY,
    WEEKDAY,
    WEEKDAYS,
    WORD_TIMES,
    Duration,
    ascii_digits,
    describe_days,
    read_duration,
)

__all__ = [
    "ACCEPTED_FORMS",
    "DEFAULT_TIME_OF_DAY",
    "SPEC_VERSION",
    "ScheduleKind",
    "ScheduleSpec",
    "parse_when",
]

UTC = timezone.utc

ACCEPTED_FORMS: tuple[str, ...] = (
    "relative: '30m', '2h 15m', '1h30', '90s', 'in 3 hours', 'in half an hour', "
    "'in 2 weeks', 'in 1 month'",
    "absolute: 'at 17:00', 'at 5pm', 'noon', 'today at 17:00', 'tomorrow', 'tomorrow at 09:00', "
    "'tomorrow morning', 'tonight', 'this evening', 'on 2099-06-01 at 12:00'",
    "ISO 8601 / RFC 3339: '2099-06-01T12:00:00+02:00', '2099-06-01T10:00:00Z', "
    "'2099-06-01 12:00' (no offset: in the schedule's time zone)",
    "a zone after a time or a date: 'tomorrow at 9:00 UTC', 'at 17:00 Europe/Paris', "
    "'every day at 9:00 +02:00'",
    "intervals: 'every 30 minutes', 'every 2 hours', 'every 30m', 'every 1h30m', "
    "'every half hour', 'every hour', 'hourly'",
    "wall clock: 'every day at 09:00', 'daily', 'every week on monday at 10:00', 'weekly', "
    "'every friday at 17:00', 'weekdays at 08:30', 'every weekend at 10:00', "
    "'every monday and thursday at 9:00', 'every 2 weeks on monday', 'every morning'",
    "monthly: 'every month on the 1st', 'on the 15th of every month at 9:00', "
    "'last day of the month', 'every first monday of the month', 'monthly'",
    "cron: 5 fields 'minute hour day-of-month month day-of-week' such as '*/15 9-17 * * 1-5', "
    "or @hourly, @daily, @midnight, @weekly, @monthly, @yearly, @annually",
    "immediate: 'now', 'immediately'",
    "French: 'dans 30 minutes', 'dans une demi-heure', 'demain', 'demain à 9h', 'demain matin', "
    "'ce soir', 'tous les jours à 9h', 'toutes les 15 minutes', 'tous les lundis à 8h30', "
    "'en semaine à 9h', 'le 15 de chaque mois', 'le premier lundi du mois', "
    "'toutes les 2 semaines le lundi', 'maintenant'",
)

MAX_TEXT_LENGTH = 200
"""Longer texts are refused before any matching: no time expression is that long."""

MAX_DURATION_SECONDS = 36525 * 86400
"""Durations (relative times and intervals) up to 100 years: beyond that, datetimes overflow."""

DEFAULT_TIME_OF_DAY = time(9, 0)
"""The time of forms that name a day but no time (``tomorrow``, ``on 2099-06-01``, ``daily``)."""

MAX_MONTHS = 1200
"""``in N months``: up to 100 years."""

DEFAULT_WEEKDAY = 1
"""The cron day of week of ``weekly`` / ``every week`` without a day: Monday."""

# --------------------------------------------------------------------------------------------
# Vocabulary
# --------------------------------------------------------------------------------------------

_DATE = r"\d{4}-\d{2}-\d{2}"


# --------------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Context:
    text: str
    now: datetime  # aware UTC
    tz: str
    zone: tzinfo = field(repr=False)
    zone_written: str | None = None  # a zone written at the end of the text ("... UTC")
    suggest: bool = True  # whether a failure looks for "did you mean" (not while checking one)

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

    def weeks(self, weeks: int, cron_days: list[int], at: time) -> ScheduleSpec:
        """Every ``weeks`` weeks on ``cron_days``, from the week of the first occurrence."""
        days = [(day - 1) % 7 for day in cron_days]
        this_week = monday_of(self.local_today())
        weekly = WeeksTrigger(1, tuple(days), at.hour, at.minute, this_week, self.tz)
        canonical = f"every {weeks} weeks on {describe_days(cron_days)} at {at:%H:%M}"
        first = weekly.next_after(self.now)
        if first is None:  # at the end of year 9999
            raise self.fail(f"{canonical!r} never fires")
        start = monday_of(instant_to_wall(first, self.zone).date())
        trigger = replace(weekly, weeks=weeks, start=start)
        return ScheduleSpec("cron", canonical, self.tz, trigger, anchor=self.now)

    def clock_time(self, text: str | None) -> time:
        return _parse_time(text, self)

    def cron_time(self, text: str | None) -> tuple[int, int]:
        return _cron_time(text, self)


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
    text = ascii_digits(text)
    return _relative_once(text, now, name, zone) or _read_whole(text, now, name, zone)


def _read_whole(text: str, now: datetime, name: str, zone: tzinfo) -> ScheduleSpec:
    after = parse_after(text)
    if after is not None:
        return ScheduleSpec("after", after.text, name, AfterTrigger(after))
    stripped, zone_written = _split_zone(text.strip())
    if zone_written is not None:
        name, zone = lookup_tz(zone_written)
    try:
        # The ISO path comes first and builds no context: it is the hot path of bulk job creation.
        if len(stripped) > 10 and stripped[:4].isdigit():
            local = _iso_local(stripped, zone)
            if local is not None and local >= now:
                canonical = _isoformat(local, stripped)
                return ScheduleSpec("once", canonical, name, OnceTrigger(local.astimezone(UTC)))
        ctx = _Context(text, now, name, zone, zone_written)
        iso = _parse_iso(stripped, ctx)
        if iso is not None:
            return iso
        return _parse_words(_normal(stripped), ctx, _remembered_matches)
    except OverflowError:
        reason = "the time is outside the supported range (years 1 to 9999)"
        raise _Context(text, now, name, zone).fail(reason) from None
    except ParseError:
        refusal = None if zone_written else _unknown_zone(_Context(text, now, name, zone))
        if refusal is None:
            raise
        raise refusal from None


_ZONE_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_+/-]*|[+-]\d{2}(?::?\d{2})?")


def _normal(stripped: str) -> str:
    """The text the rules match: lower case, spaces collapsed (both readings use it)."""
    return " ".join(stripped.lower().split())


def _split_zone(stripped: str) -> tuple[str, str | None]:
    """``("tomorrow at 9:00", "UTC")`` for ``"tomorrow at 9:00 UTC"``: the text and the zone
    written as its last word (an IANA name, UTC/GMT/Z or an offset), if it is one."""
    head, space, last = stripped.rpartition(" ")
    if not space or not head.strip() or _ZONE_WORD.fullmatch(last) is None:
        return stripped, None
    if not is_zone(last):
        return stripped, None
    return head.rstrip(), last


def _iso_local(stripped: str, zone: tzinfo) -> datetime | None:
    """An ISO 8601 / RFC 3339 date-time as an aware datetime in ``zone``, or None."""
    parsed = _fromisoformat(stripped)
    if parsed is None:
        return None
    if parsed.tzinfo is None:
        return local_instant(parsed, zone)
    written = _OFFSET_END.search(stripped, len(stripped) - 20)
    if written is not None and _offset_mistake(written[0]) is not None:
        return None  # fromisoformat reads +05:75 as +06:15
    return parsed.astimezone(zone)


_OFFSET_FIELDS = re.compile(r"[+-](\d{2})(?::?(\d{2}))?(?::?(\d{2})(?:\.\d+)?)?")
"""A UTC offset's hours, minutes and seconds (``_offset_mistake`` checks them)."""
_OFFSET_END = re.compile(_OFFSET_FIELDS.pattern + r"\Z")
"""The UTC offset that ends an ISO date-time."""


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
            _refuse_impossible(stripped, ctx)
            return None
        return ctx.once(ctx.at_wall(day, DEFAULT_TIME_OF_DAY))
    local = _iso_local(stripped, ctx.zone)
    if local is None:
        _refuse_impossible(stripped, ctx)
        return None
    return ctx.once(local)


def _refuse_impossible(stripped: str, ctx: _Context) -> None:
    """For a text written as an ISO date or date-time that is none, the error naming what it
    holds that cannot be (a day its month lacks, hour 25, UTC offset +25:00). Nothing for
    other texts: the rules read them next."""
    mistake = _iso_mistake(stripped)
    if mistake is not None:
        raise ctx.fail(mistake)


_ISO_SHAPE = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})"
    r"(?:[Tt ](?P<clock>(?P<h>\d{2}):(?P<mi>\d{2})(?::(?P<s>\d{2})(?:[.,]\d+)?)?)"
    r"(?P<offset>[Zz]|[+-]\d{2}(?::?\d{2})?(?::?\d{2}(?:\.\d+)?)?)?)?"
)
"""An ISO date or date-time, whatever its numbers: what ``_iso_mistake`` checks them in."""


def _iso_mistake(stripped: str) -> str | None:
    """What is impossible in an ISO date or date-time (None: not written as one, or nothing)."""
    shape = _ISO_SHAPE.fullmatch(stripped)
    if shape is None:
        return None
    mistake = _date_mistake(shape["date"])
    if mistake is None and shape["clock"]:
        hour, minute, second = (int(shape[part] or 0) for part in ("h", "mi", "s"))
        mistake = _time_mistake(shape["clock"], hour, minute, second)
    if mistake is None and shape["offset"]:
        mistake = _offset_mistake(shape["offset"])
    return mistake


_MONTHS = (
    *("January", "February", "March", "April", "May", "June", "July", "August"),
    *("September", "October", "November", "December"),
)


def _date_mistake(text: str) -> str | None:
    """Why ``YYYY-MM-DD`` is no calendar date (month 13, a day its month lacks), or None."""
    year, month, day = (int(part) for part in text.split("-"))
    if year < 1:
        why = f"year {year} is out of range (1-9999)"
    elif not 1 <= month <= 12:
        why = f"month {month} is out of range (1-12)"
    elif 1 <= day <= calendar.monthrange(year, month)[1]:
        return None
    elif not 1 <= day <= 31:
        why = f"day {day} is out of range (1-31)"
    elif (month, day) == (2, 29):
        why = f"February {year} has no day 29 ({year} is not a leap year)"
    else:
        why = f"{_MONTHS[month - 1]} has no day {day}"
    return f"{text!r} is not a calendar date: {why}"


def _time_mistake(text: str, hour: int, minute: int, second: int) -> str | None:
    """Why the time of day ``text`` (read as these numbers) is none, or None."""
    mistake = _clock_mistake(hour, minute, second)
    return None if mistake is None else f"{text!r} is not a valid time of day: {mistake}"


def _clock_mistake(hour: int, minute: int, second: int) -> str | None:
    """Which of a time's hour (0-23), minute and second (0-59) is out of range, or None."""
    for name, value, top in (("hour", hour, 23), ("minute", minute, 59), ("second", second, 59)):
        if value > top:
            return f"{name} {value} is out of range (0-{top})"
    return None


def _offset_mistake(offset: str) -> str | None:
    """What is impossible in a UTC offset (``+25:00``, ``+05:75``), or None."""
    fields = _OFFSET_FIELDS.fullmatch(offset)
    if fields is None:
        return None
    hours, minutes, seconds = (int(field or 0) for field in fields.groups())
    if hours > 23:
        return f"UTC offset {offset} is out of range (-23:59 to +23:59)"
    wrong = _clock_mistake(0, minutes, seconds)
    return None if wrong is None else f"UTC offset {offset}: {wrong}"


_ZONE_SHAPE = re.compile(
    r"(?P<name>[A-Za-z][A-Za-z_-]*(?:/[A-Za-z][A-Za-z0-9_+-]*)+)"  # Area/Location
    r"|[+-]\d{2}(?::?\d{2})?"  # a UTC offset
    r"|[A-Z]{2,4}T"  # an abbreviation, in capitals: PST, CEST
)
"""A word written as a time zone."""

_ZONE_HINT = "(a zone is an IANA name such as 'Europe/Paris' or a UTC offset such as '+02:00')"


def _unknown_zone(ctx: _Context) -> ParseError | None:
    """The error for a text understood but for its last word, written as a zone and none
    (``Europe/Nowhere``, ``+25:00``, ``PST``); None for any other text."""
    head, space, last = ctx.text.strip().rpartition(" ")
    shape = _ZONE_SHAPE.fullmatch(last)
    if not space or shape is None or not _understood(head.rstrip(), ctx):
        return None
    if last[0] in "+-":
        return ctx.fail(_offset_mistake(last) or f"unknown time zone {last!r} {_ZONE_HINT}")
    nearest = nearest_zone(last) if shape["name"] else None
    hint = _ZONE_HINT if nearest is None else f"(did you mean {nearest!r}?)"
    return ctx.fail(f"unknown time zone {last!r} {hint}")


def _understood(stripped: str, ctx: _Context) -> bool:
    """Whether ``stripped`` reads as a time expression (quietly: no 'did you mean')."""
    quiet = replace(ctx, suggest=False)
    try:
        if _parse_iso(stripped, quiet) is None:
            _parse_words(_normal(stripped), quiet)
    except (ParseError, OverflowError):
        return False
    return True


Handler = Callable[["re.Match[str]", _Context], ScheduleSpec]


Matches = tuple[tuple[Handler, "re.Match[str]"], ...]


def _rule_matches(normal: str) -> Matches:
    """Every rule ``normal`` matches, in order, with its match: the part of reading a text that
    depends on neither the instant nor the zone."""
    found = ((handler, pattern.fullmatch(normal)) for pattern, handler in _RULES)
    return tuple((handler, match) for handler, match in found if match is not None)


_remembered_matches = lru_cache(maxsize=512)(_rule_matches)
"""``_rule_matches`` remembered per text, for the texts submitted: programs write the same few
again and again. (Not for the candidates a "did you mean" tries: they would push those out.)"""


def _parse_words(
    normal: str, ctx: _Context, matches_of: Callable[[str], Matches] = _rule_matches
) -> ScheduleSpec:
    if not normal:
        raise ctx.fail("the text is empty")
    if len(normal) > MAX_TEXT_LENGTH:
        raise ctx.fail(f"the text is longer than {MAX_TEXT_LENGTH} characters")
    first_error: ParseError | None = None
    for handler, match in matches_of(normal):
        if ctx.zone_written and handler in _ZONELESS:
            raise ctx.fail(
                f"a zone ({ctx.zone_written!r}) goes after a time or a date; after a relative "
                "time, an interval or 'now' it means nothing (remove it)"
            )
        try:
            return handler(match, ctx)
        except ParseError as exc:
            first_error = first_error or exc
    if first_error is not None:
        if first_error.reason.endswith(_NOT_A_TIME):
            raise ctx.fail(first_error.reason + _suggestion(normal, ctx))
        raise first_error
    fallback = _parse_natural(normal, ctx)
    if fallback is not None:
        return fallback
    miscounted = _miscounted_cron(normal)
    if miscounted is not None:
        raise ctx.fail(miscounted)
    raise ctx.fail(_leftover_reason(normal) + _suggestion(normal, ctx))


_CRON_FIELD = re.compile(r"[0-9a-z*/,?#-]+")


def _miscounted_cron(normal: str) -> str | None:
    """``parse_cron``'s reason for a cron written with 4, 6 or 7 fields (a seconds or a year
    field, as Quartz and Spring write them), which no rule matches: without it the reason was
    the leftover's, with a 'did you mean' picked among French phrases."""
    fields = normal.split()
    if len(fields) not in (4, 6, 7) or not all(map(_CRON_FIELD.fullmatch, fields)):
        return None
    if fields[0][0] not in "0123456789*" or not any("*" in field for field in fields):
        return None
    try:
        parse_cron(normal)
    except ParseError as error:
        return error.reason
    return None  # not reached: parse_cron refuses any count of fields but 5


def _suggestion(normal: str, ctx: _Context) -> str:
    if not ctx.suggest:
        return ""
    quiet = replace(ctx, suggest=False)

    def accepts(candidate: str) -> bool:
        try:
            _parse_words(candidate, quiet)
        except ParseError:
            return False
        return True

    nearest = did_you_mean(normal, VOCABULARY, EXAMPLES, accepts)
    return "" if nearest is None else f" (did you mean {nearest!r}?)"


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


_MAX_FALLBACK_DIGITS = 4
"""parsedatetime is given numbers of up to 4 digits (a year): larger ones make it fail."""


def _nlp(normal: str, ctx: _Context) -> Any:
    import parsedatetime

    parser = parsedatetime.Calendar(version=parsedatetime.VERSION_CONTEXT_STYLE)
    try:
        return parser.nlp(normal, sourceTime=instant_to_wall(ctx.now, ctx.zone))
    except (ArithmeticError, LookupError, TypeError, ValueError):
        # parsedatetime is a third-party boundary that raises these on odd input (a TypeError
        # for an 18-digit month count): the text is not understood, which is a ParseError.
        return None


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
    for number in re.findall(r"\d+", normal):
        if len(number) > _MAX_FALLBACK_DIGITS:
            raise ctx.fail(
                f"the number {number[:12]}{'…' if len(number) > 12 else ''} is too large here "
                f"(numbers in a date have at most {_MAX_FALLBACK_DIGITS} digits)"
            )
    found = _nlp(normal, ctx)
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


_NOT_A_TIME = "(use 17:00, 5pm or 17h30)"
"""The end of the error for a time of day not understood: the phrase gets a 'did you mean'."""


def _parse_time(text: str | None, ctx: _Context) -> time:
    if text is None:
        return DEFAULT_TIME_OF_DAY
    match = TIME_RE.fullmatch(text)
    if match is None:
        raise ctx.fail(f"{text!r} is not a time of day {_NOT_A_TIME}")
    if match["word"]:
        return WORD_TIMES[match["word"]]
    if match["fh"]:
        return _clock_time(int(match["fh"]), int(match["fm"] or 0), 0, text, ctx)
    hour, minute, second = int(match["h"]), int(match["m"] or 0), int(match["s"] or 0)
    if match["ampm"]:
        if not 1 <= hour <= 12:
            raise ctx.fail(f"{text!r}: an am/pm hour must be between 1 and 12")
        hour = hour % 12 + (12 if match["ampm"].startswith("p") else 0)
    return _clock_time(hour, minute, second, text, ctx)


def _clock_time(hour: int, minute: int, second: int, text: str, ctx: _Context) -> time:
    mistake = _time_mistake(text, hour, minute, second)
    if mistake is not None:
        raise ctx.fail(mistake)
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


# --------------------------------------------------------------------------------------------
# Rules: (pattern matched against the lower-cased, space-collapsed text, handler)
# --------------------------------------------------------------------------------------------


def _immediate(match: re.Match[str], ctx: _Context) -> ScheduleSpec:
    return ScheduleSpec(kind="immediate", canonical="now", tz=ctx.tz, trigger=OnceTrigger(ctx.now))


def _relative(match: re.Match[str], ctx: _Context) -> ScheduleSpec:
    duration = read_duration(match["duration"])
    refusal = _relative_refusal(duration)
    if refusal is not None:
        raise ctx.fail(refusal)
    start = _months_later(ctx, duration.months) if duration.months else ctx.now
    return ctx.once(start + timedelta(seconds=duration.seconds))


def _relative_refusal(duration: Duration) -> str | None:
    months, seconds = duration.months, duration.seconds
    if months < 0 or (months == 0 and seconds <= 0):
        return f"a relative time must be in the future, got {seconds} s"
    if months > MAX_MONTHS:
        return f"a relative time must be at most {MAX_MONTHS} months (100 years)"
    if seconds > MAX_DURATION_SECONDS:
        return f"a relative time must be at most {MAX_DURATION_SECONDS // 86400} days"
    return None


def _relative_once(text: str, now: datetime, tz: str, zone: tzinfo) -> ScheduleSpec | None:
    """What the whole reading of ``text`` gives when it is a relative time of seconds alone,
    the most common form, at a tenth of the cost; None for any other text."""
    seconds = _relative_seconds(text)
    if seconds is None:
        return None
    try:
        return _once_spec(now + timedelta(seconds=seconds), tz, zone)
    except OverflowError:
        return None  # the whole reading says why


@lru_cache(maxsize=512)
def _relative_seconds(text: str) -> int | None:
    """The seconds of ``text`` when the whole reading of it would be ``_relative`` of seconds
    alone ("in 30 minutes", "dans 2 heures"): programs write the same few again and again, and
    this half of the reading does not depend on the instant (the zone neither: one is written
    at the end, and this says None). None for anything else, which the whole reading takes."""
    stripped = text.strip()
    if stripped[:4].isdigit() or stripped[:5].lower() == "after":
        return None  # the ISO forms, a dependency
    if _split_zone(stripped)[1] is not None:
        return None  # a zone written, which a relative time refuses
    normal = _normal(stripped)
    if not normal or len(normal) > MAX_TEXT_LENGTH:
        return None
    matches = _remembered_matches(normal)
    if not matches or matches[0][0] is not _relative:
        return None
    duration = read_duration(matches[0][1]["duration"])
    if duration.months or _relative_refusal(duration) is not None:
        return None
    return duration.seconds


def _months_later(ctx: _Context, months: int) -> datetime:
    """The same wall time ``months`` later (the last day of the month if that day is missing)."""
    wall = instant_to_wall(ctx.now, ctx.zone)
    year, month_index = divmod(wall.month - 1 + months, 12)
    year += wall.year
    if year > 9999:
        raise OverflowError(f"year {year}")
    day = min(wall.day, calendar.monthrange(year, month_index + 1)[1])
    return wall_to_instant(wall.replace(year=year, month=month_index + 1, day=day), ctx.zone)


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
        mistake = _date_mistake(match["date"])
        raise ctx.fail(mistake or f"{match['date']!r} is not a calendar date") from None
    return ctx.once(ctx.at_wall(day, _parse_time(match["time"], ctx)))


def _every_duration(match: re.Match[str], ctx: _Context) -> ScheduleSpec:
    duration = read_duration(match["duration"])
    if duration.months:
        raise ctx.fail(
            "an interval is elapsed time, and months and years are not: use a monthly form "
            "('every month on the 1st') or a cron such as '0 9 1 */3 *'"
        )
    return ctx.interval(duration.seconds)


def _every_unit(match: re.Match[str], ctx: _Context) -> ScheduleSpec:
    return ctx.interval(UNIT_SECONDS[match["unit"]])


def _every_half_hour(match: re.Match[str], ctx: _Context) -> ScheduleSpec:
    return ctx.interval(1800)


def _hourly(match: re.Match[str], ctx: _Context) -> ScheduleSpec:
    return ctx.interval(3600)


def _daily(match: re.Match[str], ctx: _Context) -> ScheduleSpec:
    minute, hour = _cron_time(match["time"], ctx)
    return ctx.cron(f"{minute} {hour} * * *")


def _weekly(match: re.Match[str], ctx: _Context) -> ScheduleSpec:
    minute, hour = _cron_time(match["time"], ctx)
    day = WEEKDAYS[match["day"]] if match["day"] else DEFAULT_WEEKDAY
    return ctx.cron(f"{minute} {hour} * * {day}")


def _macro(match: re.Match[str], ctx: _Context) -> ScheduleSpec:
    return ctx.cron(MACROS[match[0]])


_CRON_LETTERS = re.compile(r"(?<![a-z])(?:lw|l)(?![a-z])|(?<=[0-9])[lw](?![a-z])")
"""``l``, ``lw``, ``5l``, ``15w`` in a lower-cased expression: written upper-case, as cron does."""


def _cron(match: re.Match[str], ctx: _Context) -> ScheduleSpec:
    expression = _CRON_LETTERS.sub(lambda letters: letters[0].upper(), match[0])
    try:
        parse_cron(expression)
    except ParseError as exc:
        raise ctx.fail(exc.reason) from None
    return ctx.cron(expression)


_SINGULAR_INTERVAL_UNITS = r"(?P<unit>second|minute|hour|seconde|heure)"

_RULES: tuple[tuple[re.Pattern[str], Handler], ...] = tuple(
    (re.compile(pattern), handler)
    for pattern, handler in (
        (r"now|immediately|right now|maintenant|immédiatement|tout de suite", _immediate),
        (rf"(?:(?:in|dans)\s+)?(?P<duration>{DURATION})(?:\s+from now)?", _relative),
        (rf"(?P<day>today|tomorrow|aujourd'hui|aujourd’hui|demain){OPT_TIME}", _day_word),
        (rf"{AT}\s+(?P<time>.+)", _at_time),
        (r"(?P<time>\d{1,2}(?::\d{2}){1,2}\s*(?:[ap]\.?m\.?)?|\d{1,2}\s*[ap]\.?m\.?)", _at_time),
        (r"(?P<time>noon|midday|midnight|midi|minuit)", _at_time),
        (rf"(?:on|le)\s+(?P<date>{_DATE}){OPT_TIME}", _on_date),
        (rf"(?:{EVERY}|toutes les)\s+(?P<duration>{DURATION})", _every_duration),
        (rf"{EVERY}\s+(?:an?\s+|une\s+)?{_SINGULAR_INTERVAL_UNITS}", _every_unit),
        (r"toutes les (?P<unit>secondes|minutes|heures)", _every_unit),
        (rf"{EVERY}\s+half\s+(?:an\s+)?hour|toutes les demi-heures", _every_half_hour),
        (r"hourly", _hourly),
        (
            rf"(?:{EVERY}\s+day|daily|tous les jours|chaque jour|quotidiennement){OPT_TIME}",
            _daily,
        ),
        (
            rf"(?:{EVERY}\s+week|weekly|toutes les semaines|chaque semaine)"
            rf"(?:\s+(?:on|le)\s+(?P<day>{WEEKDAY}))?{OPT_TIME}",
            _weekly,
        ),
        *when_calendar.RULES,
        (r"@(?:yearly|annually|monthly|weekly|daily|midnight|hourly)", _macro),
        (r"[0-9*][0-9*/,-]*(?: [0-9a-z*/,?#-]+){4}", _cron),
    )
)

# Forms after which a written zone means nothing ("in 30m UTC"): refused rather than ignored.
_ZONELESS: frozenset[Handler] = frozenset(
    {_immediate, _relative, _every_duration, _every_unit, _every_half_hour, _hourly}
)
