"""Random cron expressions and an independent reference to compare ``core.cron`` against.

The reference is cronsim (a third-party implementation of Debian/Vixie cron) for the calendar
(which wall times match), and a brute-force reading of the documented DST rules for the zone
(a skipped wall time fires at the first existing minute after it, a repeated one at its first
occurrence, and wall times landing on one instant fire once). For expressions with a fixed
minute and hour, cronsim applies those very rules itself on an aware datetime, so they are also
compared with cronsim alone. Used by ``test_cron_reference.py`` and ``bench/cron.py``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone, tzinfo
from functools import lru_cache
from itertools import islice
from zoneinfo import ZoneInfo

from cronsim import CronSim, CronSimError

UTC = timezone.utc
ZONES = ("UTC", "Europe/Paris", "America/New_York", "Australia/Lord_Howe")
# cronsim gives up after 50 years without a match; so does the comparison.
HORIZON_YEARS = 50

_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
# Lists that cover the whole field without starting with "*" (they keep the day rule "either").
_WHOLE = {
    "minute": ("0-29,30-59", "0-59"),
    "hour": ("0-11,12-23", "0-23"),
    "day-of-month": ("1-31", "1-15,16-31", "1-10,11-20,21-31"),
    "month": ("1-12", "jan-jun,jul-dec"),
    "day-of-week": ("0-6", "1-7", "0-7", "mon-fri,sat,sun", "sun-sat"),
}
_BOUNDS = {
    "minute": (0, 59),
    "hour": (0, 23),
    "day-of-month": (1, 31),
    "month": (1, 12),
    "day-of-week": (0, 7),
}


def _value(rng: random.Random, field: str, number: int) -> str:
    """``number`` as a name now and then, in any case."""
    names = {"month": _MONTHS, "day-of-week": _DAYS}.get(field)
    if names is None or rng.random() < 0.6 or (field == "day-of-week" and number == 7):
        return str(number)
    name = names[number - 1 if field == "month" else number]
    return rng.choice((name, name.upper(), name.title()))


def _item(rng: random.Random, field: str) -> str:
    low, high = _BOUNDS[field]
    a = rng.randint(low, high)
    b = rng.choice((a, rng.randint(a, high), high))  # equal ends are frequent on purpose
    step = rng.choice((2, 3, 5, 7, 10, 15, 20, 40))
    forms: tuple[Callable[[], str], ...] = (
        lambda: _value(rng, field, a),
        lambda: f"{_value(rng, field, a)}-{_value(rng, field, b)}",
        lambda: f"{_value(rng, field, a)}-{_value(rng, field, b)}/{step}",
        lambda: f"{a}/{step}",
        lambda: f"*/{step}",
    )
    return rng.choice(forms)()


def _special(rng: random.Random, field: str) -> str | None:
    """The extensions both implementations read: L, LW, nL, n#k."""
    if field == "day-of-month" and rng.random() < 0.08:
        return rng.choice(("L", "LW"))
    if field == "day-of-week" and rng.random() < 0.12:
        day = rng.randint(0, 7)
        return rng.choice((f"{day}L", f"{_value(rng, field, day % 7)}#{rng.randint(1, 5)}"))
    return None


def random_field(rng: random.Random, field: str) -> str:
    roll = rng.random()
    if roll < 0.25:
        return "*"
    if roll < 0.32:
        return rng.choice(_WHOLE[field])
    special = _special(rng, field)
    if special is not None:
        return special
    return ",".join(_item(rng, field) for _ in range(rng.choice((1, 1, 1, 2, 3))))


def random_expression(rng: random.Random) -> str:
    fields = [random_field(rng, name) for name in _BOUNDS]
    # Minute-level fields make DST folds and gaps visible: keep many of them.
    if rng.random() < 0.3:
        fields[0] = rng.choice(("*", "*/15", "0,30", "*/7"))
    return " ".join(fields)


def random_start(rng: random.Random, zone: str) -> datetime:
    """An aware UTC instant, often just before a DST change of ``zone``."""
    year = rng.randint(2024, 2032)
    if rng.random() < 0.5:
        return datetime(year, 1, 1, tzinfo=UTC) + timedelta(minutes=rng.randint(0, 525_000))
    near = rng.choice(_transitions(zone, year) or [datetime(year, 6, 1, tzinfo=UTC)])
    return near - timedelta(minutes=rng.randint(1, 3 * 24 * 60))


@lru_cache(maxsize=256)
def _transitions(zone: str, year: int) -> list[datetime]:
    tz = ZoneInfo(zone)
    instants = []
    moment = datetime(year, 1, 1, tzinfo=UTC)
    offset = moment.astimezone(tz).utcoffset()
    while moment.year == year:
        moment += timedelta(hours=6)
        current = moment.astimezone(tz).utcoffset()
        if current != offset:
            instants.append(moment)
            offset = current
    return instants


# --------------------------------------------------------------------------------------------
# The reference
# --------------------------------------------------------------------------------------------


def _exists(wall: datetime, zone: tzinfo) -> datetime | None:
    aware = wall.replace(tzinfo=zone, fold=0)
    back = aware.astimezone(UTC)
    return back if back.astimezone(zone).replace(tzinfo=None) == wall else None


def reference_instant(wall: datetime, zone: tzinfo) -> datetime:
    """The documented rule, by brute force: the first existing minute at or after ``wall``."""
    moment = wall
    while True:
        instant = _exists(moment, zone)
        if instant is not None:
            return instant
        moment += timedelta(minutes=1)


def _number(text: str) -> int | None:
    lowered = text.lower()
    for names in (_MONTHS, _DAYS):
        if lowered in names:
            return names.index(lowered) + (1 if names is _MONTHS else 0)
    return int(text) if text.isdigit() else None


def _single(item: str) -> str:
    """``a-a/k`` as ``a``: cronsim 2.8 reads a one-value range with a step as ``a/k`` (``a`` to
    the end of the field), where Vixie cron reads the one value; the rest it reads as Vixie."""
    span, slash, _ = item.partition("/")
    low, dash, high = span.partition("-")
    if slash and dash and _number(low) is not None and _number(low) == _number(high):
        return low
    return item


def cronsim_spelling(expression: str) -> str:
    return " ".join(",".join(map(_single, f.split(","))) for f in expression.split())


def reference_times(expression: str, after: datetime, zone_name: str, n: int) -> list[datetime]:
    """The next ``n`` fire instants (aware UTC) after ``after``: cronsim's wall times, mapped."""
    expression = cronsim_spelling(expression)
    zone = ZoneInfo(zone_name)
    limit = after + timedelta(days=366 * HORIZON_YEARS)
    wall = after.astimezone(zone).replace(tzinfo=None)
    # A start inside a repeated hour: walls from one hour back may still map after `after`.
    walls = CronSim(expression, wall - timedelta(hours=3))
    times: list[datetime] = []
    for candidate in walls:
        instant = reference_instant(candidate, zone)
        if instant > limit:
            break
        if instant > after and (not times or instant > times[-1]):
            times.append(instant)
            if len(times) == n:
                break
    return times


def cronsim_aware_times(expression: str, after: datetime, zone_name: str, n: int) -> list[datetime]:
    """cronsim on an aware start: its own DST handling (meaningful for a fixed minute and hour)."""
    expression = cronsim_spelling(expression)
    start = after.astimezone(ZoneInfo(zone_name))
    limit = after + timedelta(days=366 * HORIZON_YEARS)
    times = [t.astimezone(UTC) for t in islice(CronSim(expression, start), n)]
    return [t for t in times if t <= limit]


def has_fixed_time(expression: str) -> bool:
    minute, hour = expression.split()[:2]
    return not minute.startswith("*") and not hour.startswith("*")


def cronsim_refuses(expression: str) -> bool:
    try:
        CronSim(cronsim_spelling(expression), datetime(2026, 1, 1))
    except CronSimError:
        return True
    return False


@dataclass(frozen=True)
class Case:
    expression: str
    zone: str
    after: datetime


def cases(seed: int, count: int) -> Iterator[Case]:
    """``count`` random expressions, each with a zone (in turn) and a start instant."""
    rng = random.Random(seed)
    for index in range(count):
        zone = ZONES[index % len(ZONES)]
        yield Case(random_expression(rng), zone, random_start(rng, zone))


NextTimes = Callable[[str, datetime, str, int], list[datetime]]


def mismatches(implementation: NextTimes, batch: list[Case], n: int) -> list[str]:
    """The cases where ``implementation`` differs from the reference, described."""
    found = []
    for case in batch:
        expected = reference_times(case.expression, case.after, case.zone, n)
        try:
            got = implementation(case.expression, case.after, case.zone, n)
        except Exception as exc:
            found.append(f"{case}: raised {exc!r}")
            continue
        limit = case.after + timedelta(days=366 * HORIZON_YEARS)
        got = [t for t in got if t <= limit]
        if got != expected:
            found.append(f"{case}: expected {expected[:3]}..., got {got[:3]}...")
    return found
