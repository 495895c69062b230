"""The one way instants are shown (cards, panel, tables, the command line): the user's zone, the
time alone on the day of now, and a hint relative to now."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from jupyter_recall.core.timefmt import format_time, parse_instant, relative

UTC = timezone.utc
PARIS = ZoneInfo("Europe/Paris")
NOW = datetime(2026, 11, 24, 13, 30, tzinfo=UTC)  # 14:30 in Paris


@pytest.mark.parametrize(
    ("delta", "expected"),
    [
        (timedelta(0), "now"),
        (timedelta(milliseconds=400), "now"),
        (timedelta(seconds=3), "in 3 s"),
        (timedelta(seconds=-59.9), "59 s ago"),
        (timedelta(minutes=29, seconds=59), "in 29 min"),
        (timedelta(minutes=-60), "1 h ago"),
        (timedelta(hours=2, minutes=5), "in 2 h 05 min"),
        (timedelta(hours=-3), "3 h ago"),
        (timedelta(hours=16, minutes=40), "in 16 h"),
        (timedelta(hours=47), "in 47 h"),
        (timedelta(days=3, hours=5), "in 3 d"),
        (timedelta(days=-40), "40 d ago"),
    ],
)
def test_relative_hints(delta: timedelta, expected: str) -> None:
    assert relative(NOW + delta, NOW) == expected


@pytest.mark.parametrize(
    ("value", "zone", "expected"),
    [
        ("2026-11-24T13:59:00+00:00", PARIS, "14:59:00 CET (in 29 min)"),
        ("2026-11-24T10:30:00Z", PARIS, "11:30:00 CET (3 h ago)"),
        ("2026-11-25T08:00:00+00:00", PARIS, "2026-11-25 09:00 CET (in 18 h)"),
        ("2026-11-24T23:30:00+00:00", PARIS, "2026-11-25 00:30 CET (in 10 h)"),
        ("2026-11-24T23:30:00+00:00", UTC, "23:30:00 UTC (in 10 h)"),
        ("2026-07-01T12:00:00+00:00", PARIS, "2026-07-01 14:00 CEST (146 d ago)"),
        (datetime(2026, 11, 24, 13, 30, 2, tzinfo=UTC), UTC, "13:30:02 UTC (in 2 s)"),
        (
            "2026-11-24T13:30:00+00:00",
            timezone(timedelta(hours=5, minutes=30)),
            "19:00:00 UTC+05:30 (now)",
        ),
        (None, UTC, "-"),
        ("", UTC, "-"),
        ("not a time", UTC, "not a time"),
    ],
)
def test_format_time(value: object, zone: timezone, expected: str) -> None:
    assert format_time(value, NOW, zone) == expected


def test_without_the_hint_and_in_this_machines_zone() -> None:
    assert format_time("2026-11-24T13:59:00Z", NOW, PARIS, hint=False) == "14:59:00 CET"
    instant = datetime(2026, 11, 24, 13, 59, tzinfo=UTC)
    here = instant.astimezone().tzinfo
    assert format_time(instant, NOW) == format_time(instant, NOW, here)


def test_parse_instant_takes_naive_as_utc() -> None:
    assert parse_instant("2026-06-01T12:00:00") == datetime(2026, 6, 1, 12, tzinfo=UTC)
    assert parse_instant(datetime(2026, 6, 1, 12)) == datetime(2026, 6, 1, 12, tzinfo=UTC)
    assert parse_instant(1717243200) is None
