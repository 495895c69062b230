"""Properties of parse_when / ScheduleSpec over generated expressions, instants and zones."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from itertools import pairwise

from cronsim import CronSim
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_recall.core.triggers.wallclock import instant_to_wall
from jupyter_recall.core.tz import resolve_tz
from jupyter_recall.core.when import ScheduleSpec, parse_when

UTC = timezone.utc
SETTINGS = settings(max_examples=60, deadline=None)

ZONES = st.sampled_from(
    [
        "UTC",
        "Europe/Paris",
        "America/New_York",
        "Australia/Lord_Howe",
        "America/Sao_Paulo",
        "Asia/Kolkata",
        "+05:30",
        "-03:00",
    ]
)
# Instants of DST transitions (Paris, New York, Lord Howe, Sao Paulo) to draw `now` near them.
TRANSITIONS = [
    datetime.fromisoformat(text)
    for text in (
        "2026-03-29T01:00:00+00:00",
        "2026-10-25T01:00:00+00:00",
        "2026-03-08T07:00:00+00:00",
        "2026-11-01T06:00:00+00:00",
        "2026-04-04T15:00:00+00:00",
        "2026-10-03T15:30:00+00:00",
        "2018-11-04T03:00:00+00:00",
        "2019-02-17T02:00:00+00:00",
    )
]
NOWS = st.one_of(
    st.datetimes(
        min_value=datetime(2001, 1, 1), max_value=datetime(2035, 12, 31), timezones=st.just(UTC)
    ),
    st.builds(
        lambda at, minutes: at + timedelta(minutes=minutes),
        st.sampled_from(TRANSITIONS),
        st.integers(-26 * 60, 2 * 60),
    ),
)
HOURS = st.integers(0, 23)
MINUTES = st.integers(0, 59)
UNITS = st.sampled_from(["s", "m", "h", "d", "w", "seconds", "minutes", "hours", "days", "weeks"])
WEEKDAYS = st.sampled_from(["monday", "tue", "wednesday", "thu", "friday", "saturday", "sun"])


@st.composite
def relative_texts(draw: st.DrawFn) -> str:
    count = draw(st.integers(1, 500))
    unit = draw(UNITS)
    prefix = draw(st.sampled_from(["", "in ", "dans "]))
    return f"{prefix}{count} {unit}"


@st.composite
def clock_texts(draw: st.DrawFn) -> str:
    at = f"{draw(HOURS)}:{draw(MINUTES):02d}"
    return draw(st.sampled_from([f"at {at}", f"tomorrow at {at}", f"tomorrow {at}", at]))


@st.composite
def interval_texts(draw: st.DrawFn) -> str:
    hours, minutes = draw(st.integers(0, 30)), draw(st.integers(0, 59))
    if hours == minutes == 0:
        minutes = 1
    return draw(
        st.sampled_from(
            [
                f"every {hours}h{minutes}m",
                f"every {hours * 60 + minutes} minutes",
                "every hour",
                "hourly",
            ]
        )
    )


@st.composite
def wall_clock_texts(draw: st.DrawFn) -> str:
    at = f"{draw(HOURS)}:{draw(MINUTES):02d}"
    day = draw(WEEKDAYS)
    return draw(
        st.sampled_from(
            [
                f"every day at {at}",
                f"every {day} at {at}",
                f"every week on {day} at {at}",
                f"every weekday at {at}",
                "daily",
                "weekly",
                "@hourly",
                "@monthly",
            ]
        )
    )


@st.composite
def cron_texts(draw: st.DrawFn) -> str:
    minute = draw(st.sampled_from(["*", "*/15", "0", "30", "5,35", "59"]))
    hour = draw(st.sampled_from(["*", "2", "1-3", "*/6", "0", "23"]))
    dom = draw(st.sampled_from(["*", "1", "15", "28"]))
    month = draw(st.sampled_from(["*", "3", "10", "3,10,11", "4"]))
    dow = draw(st.sampled_from(["*", "1-5", "0", "6"]))
    return f"{minute} {hour} {dom} {month} {dow}"


TEXTS = st.one_of(
    relative_texts(), clock_texts(), interval_texts(), wall_clock_texts(), cron_texts()
)


@SETTINGS
@given(text=TEXTS, now=NOWS, tz=ZONES)
def test_fire_times_strictly_increase_and_are_utc(text, now, tz):
    spec = parse_when(text, now=now, tz=tz)
    times = spec.next_fire_times(6)
    assert times, text
    assert all(t.tzinfo is UTC for t in times)
    assert all(a < b for a, b in pairwise(times))
    assert times[0] == spec.first_fire_time()
    assert times[0] > now if spec.is_recurring else times[0] >= now
    for earlier, later in pairwise(times):
        assert spec.next_after(earlier) == later


@SETTINGS
@given(text=TEXTS, now=NOWS, tz=ZONES, ahead=st.integers(-(10**6), 10**9))
def test_fire_times_are_strictly_after_after(text, now, tz, ahead):
    spec = parse_when(text, now=now, tz=tz)
    after = now + timedelta(seconds=ahead)
    times = spec.next_fire_times(4, after=after)
    assert all(t > after for t in times)
    if not spec.is_recurring:
        assert times == ([spec.first_fire_time()] if spec.first_fire_time() > after else [])


@SETTINGS
@given(text=TEXTS, now=NOWS, tz=ZONES)
def test_canonical_round_trips(text, now, tz):
    spec = parse_when(text, now=now, tz=tz)
    again = parse_when(spec.canonical, now=now, tz=tz)
    assert again == spec
    assert parse_when(again.canonical, now=now, tz=tz).canonical == spec.canonical


@SETTINGS
@given(text=TEXTS, now=NOWS, tz=ZONES)
def test_to_dict_from_dict_round_trips_through_json(text, now, tz):
    spec = parse_when(text, now=now, tz=tz)
    restored = ScheduleSpec.from_dict(json.loads(json.dumps(spec.to_dict())))
    assert restored == spec
    assert restored.next_fire_times(3) == spec.next_fire_times(3)


@SETTINGS
@given(text=interval_texts(), now=NOWS, tz=ZONES, ahead=st.integers(0, 10**10))
def test_intervals_follow_absolute_time(text, now, tz, ahead):
    spec = parse_when(text, now=now, tz=tz)
    step = timedelta(seconds=spec.trigger.seconds)
    after = now + timedelta(seconds=ahead)
    fire = spec.next_after(after)
    assert (fire - now) % step == timedelta(0)
    assert after < fire <= after + step


def _cronsim_matches(text: str, wall: datetime) -> bool:
    """Whether the independent cronsim has ``text`` fire at the naive wall time ``wall``."""
    return bool(next(CronSim(text, wall - timedelta(minutes=1))) == wall)


@SETTINGS
@given(text=cron_texts(), now=NOWS, tz=ZONES)
def test_cron_fires_on_matching_wall_times_or_right_after_a_gap(text, now, tz):
    spec = parse_when(text, now=now, tz=tz)
    zone = resolve_tz(tz)
    walls = []
    for fire in spec.next_fire_times(8):
        wall = instant_to_wall(fire, zone)
        walls.append(wall)
        just_before = fire - timedelta(seconds=1)
        jumped = just_before.astimezone(zone).utcoffset() != fire.astimezone(zone).utcoffset()
        assert _cronsim_matches(text, wall) or jumped, (text, tz, fire)
        # A repeated wall time fires at its first occurrence, never at a later one.
        for back in (timedelta(minutes=30), timedelta(hours=1), timedelta(hours=2)):
            assert instant_to_wall(fire - back, zone) != wall, (text, tz, fire)
    # Each wall time fires at most once, in wall-clock order (a repeated hour fires once).
    assert all(a < b for a, b in pairwise(walls))
