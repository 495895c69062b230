"""Triggers and the wall-clock mapping they share, and time zone resolution."""

from __future__ import annotations

import json
import time
from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.triggers.cron import CronTrigger
from jupyter_recall.core.triggers.interval import IntervalTrigger
from jupyter_recall.core.triggers.once import OnceTrigger
from jupyter_recall.core.triggers.wallclock import local_instant, wall_to_instant
from jupyter_recall.core.triggers.weeks import WeeksTrigger
from jupyter_recall.core.tz import is_zone, lookup_tz, normalize_tz, resolve_tz

UTC = timezone.utc


def iso(text: str) -> datetime:
    return datetime.fromisoformat(text)


# --------------------------------------------------------------------------------------------
# wall_to_instant: gap -> first instant after the jump, fold -> first occurrence
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("wall", "zone", "expected"),
    [
        # ordinary wall times
        ("2026-06-01T12:00", "Europe/Paris", "2026-06-01T10:00:00Z"),
        ("2026-01-15T12:00", "America/New_York", "2026-01-15T17:00:00Z"),
        # spring-forward gaps: the transition instant
        ("2026-03-29T02:00", "Europe/Paris", "2026-03-29T01:00:00Z"),
        ("2026-03-29T02:30", "Europe/Paris", "2026-03-29T01:00:00Z"),
        ("2026-03-29T02:59:59", "Europe/Paris", "2026-03-29T01:00:00Z"),
        ("2026-03-29T03:00", "Europe/Paris", "2026-03-29T01:00:00Z"),
        ("2026-03-08T02:30", "America/New_York", "2026-03-08T07:00:00Z"),
        # a 30-minute DST shift (Lord Howe: +10:30 -> +11:00 at 02:00 local)
        ("2026-10-04T02:15", "Australia/Lord_Howe", "2026-10-03T15:30:00Z"),
        # fall-back folds: the first occurrence
        ("2026-10-25T02:00", "Europe/Paris", "2026-10-25T00:00:00Z"),
        ("2026-10-25T02:30", "Europe/Paris", "2026-10-25T00:30:00Z"),
        ("2026-10-25T03:00", "Europe/Paris", "2026-10-25T02:00:00Z"),
        ("2026-11-01T01:30", "America/New_York", "2026-11-01T05:30:00Z"),
        ("2026-04-05T01:45", "Australia/Lord_Howe", "2026-04-04T14:45:00Z"),
        # fixed offsets have neither
        ("2026-03-29T02:30", "+05:30", "2026-03-28T21:00:00Z"),
        ("2026-03-29T02:30", "-03:00", "2026-03-29T05:30:00Z"),
    ],
)
def test_wall_to_instant(wall, zone, expected):
    instant = wall_to_instant(iso(wall), resolve_tz(zone))
    assert instant == iso(expected)
    assert instant.tzinfo is UTC


def test_wall_to_instant_ignores_a_fold_flag_on_its_input():
    wall = datetime(2026, 10, 25, 2, 30, fold=1)
    assert wall_to_instant(wall, ZoneInfo("Europe/Paris")) == iso("2026-10-25T00:30:00Z")


def test_local_instant_is_in_the_zone():
    local = local_instant(datetime(2026, 3, 29, 2, 30), ZoneInfo("Europe/Paris"))
    assert local.isoformat() == "2026-03-29T03:00:00+02:00"


# --------------------------------------------------------------------------------------------
# OnceTrigger
# --------------------------------------------------------------------------------------------


def test_once_fires_only_strictly_before_its_instant():
    at = iso("2026-06-01T10:00:00Z")
    trigger = OnceTrigger(at)
    assert trigger.next_after(at - timedelta(microseconds=1)) == at
    assert trigger.next_after(at) is None
    assert trigger.next_after(at + timedelta(days=1)) is None


def test_once_round_trips_through_json():
    trigger = OnceTrigger(iso("2026-06-01T10:00:00.123456Z"))
    data = json.loads(json.dumps(trigger.to_dict()))
    assert data["type"] == "once"
    assert OnceTrigger.from_dict(data) == trigger


# --------------------------------------------------------------------------------------------
# IntervalTrigger: anchor + k * seconds, k >= 1
# --------------------------------------------------------------------------------------------

ANCHOR = iso("2026-05-10T08:00:00Z")


@pytest.mark.parametrize(
    ("seconds", "after", "expected"),
    [
        (60, "2000-01-01T00:00:00Z", "2026-05-10T08:01:00Z"),
        (60, "2026-05-10T08:00:00Z", "2026-05-10T08:01:00Z"),
        (60, "2026-05-10T08:00:59.999999Z", "2026-05-10T08:01:00Z"),
        (60, "2026-05-10T08:01:00Z", "2026-05-10T08:02:00Z"),
        (60, "2026-05-10T08:01:00.000001Z", "2026-05-10T08:02:00Z"),
        (5400, "2026-05-10T12:00:00Z", "2026-05-10T12:30:00Z"),
        (3600, "2026-10-25T01:30:00+01:00", "2026-10-25T01:00:00Z"),
        # 100 years = 36524 days = 3155673600 s, which is 2 mod 7: next at +5 s
        (7, "2126-05-10T08:00:00Z", "2126-05-10T08:00:05Z"),
    ],
)
def test_interval_next_after(seconds, after, expected):
    result = IntervalTrigger(ANCHOR, seconds).next_after(iso(after))
    assert result == iso(expected)
    assert result.tzinfo is UTC


def test_interval_next_after_does_not_walk_occurrences():
    trigger = IntervalTrigger(ANCHOR, 1)
    started = time.perf_counter()
    for year in range(2100, 9000, 100):
        trigger.next_after(datetime(year, 1, 1, tzinfo=UTC))
    assert time.perf_counter() - started < 0.05


def test_interval_ends_at_the_last_instant_python_holds():
    # The hypothesis round trip found "every 10 hours" anchored on 9999-12-30 raising here.
    trigger = IntervalTrigger(iso("9999-12-30T00:00:00Z"), 36000)
    assert trigger.next_after(iso("9999-12-31T06:00:00Z")) == iso("9999-12-31T16:00:00Z")
    assert trigger.next_after(iso("9999-12-31T16:00:00Z")) is None


@pytest.mark.parametrize("seconds", [0, -1])
def test_interval_must_be_positive(seconds):
    with pytest.raises(ValueError, match="positive"):
        IntervalTrigger(ANCHOR, seconds)


def test_interval_round_trips_through_json():
    trigger = IntervalTrigger(ANCHOR, 5400)
    assert IntervalTrigger.from_dict(json.loads(json.dumps(trigger.to_dict()))) == trigger


# --------------------------------------------------------------------------------------------
# CronTrigger
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "tz", "after", "expected"),
    [
        ("0 9 * * *", "Europe/Paris", "2026-05-10T07:00:00Z", "2026-05-11T07:00:00Z"),
        ("0 9 * * *", "Europe/Paris", "2026-05-10T06:59:59Z", "2026-05-10T07:00:00Z"),
        ("0 9 * * *", "UTC", "2026-05-10T09:00:00Z", "2026-05-11T09:00:00Z"),
        ("0 9 * * *", "+05:30", "2026-05-10T00:00:00Z", "2026-05-10T03:30:00Z"),
        ("0 0 29 2 *", "UTC", "2026-05-10T00:00:00Z", "2028-02-29T00:00:00Z"),
        # after given in another zone than the trigger's
        ("0 9 * * *", "Europe/Paris", "2026-05-10T03:00:00-04:00", "2026-05-11T07:00:00Z"),
    ],
)
def test_cron_next_after(expression, tz, after, expected):
    result = CronTrigger(expression, tz).next_after(iso(after))
    assert result == iso(expected)
    assert result.tzinfo is UTC


def test_cron_that_never_fires_returns_none_without_hanging():
    started = time.perf_counter()
    assert CronTrigger("0 0 30 2 *", "UTC").next_after(ANCHOR) is None
    assert time.perf_counter() - started < 2.0


def test_cron_per_minute_crosses_the_repeated_hour_once():
    trigger = CronTrigger("* * * * *", "Europe/Paris")
    # 02:59 CEST (first pass): the next wall minute 03:00 is after the whole repeated hour
    assert trigger.next_after(iso("2026-10-25T00:59:00Z")) == iso("2026-10-25T02:00:00Z")
    # 02:30 CET (second pass): wall times 02:31..02:59 already fired in the first pass
    assert trigger.next_after(iso("2026-10-25T01:30:00Z")) == iso("2026-10-25T02:00:00Z")


def test_cron_equality_ignores_the_resolved_zone_object():
    assert CronTrigger("0 9 * * *", "Europe/Paris") == CronTrigger("0 9 * * *", "Europe/Paris")
    assert hash(CronTrigger("0 9 * * *", "UTC")) == hash(CronTrigger("0 9 * * *", "UTC"))


def test_cron_round_trips_through_json():
    trigger = CronTrigger("*/15 9-17 * * 1-5", "America/New_York")
    assert CronTrigger.from_dict(json.loads(json.dumps(trigger.to_dict()))) == trigger


# --------------------------------------------------------------------------------------------
# Time zones
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "name", "offset_at_june"),
    [
        ("Europe/Paris", "Europe/Paris", timedelta(hours=2)),
        ("europe/paris", "Europe/Paris", timedelta(hours=2)),
        (" America/New_York ", "America/New_York", timedelta(hours=-4)),
        ("UTC", "UTC", timedelta(0)),
        ("utc", "UTC", timedelta(0)),
        ("Z", "UTC", timedelta(0)),
        ("+05:30", "+05:30", timedelta(hours=5, minutes=30)),
        ("+0530", "+05:30", timedelta(hours=5, minutes=30)),
        ("-03", "-03:00", timedelta(hours=-3)),
        ("+00:00", "+00:00", timedelta(0)),
        ("-09:30", "-09:30", timedelta(hours=-9, minutes=-30)),
    ],
)
def test_time_zone_forms(text, name, offset_at_june):
    assert normalize_tz(text) == name
    zone = resolve_tz(text)
    assert datetime(2026, 6, 1, 12, tzinfo=zone).utcoffset() == offset_at_june
    assert lookup_tz(text) == (name, zone)
    assert is_zone(text)


def test_zone_lookups_are_cached():
    assert resolve_tz("Asia/Tokyo") is resolve_tz("Asia/Tokyo")


@pytest.mark.parametrize(
    "text",
    [
        "Mars/Olympus",
        "",
        "+24:00",
        "+05:60",
        "5:30",
        "Europe/",
        "Europe",
        "localtime",
        "../../etc/passwd",
        "/usr/share/zoneinfo/UTC",
        "Europe/Paris\x00",
        None,
    ],
)
def test_bad_time_zones_name_the_field_and_the_accepted_forms(text):
    if text is not None:
        assert not is_zone(text)  # remembered: asked twice, the same answer
        assert not is_zone(text)
    with pytest.raises(ValidationError) as caught:
        resolve_tz(text)
    assert caught.value.field == "tz"
    assert any("IANA" in form for form in caught.value.accepted)
    assert any("+HH:MM" in form for form in caught.value.accepted)


# --------------------------------------------------------------------------------------------
# WeeksTrigger: every N weeks on some days, wall clock
# --------------------------------------------------------------------------------------------


def test_weeks_trigger_fires_on_its_days_every_n_weeks():
    # Mondays and Thursdays at 09:00 in Paris, every 2 weeks from the week of 2026-05-11.
    trigger = WeeksTrigger(2, (0, 3), 9, 0, date(2026, 5, 11), "Europe/Paris")
    fires, at = [], iso("2026-05-01T00:00:00+00:00")
    for _ in range(4):
        at = trigger.next_after(at)
        fires.append(at)
    assert fires == [
        iso("2026-05-11T07:00:00+00:00"),
        iso("2026-05-14T07:00:00+00:00"),
        iso("2026-05-25T07:00:00+00:00"),
        iso("2026-05-28T07:00:00+00:00"),
    ]
    # From inside an off week, the next is in the next on week.
    assert trigger.next_after(iso("2026-05-19T12:00:00+00:00")) == iso("2026-05-25T07:00:00+00:00")
    assert WeeksTrigger.from_dict(json.loads(json.dumps(trigger.to_dict()))) == trigger


def test_weeks_trigger_dst_rules():
    # Sunday 02:30 in Paris: skipped on 2026-03-29 (fires at the jump), repeated on 2026-10-25
    # (fires once, at the first pass).
    trigger = WeeksTrigger(1, (6,), 2, 30, date(2026, 3, 23), "Europe/Paris")
    assert trigger.next_after(iso("2026-03-28T12:00:00+00:00")) == iso("2026-03-29T01:00:00+00:00")
    assert trigger.next_after(iso("2026-10-24T12:00:00+00:00")) == iso("2026-10-25T00:30:00+00:00")
    assert trigger.next_after(iso("2026-10-25T00:30:00+00:00")) == iso("2026-11-01T01:30:00+00:00")


@pytest.mark.parametrize(
    "change",
    [{"weeks": 0}, {"days": []}, {"days": [7]}, {"start": "2026-05-12"}, {"hour": 24}],
)
def test_weeks_trigger_refuses_bad_payloads(change):
    payload = {"type": "weeks", "weeks": 2, "days": [0], "hour": 9, "minute": 0}
    payload |= {"start": "2026-05-11", "tz": "UTC", **change}
    with pytest.raises(ValueError, match=r"not a valid weeks trigger|hour must be in"):
        WeeksTrigger.from_dict(payload)
