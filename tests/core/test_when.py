"""parse_when and ScheduleSpec: every accepted form, every error, DST tables.

Tables in the style of arq's cron tests: (text, now, tz, expectations). Expected instants are
written as ISO strings; local offsets make the wall-clock intent visible.
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone

import pytest

import jupyter_recall
from jupyter_recall.core import when as when_module
from jupyter_recall.core.errors import ParseError, ValidationError
from jupyter_recall.core.triggers.wallclock import wall_to_instant
from jupyter_recall.core.tz import resolve_tz
from jupyter_recall.core.when import ACCEPTED_FORMS, ScheduleSpec, parse_when

UTC = timezone.utc
PARIS = "Europe/Paris"
NEW_YORK = "America/New_York"
# Sunday 2026-05-10 10:00 in Paris (CEST, +02:00).
NOW = datetime.fromisoformat("2026-05-10T10:00:00+02:00")


def iso(text: str) -> datetime:
    return datetime.fromisoformat(text)


def utc_list(texts: list[str]) -> list[datetime]:
    return [iso(t) for t in texts]


def assert_all_utc(instants: list[datetime]) -> None:
    for instant in instants:
        assert instant.tzinfo is UTC


# --------------------------------------------------------------------------------------------
# One-shot forms: (text, tz, expected instant == canonical)
# --------------------------------------------------------------------------------------------

ONCE_CASES = [
    # relative: elapsed durations from now
    ("30m", PARIS, "2026-05-10T10:30:00+02:00"),
    ("2h 15m", PARIS, "2026-05-10T12:15:00+02:00"),
    ("2h15m", PARIS, "2026-05-10T12:15:00+02:00"),
    ("1d 6h", PARIS, "2026-05-11T16:00:00+02:00"),
    ("90s", PARIS, "2026-05-10T10:01:30+02:00"),
    ("in 3 hours", PARIS, "2026-05-10T13:00:00+02:00"),
    ("in 45 minutes", PARIS, "2026-05-10T10:45:00+02:00"),
    ("in 2 weeks", PARIS, "2026-05-24T10:00:00+02:00"),
    ("in an hour", PARIS, "2026-05-10T11:00:00+02:00"),
    ("in 1 hour and 30 minutes", PARIS, "2026-05-10T11:30:00+02:00"),
    ("in 1 hour, 5 minutes", PARIS, "2026-05-10T11:05:00+02:00"),
    ("10 minutes from now", PARIS, "2026-05-10T10:10:00+02:00"),
    ("in 3 hrs", PARIS, "2026-05-10T13:00:00+02:00"),
    ("9h", PARIS, "2026-05-10T19:00:00+02:00"),
    # absolute: today if still ahead, else tomorrow
    ("at 17:00", PARIS, "2026-05-10T17:00:00+02:00"),
    ("at 9:00", PARIS, "2026-05-11T09:00:00+02:00"),
    ("at 10:00", PARIS, "2026-05-11T10:00:00+02:00"),
    ("at 10:00:01", PARIS, "2026-05-10T10:00:01+02:00"),
    ("at 5pm", PARIS, "2026-05-10T17:00:00+02:00"),
    ("at 5:45 p.m.", PARIS, "2026-05-10T17:45:00+02:00"),
    ("at 12am", PARIS, "2026-05-11T00:00:00+02:00"),
    ("at 12pm", PARIS, "2026-05-10T12:00:00+02:00"),
    ("at noon", PARIS, "2026-05-10T12:00:00+02:00"),
    ("at midnight", PARIS, "2026-05-11T00:00:00+02:00"),
    ("17:00", PARIS, "2026-05-10T17:00:00+02:00"),
    ("9am", PARIS, "2026-05-11T09:00:00+02:00"),
    ("today at 17:00", PARIS, "2026-05-10T17:00:00+02:00"),
    ("tomorrow", PARIS, "2026-05-11T09:00:00+02:00"),
    ("tomorrow at 09:00", PARIS, "2026-05-11T09:00:00+02:00"),
    ("tomorrow 14:30", PARIS, "2026-05-11T14:30:00+02:00"),
    ("tomorrow at 9am", PARIS, "2026-05-11T09:00:00+02:00"),
    ("tomorrow at 9:15pm", PARIS, "2026-05-11T21:15:00+02:00"),
    ("on 2026-06-01", PARIS, "2026-06-01T09:00:00+02:00"),
    ("on 2026-06-01 at 12:00", PARIS, "2026-06-01T12:00:00+02:00"),
    ("on 2026-06-01 12:00", PARIS, "2026-06-01T12:00:00+02:00"),
    # ISO 8601 / RFC 3339: with an offset it is an instant, without one it is a wall time in tz
    ("2026-06-01T12:00:00+02:00", PARIS, "2026-06-01T12:00:00+02:00"),
    ("2026-06-01T13:00:00+03:00", PARIS, "2026-06-01T12:00:00+02:00"),
    ("2026-06-01T10:00:00Z", PARIS, "2026-06-01T12:00:00+02:00"),
    ("2026-06-01t10:00:00z", PARIS, "2026-06-01T12:00:00+02:00"),
    ("2026-06-01T10:00:00.250Z", PARIS, "2026-06-01T12:00:00.250000+02:00"),
    ("2026-06-01T12:00", PARIS, "2026-06-01T12:00:00+02:00"),
    ("2026-06-01 12:00", PARIS, "2026-06-01T12:00:00+02:00"),
    ("2026-06-01", PARIS, "2026-06-01T09:00:00+02:00"),
    ("2026-06-01T12:00", NEW_YORK, "2026-06-01T12:00:00-04:00"),
    ("2026-06-01T12:00", "+05:30", "2026-06-01T12:00:00+05:30"),
    ("2026-06-01T12:00", "UTC", "2026-06-01T12:00:00+00:00"),
    # the zone decides what "today" and "tomorrow" are
    ("at 17:00", NEW_YORK, "2026-05-10T17:00:00-04:00"),
    ("tomorrow at 9:00", "+05:30", "2026-05-11T09:00:00+05:30"),
    ("tomorrow", "-03:00", "2026-05-11T09:00:00-03:00"),
    # French
    ("dans 30 minutes", PARIS, "2026-05-10T10:30:00+02:00"),
    ("dans 2 heures", PARIS, "2026-05-10T12:00:00+02:00"),
    ("dans 3 jours", PARIS, "2026-05-13T10:00:00+02:00"),
    ("dans une heure", PARIS, "2026-05-10T11:00:00+02:00"),
    ("dans 1 heure et 15 minutes", PARIS, "2026-05-10T11:15:00+02:00"),
    ("demain", PARIS, "2026-05-11T09:00:00+02:00"),
    ("demain à 9h", PARIS, "2026-05-11T09:00:00+02:00"),
    ("demain a 14h30", PARIS, "2026-05-11T14:30:00+02:00"),
    ("demain 18h", PARIS, "2026-05-11T18:00:00+02:00"),
    ("demain à midi", PARIS, "2026-05-11T12:00:00+02:00"),
    ("aujourd'hui à 18h", PARIS, "2026-05-10T18:00:00+02:00"),
    ("à 18h", PARIS, "2026-05-10T18:00:00+02:00"),
    ("le 2026-06-01 à 12h", PARIS, "2026-06-01T12:00:00+02:00"),
    # parsedatetime fallback, only because it understands the whole text
    ("next friday at 5pm", PARIS, "2026-05-15T17:00:00+02:00"),
    ("june 3rd at 4pm", PARIS, "2026-06-03T16:00:00+02:00"),
    ("friday", PARIS, "2026-05-15T09:00:00+02:00"),
    ("dec 25", PARIS, "2026-12-25T09:00:00+01:00"),
    ("tonight", PARIS, "2026-05-10T21:00:00+02:00"),
]


@pytest.mark.parametrize(("text", "tz", "expected"), ONCE_CASES)
def test_one_shot_forms(text, tz, expected):
    spec = parse_when(text, now=NOW, tz=tz)
    assert spec.kind == "once"
    assert not spec.is_recurring
    assert spec.canonical == expected
    fire = spec.first_fire_time()
    assert fire == iso(expected)
    assert fire.tzinfo is UTC
    assert spec.next_fire_times(3) == [iso(expected)]
    assert spec.next_after(fire) is None
    assert parse_when(spec.canonical, now=NOW, tz=tz) == spec


@pytest.mark.parametrize(
    "text", ["now", "immediately", "right now", "maintenant", "immédiatement", "tout de suite"]
)
def test_immediate_forms_fire_at_parse_time_now(text):
    spec = parse_when(text, now=NOW, tz=PARIS)
    assert spec.kind == "immediate"
    assert spec.canonical == "now"
    assert spec.first_fire_time() == NOW
    assert spec.next_fire_times(5) == [NOW]
    assert spec.describe() == "immediately"
    assert parse_when("now", now=NOW, tz=PARIS) == spec


# --------------------------------------------------------------------------------------------
# Recurring forms: (text, tz, kind, canonical, first fire times)
# --------------------------------------------------------------------------------------------

RECURRING_CASES = [
    # intervals: elapsed time anchored at parse-time now
    ("every hour", PARIS, "interval", "every 1h", ["11:00", "12:00", "13:00"]),
    ("hourly", PARIS, "interval", "every 1h", ["11:00", "12:00", "13:00"]),
    ("every 5 minutes", PARIS, "interval", "every 5m", ["10:05", "10:10", "10:15"]),
    ("every 2 hours", PARIS, "interval", "every 2h", ["12:00", "14:00", "16:00"]),
    ("every 30m", PARIS, "interval", "every 30m", ["10:30", "11:00", "11:30"]),
    ("every 1h30m", PARIS, "interval", "every 1h30m", ["11:30", "13:00", "14:30"]),
    ("every 90 minutes", PARIS, "interval", "every 1h30m", ["11:30", "13:00", "14:30"]),
    ("every 2h 15m", PARIS, "interval", "every 2h15m", ["12:15", "14:30", "16:45"]),
    ("every 45 seconds", PARIS, "interval", "every 45s", ["10:00:45", "10:01:30", "10:02:15"]),
    ("every minute", PARIS, "interval", "every 1m", ["10:01", "10:02", "10:03"]),
    ("every 2 days", PARIS, "interval", "every 2d", ["05-12 10:00", "05-14 10:00"]),
    ("every 2 weeks", PARIS, "interval", "every 14d", ["05-24 10:00", "06-07 10:00"]),
    ("toutes les 15 minutes", PARIS, "interval", "every 15m", ["10:15", "10:30"]),
    ("toutes les heures", PARIS, "interval", "every 1h", ["11:00", "12:00"]),
    ("chaque heure", PARIS, "interval", "every 1h", ["11:00", "12:00"]),
    # wall clock in tz (cron)
    ("every day", PARIS, "cron", "0 9 * * *", ["05-11 09:00", "05-12 09:00", "05-13 09:00"]),
    ("every day at 18:30", PARIS, "cron", "30 18 * * *", ["05-10 18:30", "05-11 18:30"]),
    ("daily", PARIS, "cron", "0 9 * * *", ["05-11 09:00", "05-12 09:00"]),
    ("daily at 7am", PARIS, "cron", "0 7 * * *", ["05-11 07:00", "05-12 07:00"]),
    ("every week", PARIS, "cron", "0 9 * * 1", ["05-11 09:00", "05-18 09:00", "05-25 09:00"]),
    ("weekly", PARIS, "cron", "0 9 * * 1", ["05-11 09:00", "05-18 09:00"]),
    ("every week at 10:00", PARIS, "cron", "0 10 * * 1", ["05-11 10:00", "05-18 10:00"]),
    (
        "every week on friday at 17:00",
        PARIS,
        "cron",
        "0 17 * * 5",
        ["05-15 17:00", "05-22 17:00", "05-29 17:00"],
    ),
    ("weekly on sunday", PARIS, "cron", "0 9 * * 0", ["05-17 09:00", "05-24 09:00"]),
    ("every monday", PARIS, "cron", "0 9 * * 1", ["05-11 09:00", "05-18 09:00"]),
    ("every tuesday at 8:30", PARIS, "cron", "30 8 * * 2", ["05-12 08:30", "05-19 08:30"]),
    ("every sunday at 11:00", PARIS, "cron", "0 11 * * 0", ["05-10 11:00", "05-17 11:00"]),
    ("every fri at 5pm", PARIS, "cron", "0 17 * * 5", ["05-15 17:00", "05-22 17:00"]),
    (
        "every weekday at 08:30",
        PARIS,
        "cron",
        "30 8 * * 1-5",
        ["05-11 08:30", "05-12 08:30", "05-13 08:30", "05-14 08:30", "05-15 08:30", "05-18 08:30"],
    ),
    ("*/15 9-17 * * 1-5", PARIS, "cron", "*/15 9-17 * * 1-5", ["05-11 09:00", "05-11 09:15"]),
    # POSIX: day-of-month OR day-of-week when both are restricted (15th, or any Friday)
    (
        "0 9 15 * 5",
        PARIS,
        "cron",
        "0 9 15 * 5",
        ["05-15 09:00", "05-22 09:00", "05-29 09:00", "06-05 09:00", "06-12 09:00", "06-15 09:00"],
    ),
    ("0 9 * jan mon", PARIS, "cron", "0 9 * jan mon", ["2027-01-04 09:00", "2027-01-11 09:00"]),
    ("@hourly", PARIS, "cron", "0 * * * *", ["11:00", "12:00"]),
    ("@daily", PARIS, "cron", "0 0 * * *", ["05-11 00:00", "05-12 00:00"]),
    ("@midnight", PARIS, "cron", "0 0 * * *", ["05-11 00:00", "05-12 00:00"]),
    ("@weekly", PARIS, "cron", "0 0 * * 0", ["05-17 00:00", "05-24 00:00"]),
    ("@monthly", PARIS, "cron", "0 0 1 * *", ["06-01 00:00", "07-01 00:00"]),
    ("@yearly", PARIS, "cron", "0 0 1 1 *", ["2027-01-01 00:00", "2028-01-01 00:00"]),
    ("@annually", PARIS, "cron", "0 0 1 1 *", ["2027-01-01 00:00"]),
    ("tous les jours à 9h", PARIS, "cron", "0 9 * * *", ["05-11 09:00", "05-12 09:00"]),
    ("tous les jours", PARIS, "cron", "0 9 * * *", ["05-11 09:00"]),
    ("chaque jour à 18h30", PARIS, "cron", "30 18 * * *", ["05-10 18:30", "05-11 18:30"]),
    ("tous les lundis à 8h30", PARIS, "cron", "30 8 * * 1", ["05-11 08:30", "05-18 08:30"]),
    # the wall clock is the zone's
    ("every day at 9:00", NEW_YORK, "cron", "0 9 * * *", ["05-10 09:00", "05-11 09:00"]),
    ("every day at 9:00", "+05:30", "cron", "0 9 * * *", ["05-11 09:00", "05-12 09:00"]),
]


def expand_local(short: str, tz: str) -> datetime:
    """'10:05' -> 2026-05-10 10:05, '05-11 09:00' -> 2026-05-11 09:00, full dates as given."""
    if len(short) <= 8:
        short = f"2026-05-10 {short}"
    elif len(short) <= 11:
        short = f"2026-{short}"
    return wall_to_instant(datetime.fromisoformat(short), resolve_tz(tz))


@pytest.mark.parametrize(("text", "tz", "kind", "canonical", "fires"), RECURRING_CASES)
def test_recurring_forms(text, tz, kind, canonical, fires):
    spec = parse_when(text, now=NOW, tz=tz)
    assert spec.kind == kind
    assert spec.is_recurring
    assert spec.canonical == canonical
    expected = [expand_local(f, tz) for f in fires]
    got = spec.next_fire_times(len(expected))
    assert got == expected
    assert_all_utc(got)
    assert spec.first_fire_time() == expected[0]
    assert parse_when(spec.canonical, now=NOW, tz=tz) == spec


def test_every_hour_is_an_interval_of_3600_seconds():
    spec = parse_when("every hour", now=NOW, tz=PARIS)
    assert spec.trigger.seconds == 3600
    assert spec.anchor == NOW


# --------------------------------------------------------------------------------------------
# Case and whitespace do not matter
# --------------------------------------------------------------------------------------------

VARIATION_TEXTS = [
    "in 30m",
    "2h 15m",
    "tomorrow at 9am",
    "on 2026-06-01 at 12:00",
    "every 1h30m",
    "every week on friday at 17:00",
    "every weekday at 08:30",
    "demain à 9h",
    "tous les jours à 9h",
    "*/15 9-17 * * mon-fri",
    "@daily",
    "now",
    "2026-06-01T10:00:00Z",
]


@pytest.mark.parametrize("text", VARIATION_TEXTS)
@pytest.mark.parametrize(
    "vary",
    [
        str.upper,
        str.title,
        lambda t: f"  \t{t.replace(' ', '   ')}\n ",
    ],
    ids=["upper", "title", "spaces"],
)
def test_case_and_whitespace_insensitive(text, vary):
    assert parse_when(vary(text), now=NOW, tz=PARIS) == parse_when(text, now=NOW, tz=PARIS)


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------

ERROR_CASES = [
    ("", "empty"),
    ("   ", "empty"),
    ("asdf", "not a recognised time expression"),
    ("banana now", "not a recognised time expression"),
    ("the day after tomorrow", "not a recognised time expression"),
    ("every other day", "not a recognised time expression"),
    ("2026", "not a recognised time expression"),
    ("1234", "not a recognised time expression"),
    ("in 30m banana", "unexpected 'banana' after 'in 30m'"),
    ("every 30m please", "unexpected 'please' after 'every 30m'"),
    ("now please", "unexpected 'please' after 'now'"),
    ("every day at 9:00 banana", "is not a time of day"),
    ("every friday banana", "'banana' is not a time of day"),
    ("tomorrow at", "is not a time of day"),
    ("2020-01-01T00:00:00Z", "in the past"),
    ("2026-05-10T09:59:59+02:00", "in the past"),
    ("on 2026-01-01", "in the past"),
    ("today at 08:00", "in the past"),
    ("in 0 minutes", "must be in the future"),
    ("in -5 minutes", "must be in the future"),
    ("every 0 minutes", "must be positive"),
    ("every 0s", "must be positive"),
    ("every -5 minutes", "must be positive"),
    ("toutes les 0 minutes", "must be positive"),
    ("0 0 30 2 *", "never fires"),
    ("0 0 31 4,6,9,11 *", "never fires"),
    ("61 * * * *", "minute '61' is out of range 0-59"),
    ("0 9 * * 8", "day-of-week '8' is out of range 0-7"),
    ("at 25:00", "not a valid time of day"),
    ("at 13pm", "am/pm hour must be between 1 and 12"),
    ("tomorrow at 9:60", "not a valid time of day"),
    ("on 2026-02-30", "not a calendar date"),
    ("every day at 9:00:30", "minute precision"),
    ("x" * 300, "longer than 200 characters"),
    ("in 5300 weeks", "at most 36525 days"),
    ("every 99999999 days", "at most 36525 days"),
    ("9999-12-31T23:59:59-05:00", "outside the supported range"),
]


@pytest.mark.parametrize(("text", "reason"), ERROR_CASES)
def test_parse_errors_name_the_text_the_reason_and_the_accepted_forms(text, reason):
    with pytest.raises(ParseError) as caught:
        parse_when(text, now=NOW, tz=PARIS)
    error = caught.value
    assert isinstance(error, ValueError)
    assert reason in error.reason
    assert error.text == text
    message = str(error)
    assert repr(text) in message
    for form in ACCEPTED_FORMS:
        assert form in message
    assert error.field == "when"


def test_a_non_string_text_is_a_parse_error():
    with pytest.raises(ParseError, match="must be a string"):
        parse_when(42, now=NOW, tz=PARIS)  # type: ignore[arg-type]


def test_never_firing_cron_is_detected_quickly():
    started = time.perf_counter()
    with pytest.raises(ParseError, match="never fires"):
        parse_when("0 0 30 2 *", now=NOW, tz=PARIS)
    assert time.perf_counter() - started < 2.0


def test_junk_never_becomes_now():
    for junk in ("asdf", "hello", "soon", "whenever", "???"):
        with pytest.raises(ParseError):
            parse_when(junk, now=NOW, tz=PARIS)


@pytest.mark.parametrize("tz", ["Mars/Olympus", "+25:00", "+05:75", "", "../etc/passwd", 5])
def test_bad_time_zone_is_a_validation_error_on_tz(tz):
    with pytest.raises(ValidationError) as caught:
        parse_when("in 30m", now=NOW, tz=tz)
    assert caught.value.field == "tz"
    assert "IANA" in str(caught.value)
    assert "+HH:MM" in str(caught.value)


def test_naive_now_is_refused():
    with pytest.raises(ValidationError) as caught:
        parse_when("in 30m", now=datetime(2026, 5, 10, 10), tz=PARIS)
    assert caught.value.field == "now"


# --------------------------------------------------------------------------------------------
# DST: gaps fire at the first instant after the jump, repeated wall times fire once (the first)
# --------------------------------------------------------------------------------------------

DST_CASES = [
    # Europe/Paris, spring forward 2026-03-29: 02:00 CET -> 03:00 CEST at 01:00Z.
    (
        "30 2 * * *",
        "2026-03-27T12:00:00Z",
        PARIS,
        ["2026-03-28T01:30:00Z", "2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"],
    ),
    (
        "every day at 02:30",
        "2026-03-27T12:00:00Z",
        PARIS,
        ["2026-03-28T01:30:00Z", "2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"],
    ),
    (
        "*/30 * * * *",
        "2026-03-29T00:00:00Z",
        PARIS,
        ["2026-03-29T00:30:00Z", "2026-03-29T01:00:00Z", "2026-03-29T01:30:00Z"],
    ),
    ("0 3 * * *", "2026-03-28T12:00:00Z", PARIS, ["2026-03-29T01:00:00Z", "2026-03-30T01:00:00Z"]),
    ("2026-03-29T02:30", "2026-03-28T12:00:00Z", PARIS, ["2026-03-29T01:00:00Z"]),
    ("tomorrow at 2:30", "2026-03-28T10:00:00Z", PARIS, ["2026-03-29T01:00:00Z"]),
    # intervals and relative times are elapsed: DST does not move them
    (
        "every hour",
        "2026-03-28T23:30:00Z",
        PARIS,
        ["2026-03-29T00:30:00Z", "2026-03-29T01:30:00Z", "2026-03-29T02:30:00Z"],
    ),
    ("in 1 day", "2026-03-28T11:00:00Z", PARIS, ["2026-03-29T11:00:00Z"]),
    # Europe/Paris, fall back 2026-10-25: 03:00 CEST -> 02:00 CET at 01:00Z.
    (
        "30 2 * * *",
        "2026-10-23T12:00:00Z",
        PARIS,
        ["2026-10-24T00:30:00Z", "2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"],
    ),
    (
        "*/30 * * * *",
        "2026-10-24T23:00:00Z",
        PARIS,
        [
            "2026-10-24T23:30:00Z",
            "2026-10-25T00:00:00Z",
            "2026-10-25T00:30:00Z",
            "2026-10-25T02:00:00Z",
            "2026-10-25T02:30:00Z",
        ],
    ),
    (
        "@hourly",
        "2026-10-24T22:30:00Z",
        PARIS,
        [
            "2026-10-24T23:00:00Z",
            "2026-10-25T00:00:00Z",
            "2026-10-25T02:00:00Z",
            "2026-10-25T03:00:00Z",
        ],
    ),
    ("2026-10-25T02:30", "2026-10-24T12:00:00Z", PARIS, ["2026-10-25T00:30:00Z"]),
    (
        "every 30m",
        "2026-10-24T23:45:00Z",
        PARIS,
        [
            "2026-10-25T00:15:00Z",
            "2026-10-25T00:45:00Z",
            "2026-10-25T01:15:00Z",
            "2026-10-25T01:45:00Z",
        ],
    ),
    (
        "every day at 9:00",
        "2026-10-23T12:00:00Z",
        PARIS,
        ["2026-10-24T07:00:00Z", "2026-10-25T08:00:00Z", "2026-10-26T08:00:00Z"],
    ),
    # America/New_York, spring forward 2026-03-08: 02:00 EST -> 03:00 EDT at 07:00Z.
    (
        "every day at 2:30",
        "2026-03-07T12:00:00Z",
        NEW_YORK,
        ["2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z", "2026-03-10T06:30:00Z"],
    ),
    (
        "15 2 * * 0",
        "2026-03-01T12:00:00Z",
        NEW_YORK,
        ["2026-03-08T07:00:00Z", "2026-03-15T06:15:00Z"],
    ),
    # America/New_York, fall back 2026-11-01: 02:00 EDT -> 01:00 EST at 06:00Z.
    (
        "every day at 1:30",
        "2026-10-30T12:00:00Z",
        NEW_YORK,
        ["2026-10-31T05:30:00Z", "2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"],
    ),
    (
        "every day at 9:00",
        "2026-10-30T12:00:00Z",
        NEW_YORK,
        ["2026-10-30T13:00:00Z", "2026-10-31T13:00:00Z", "2026-11-01T14:00:00Z"],
    ),
    ("tomorrow at 1:30", "2026-10-31T12:00:00Z", NEW_YORK, ["2026-11-01T05:30:00Z"]),
]


@pytest.mark.parametrize(("text", "now", "tz", "fires"), DST_CASES)
def test_dst_tables(text, now, tz, fires):
    spec = parse_when(text, now=iso(now), tz=tz)
    expected = utc_list(fires)
    assert spec.next_fire_times(len(expected)) == expected


@pytest.mark.parametrize(
    ("after", "expected"),
    [
        # inside the repeated hour, second pass (02:10 CET): the next wall time is 03:00 CET
        ("2026-10-25T01:10:00Z", "2026-10-25T02:00:00Z"),
        # inside the first pass (02:10 CEST): 02:30 CEST
        ("2026-10-25T00:10:00Z", "2026-10-25T00:30:00Z"),
        # at the fall-back instant itself
        ("2026-10-25T01:00:00Z", "2026-10-25T02:00:00Z"),
    ],
)
def test_next_after_from_inside_the_repeated_hour(after, expected):
    spec = parse_when("*/30 * * * *", now=iso("2026-10-24T12:00:00Z"), tz=PARIS)
    assert spec.next_after(iso(after)) == iso(expected)


def test_canonical_of_a_wall_time_in_a_gap_names_the_instant_after_the_jump():
    spec = parse_when("2026-03-29T02:30", now=iso("2026-03-28T12:00:00Z"), tz=PARIS)
    assert spec.canonical == "2026-03-29T03:00:00+02:00"


# --------------------------------------------------------------------------------------------
# next_fire_times, next_after
# --------------------------------------------------------------------------------------------


def test_next_fire_times_after_an_instant_are_strictly_after_it():
    spec = parse_when("every day at 9:00", now=NOW, tz=PARIS)
    after = iso("2026-06-01T09:00:00+02:00")
    assert spec.next_fire_times(2, after=after) == [
        iso("2026-06-02T09:00:00+02:00"),
        iso("2026-06-03T09:00:00+02:00"),
    ]


def test_interval_next_after_is_arithmetic_even_far_ahead():
    spec = parse_when("every 1s", now=NOW, tz=PARIS)
    started = time.perf_counter()
    far = iso("2999-01-01T00:00:00.5+00:00")
    assert spec.next_after(far) == iso("2999-01-01T00:00:01+00:00")
    assert time.perf_counter() - started < 0.05


@pytest.mark.parametrize("text", ["every day at 9:00", "*/15 * * * *", "every 5m"])
def test_recurring_schedules_have_no_occurrence_before_their_anchor(text):
    spec = parse_when(text, now=NOW, tz=PARIS)
    long_before = NOW - timedelta(days=10)
    assert spec.next_after(long_before) == spec.first_fire_time()
    assert spec.next_fire_times(2, after=long_before) == spec.next_fire_times(2)


def test_next_fire_times_zero_is_empty():
    assert parse_when("every 5m", now=NOW, tz=PARIS).next_fire_times(0) == []


def test_next_after_refuses_naive_instants():
    spec = parse_when("every 5m", now=NOW, tz=PARIS)
    with pytest.raises(ValidationError):
        spec.next_after(datetime(2026, 5, 10, 12))


# --------------------------------------------------------------------------------------------
# describe
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tz", "words"),
    [
        ("every day at 09:00", PARIS, "every day at 09:00 (Europe/Paris)"),
        ("every weekday at 8:30", PARIS, "every weekday at 08:30 (Europe/Paris)"),
        ("every friday at 17:00", NEW_YORK, "every Friday at 17:00 (America/New_York)"),
        ("every sunday", PARIS, "every Sunday at 09:00 (Europe/Paris)"),
        ("@hourly", PARIS, "every hour at minute 00 (Europe/Paris)"),
        ("*/15 9-17 * * 1-5", PARIS, "cron */15 9-17 * * 1-5 (Europe/Paris)"),
        ("2026-06-01T12:00:00+02:00", "+02:00", "once at 2026-06-01 12:00 (+02:00)"),
        ("2026-06-01T12:00:30+02:00", PARIS, "once at 2026-06-01 12:00:30 (Europe/Paris)"),
        ("every hour", PARIS, "every hour"),
        ("every 30m", PARIS, "every 30 minutes"),
        ("every 1h30m", PARIS, "every 1 hour 30 minutes"),
        ("every 2 days", PARIS, "every 2 days"),
        ("now", PARIS, "immediately"),
    ],
)
def test_describe(text, tz, words):
    assert parse_when(text, now=NOW, tz=tz).describe() == words


# --------------------------------------------------------------------------------------------
# Serialisation and exports
# --------------------------------------------------------------------------------------------

SERIAL_TEXTS = ["in 30m", "now", "every 1h30m", "every weekday at 8:30", "0 9 15 * 5"]


@pytest.mark.parametrize("text", SERIAL_TEXTS)
@pytest.mark.parametrize("tz", [PARIS, "+05:30", "UTC"])
def test_to_dict_from_dict_round_trip_through_json(text, tz):
    spec = parse_when(text, now=NOW, tz=tz)
    data = json.loads(json.dumps(spec.to_dict()))
    assert data["version"] == 1
    restored = ScheduleSpec.from_dict(data)
    assert restored == spec
    assert hash(restored) == hash(spec)
    assert restored.next_fire_times(3) == spec.next_fire_times(3)
    assert restored.describe() == spec.describe()


def test_from_dict_keeps_a_one_shot_that_is_now_in_the_past():
    spec = parse_when("in 30m", now=NOW, tz=PARIS)
    assert ScheduleSpec.from_dict(spec.to_dict()).first_fire_time() == spec.first_fire_time()


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"version": 2}, "schedule.version"),
        ({"version": None}, "schedule.version"),
        ({"kind": "sometimes"}, "schedule.kind"),
        ({"tz": "Mars/Olympus"}, "tz"),
        ({"trigger": {"type": "cron", "expression": "0 9 * * *"}}, "schedule"),
        ({"trigger": {"type": "random"}}, "schedule.trigger.type"),
        ({"trigger": {"type": "once", "at": "2026-06-01T00:00:00+00:00"}}, "schedule.trigger.type"),
        ({"anchor": None}, "schedule.anchor"),
        ({"trigger": {"type": "cron", "expression": "0 9 * * *", "tz": "Mars/Olympus"}}, "tz"),
        ({"anchor": "yesterday"}, "schedule"),
    ],
)
def test_from_dict_rejects_bad_payloads_naming_the_field(change, field):
    data = {**parse_when("every day", now=NOW, tz=PARIS).to_dict(), **change}
    with pytest.raises(ValidationError) as caught:
        ScheduleSpec.from_dict(data)
    assert caught.value.field == field


def test_package_exports():
    assert jupyter_recall.parse_when is parse_when
    assert jupyter_recall.ScheduleSpec is ScheduleSpec
    assert jupyter_recall.ParseError is ParseError


def test_accepted_forms_are_one_constant_used_by_errors():
    with pytest.raises(ParseError) as caught:
        parse_when("asdf", now=NOW, tz=PARIS)
    assert caught.value.accepted == when_module.ACCEPTED_FORMS


def test_specs_are_hashable_and_equal_by_value():
    a = parse_when("every day at 9:00", now=NOW, tz=PARIS)
    b = parse_when("daily", now=NOW, tz=PARIS)
    assert a == b
    assert len({a, b}) == 1
    assert a != parse_when("every day at 9:00", now=NOW, tz=NEW_YORK)
