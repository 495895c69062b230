"""5-field cron expressions with the semantics of Vixie cron (the cron of POSIX systems).

``parse_cron`` turns ``minute hour day-of-month month day-of-week`` into a :class:`Cron` of typed
field sets; ``Cron.next_wall_after`` is the first matching naive wall time strictly after a given
one. Nothing here knows about zones or the clock (``core.triggers.cron`` maps wall times to
instants). The rules, and the extensions kept for expressions stored by earlier versions, are
documented in ``docs/time-expressions.md``:

- names (``jan``-``dec``, ``sun``-``sat``), lists, ranges (``13-13`` is 13), steps (``*/15``,
  ``9-17/2``, ``5/15`` = ``5-59/15``), and 7 as Sunday;
- the day rule of Vixie cron: when the day-of-month field or the day-of-week field starts with
  ``*`` (or ``?``), a day must match both; otherwise either (``1-31`` is not ``*``);
- extensions: ``L``, ``LW`` and ``15W`` in day-of-month, ``5L`` and ``1#2`` in day-of-week, and
  ranges that wrap around (``fri-mon``, ``22-2``).
"""

from __future__ import annotations

import calendar
from bisect import bisect_left
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache

from jupyter_recall.core.errors import ParseError

FIELD_NAMES = ("minute", "hour", "day-of-month", "month", "day-of-week")

MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}

_MONTH_NAMES = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAY_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")

# Months to examine before giving up. The Gregorian calendar repeats every 400 years, so a cron
# that fires at all fires within that span of any instant (a cron that never fires is known at
# parse time and never searched).
_MAX_MONTHS = 400 * 12 + 1
_LAST_YEAR = 9999


@dataclass(frozen=True, slots=True)
class _Field:
    name: str
    low: int
    high: int
    names: tuple[str, ...] = ()
    name_base: int = 0

    def fail(self, item: str, reason: str) -> ParseError:
        return ParseError(item, f"{self.name} {item!r} {reason}")

    def accepted(self) -> str:
        if not self.names:
            return f"{self.low}-{self.high}"
        return f"{self.low}-{self.high} or {self.names[0]}-{self.names[-1]}"

    def value(self, text: str, item: str) -> int:
        if text.lower() in self.names:
            return self.names.index(text.lower()) + self.name_base
        if not text.isdigit() or not text.isascii():
            raise self.fail(item, f"is not a number or a name (accepted: {self.accepted()})")
        number = int(text) if len(text) <= 4 else self.high + 1
        if not self.low <= number <= self.high:
            raise self.fail(item, f"is out of range {self.low}-{self.high}")
        return number


_MINUTE = _Field("minute", 0, 59)
_HOUR = _Field("hour", 0, 23)
_DOM = _Field("day-of-month", 1, 31)
_MONTH = _Field("month", 1, 12, _MONTH_NAMES, 1)
_DOW = _Field("day-of-week", 0, 7, _DAY_NAMES)


@dataclass(frozen=True, slots=True)
class MonthDays:
    """The day-of-month field: plain days, ``L`` (last day), ``LW`` and ``nW`` (weekdays)."""

    days: frozenset[int]
    last: bool = False
    last_weekday: bool = False
    nearest_weekday: frozenset[int] = frozenset()

    def days_in(self, length: int, first: int) -> set[int]:
        """The matching days of a month of ``length`` days whose 1st is cron weekday ``first``."""
        found = {day for day in self.days if day <= length}
        if self.last:
            found.add(length)
        # A day the month lacks ("31W" in June) is its last day, as croniter read it.
        targets = {min(n, length) for n in self.nearest_weekday}
        targets |= {length} if self.last_weekday else set()
        found.update(_nearest_weekday(n, length, first) for n in targets)
        return found


def _nearest_weekday(target: int, length: int, first: int) -> int:
    """The Monday-Friday day nearest ``target`` without leaving the month (Quartz ``W``)."""
    weekday = (first + target - 1) % 7
    if weekday == 6:  # Saturday: Friday, or Monday when the 1st is a Saturday
        return target - 1 if target > 1 else target + 2
    if weekday == 0:  # Sunday: Monday, or Friday when it is the last day
        return target + 1 if target < length else target - 2
    return target


@dataclass(frozen=True, slots=True)
class WeekDays:
    """The day-of-week field: days (0 = Sunday), ``nL`` (the last n of the month), ``n#k``."""

    days: frozenset[int]
    last: frozenset[int] = frozenset()
    nth: frozenset[tuple[int, int]] = frozenset()

    def days_in(self, length: int, first: int) -> set[int]:
        """The matching days of a month of ``length`` days whose 1st is cron weekday ``first``."""
        found: set[int] = set()
        for weekday in self.days:
            found.update(range(_first_day(weekday, first), length + 1, 7))
        for weekday in self.last:
            found.add(range(_first_day(weekday, first), length + 1, 7)[-1])
        for weekday, week in self.nth:
            day = _first_day(weekday, first) + 7 * (week - 1)
            if day <= length:
                found.add(day)
        return found


def _first_day(weekday: int, first: int) -> int:
    """The day of the month of the first ``weekday`` of a month whose 1st is ``first``."""
    return (weekday - first) % 7 + 1


@dataclass(frozen=True, slots=True)
class Cron:
    """A parsed expression. ``days_and``: a day must match both day fields (Vixie's ``*`` rule)."""

    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    month_days: MonthDays
    months: frozenset[int]
    week_days: WeekDays
    days_and: bool

    def days_in(self, length: int, first: int) -> tuple[int, ...]:
        """The matching days of a month of ``length`` days whose 1st is cron weekday ``first``."""
        in_month = self.month_days.days_in(length, first)
        in_week = self.week_days.days_in(length, first)
        return tuple(sorted(in_month & in_week if self.days_and else in_month | in_week))

    def days_of_month(self, year: int, month: int) -> tuple[int, ...]:
        """The matching days of a month (an empty tuple when the month does not match)."""
        if month not in self.months:
            return ()
        first_weekday, length = calendar.monthrange(year, month)
        return _days_table(self)[length - 28][(first_weekday + 1) % 7]

    def fires_ever(self) -> bool:
        """Whether some month of the 400-year cycle has a matching day."""
        return _fires_ever(self)

    def next_wall_after(self, wall: datetime) -> datetime | None:
        """The first matching naive wall time strictly after ``wall`` (at minute precision)."""
        if not _fires_ever(self):
            return None
        try:
            start = wall.replace(second=0, microsecond=0, tzinfo=None, fold=0)
            start += timedelta(minutes=1)
        except OverflowError:
            return None
        year, month = start.year, start.month
        day, hour, minute = start.day, start.hour, start.minute
        for _ in range(_MAX_MONTHS):
            found = self._in_month(year, month, day, hour, minute)
            if found is not None:
                return datetime(year, month, *found)
            if year == _LAST_YEAR and month == 12:
                return None
            year, month = (year + 1, 1) if month == 12 else (year, month + 1)
            day, hour, minute = 1, 0, 0
        return None

    def _in_month(
        self, year: int, month: int, day: int, hour: int, minute: int
    ) -> tuple[int, int, int] | None:
        for candidate in self.days_of_month(year, month):
            if candidate < day:
                continue
            at = self._time_from(hour, minute) if candidate == day else self._time_from(0, 0)
            if at is not None:
                return candidate, at[0], at[1]
        return None

    def _time_from(self, hour: int, minute: int) -> tuple[int, int] | None:
        """The first (hour, minute) of the expression at or after the given one in a day."""
        hours, minutes = self.hours, self.minutes
        index = bisect_left(hours, hour)
        if index < len(hours) and hours[index] == hour:
            at = bisect_left(minutes, minute)
            if at < len(minutes):
                return hour, minutes[at]
            index += 1
        if index < len(hours):
            return hours[index], minutes[0]
        return None


def _possible_lengths(month: int) -> tuple[int, ...]:
    return (28, 29) if month == 2 else (calendar.monthrange(2001, month)[1],)


@lru_cache(maxsize=1024)
def _fires_ever(cron: Cron) -> bool:
    # Every month length meets every weekday of the 1st within the 400-year cycle.
    table = _days_table(cron)
    return any(any(table[n - 28]) for m in cron.months for n in _possible_lengths(m))


# The matching days of a month depend only on its length and the weekday of its 1st: 4 x 7
# tuples per expression, computed once, make every later month a lookup.
@lru_cache(maxsize=1024)
def _days_table(cron: Cron) -> tuple[tuple[tuple[int, ...], ...], ...]:
    return tuple(
        tuple(cron.days_in(length, first) for first in range(7)) for length in (28, 29, 30, 31)
    )


# --------------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------------


@lru_cache(maxsize=1024)
def parse_cron(expression: str) -> Cron:
    """Parse a 5-field expression (case-insensitive). ParseError names the field and its range."""
    fields = expression.split()
    if len(fields) != 5:
        # Quartz and Spring write a seconds field first, and a year field last.
        extra = ": seconds and years are not read here" if len(fields) in (6, 7) else ""
        raise ParseError(
            expression,
            "a cron expression has 5 fields (minute hour day-of-month month day-of-week), "
            f"got {len(fields)}{extra}",
        )
    # "?" (Quartz: "no specific value") is read as "*", as croniter did.
    minute, hour, dom, month, dow = (f.replace("?", "*") for f in fields)
    try:
        return Cron(
            minutes=tuple(sorted(_numbers(_MINUTE, minute))),
            hours=tuple(sorted(_numbers(_HOUR, hour))),
            month_days=_month_days(dom),
            months=frozenset(_numbers(_MONTH, month)),
            week_days=_week_days(dow),
            days_and=dom.startswith("*") or dow.startswith("*"),
        )
    except ParseError as exc:
        raise ParseError(expression, exc.reason) from None


def _numbers(field: _Field, text: str) -> set[int]:
    values: set[int] = set()
    for item in text.split(","):
        values.update(_item(field, item))
    return values


def _item(field: _Field, item: str) -> list[int]:
    """One list item: ``*``, ``a``, ``a-b``, each with an optional ``/step``."""
    body, slash, step_text = item.partition("/")
    step = 1
    if slash:
        if not step_text.isdigit() or not step_text.isascii() or int(step_text) < 1:
            raise field.fail(item, "has a step that is not a whole number of at least 1")
        # Any step beyond the field's span selects the start alone: no need to read a huge one.
        step = int(step_text) if len(step_text) <= 4 else field.high + 1
    if body == "*":
        return list(range(field.low, field.high + 1, step))
    low_text, dash, high_text = body.partition("-")
    low = field.value(low_text, item)
    if not dash:
        # "5/15" is "5-<end>/15", as in cronie and croniter; a lone "5" is just 5.
        return list(range(low, field.high + 1, step)) if slash else [low]
    high = field.value(high_text, item)
    if low <= high:
        return list(range(low, high + 1, step))
    # An extension: a range that wraps around the end of the field ("fri-mon", "22-2"), the step
    # counting on through the wrap. Day-of-week wraps after Saturday: 7 is Sunday again.
    end = 6 if field is _DOW else field.high
    return (list(range(low, end + 1)) + list(range(field.low, high + 1)))[::step]


def _month_days(text: str) -> MonthDays:
    days: set[int] = set()
    last = last_weekday = False
    nearest: set[int] = set()
    for item in text.split(","):
        if item in ("l", "L"):
            last = True
        elif item.lower() == "lw":
            last_weekday = True
        elif item[-1:] in ("w", "W") and item[:-1].isdigit():
            nearest.add(_DOM.value(item[:-1], item))
        else:
            days.update(_item(_DOM, item))
    return MonthDays(frozenset(days), last, last_weekday, frozenset(nearest))


def _week_days(text: str) -> WeekDays:
    days: set[int] = set()
    last: set[int] = set()
    nth: set[tuple[int, int]] = set()
    for item in text.split(","):
        if item[-1:] in ("l", "L") and len(item) > 1:
            last.add(_DOW.value(item[:-1], item) % 7)
        elif "#" in item:
            day_text, _, week_text = item.partition("#")
            if week_text not in ("1", "2", "3", "4", "5"):
                raise _DOW.fail(item, "has a week number after '#' that is not 1-5")
            nth.add((_DOW.value(day_text, item) % 7, int(week_text)))
        else:
            days.update(day % 7 for day in _item(_DOW, item))
    return WeekDays(frozenset(days), frozenset(last), frozenset(nth))
