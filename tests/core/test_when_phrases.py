"""The phrases of issue 17, English and French: each with its exact meaning (fire times), its
canonical form (which parses back to the same schedule), and its errors.

``now`` is Sunday 2026-05-10 10:00 in Paris (CEST, +02:00), as in ``test_when.py``.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from jupyter_recall.core.errors import ParseError
from jupyter_recall.core.triggers.weeks import WeeksTrigger
from jupyter_recall.core.when import ScheduleSpec, parse_when
from jupyter_recall.core.when_words import EXAMPLES
from tests.core.test_when import NOW, PARIS, expand_local

UTC = "UTC"
UTC_ZONE = timezone.utc


ONE_SHOTS = [
    # bare noon / midnight: the next one
    ("noon", PARIS, "2026-05-10T12:00:00+02:00"),
    ("midnight", PARIS, "2026-05-11T00:00:00+02:00"),
    ("midi", PARIS, "2026-05-10T12:00:00+02:00"),
    ("minuit", PARIS, "2026-05-11T00:00:00+02:00"),
    # a zone after a time or a date: the wall time is read in that zone
    ("tomorrow at 9am UTC", PARIS, "2026-05-11T09:00:00+00:00"),
    ("at 17:00 Europe/Paris", "America/New_York", "2026-05-10T17:00:00+02:00"),
    ("at 17:00 europe/paris", UTC, "2026-05-10T17:00:00+02:00"),
    ("on 2026-06-01 at 12:00 +02:00", UTC, "2026-06-01T12:00:00+02:00"),
    ("2026-06-01 12:00 America/New_York", PARIS, "2026-06-01T12:00:00-04:00"),
    ("2026-06-01 UTC", PARIS, "2026-06-01T09:00:00+00:00"),
    ("demain à 9h UTC", PARIS, "2026-05-11T09:00:00+00:00"),
    ("noon -05:00", PARIS, "2026-05-10T12:00:00-05:00"),
    # half an hour, 1h30, an hour and a half
    ("half an hour", PARIS, "2026-05-10T10:30:00+02:00"),
    ("in half an hour", PARIS, "2026-05-10T10:30:00+02:00"),
    ("in a half hour", PARIS, "2026-05-10T10:30:00+02:00"),
    ("dans une demi-heure", PARIS, "2026-05-10T10:30:00+02:00"),
    ("1h30", PARIS, "2026-05-10T11:30:00+02:00"),
    ("in 1h30", PARIS, "2026-05-10T11:30:00+02:00"),
    ("in 2h05", PARIS, "2026-05-10T12:05:00+02:00"),
    ("in an hour and a half", PARIS, "2026-05-10T11:30:00+02:00"),
    ("dans une heure et demie", PARIS, "2026-05-10T11:30:00+02:00"),
    ("in 1 day and a half", PARIS, "2026-05-11T22:00:00+02:00"),
    # months and years keep the wall time of day (not 30 days of seconds)
    ("in 1 month", PARIS, "2026-06-10T10:00:00+02:00"),
    ("in 6 months", PARIS, "2026-11-10T10:00:00+01:00"),
    ("dans 1 mois", PARIS, "2026-06-10T10:00:00+02:00"),
    ("in 1 year", PARIS, "2027-05-10T10:00:00+02:00"),
    ("dans 2 ans", PARIS, "2028-05-10T10:00:00+02:00"),
    ("in 1 month and 2 hours", PARIS, "2026-06-10T12:00:00+02:00"),
    ("in a year and a half", PARIS, "2027-11-10T10:00:00+01:00"),
    # parts of the day
    ("tomorrow morning", PARIS, "2026-05-11T09:00:00+02:00"),
    ("tomorrow afternoon", PARIS, "2026-05-11T14:00:00+02:00"),
    ("tomorrow evening", PARIS, "2026-05-11T18:00:00+02:00"),
    ("tomorrow night", PARIS, "2026-05-11T21:00:00+02:00"),
    ("this afternoon", PARIS, "2026-05-10T14:00:00+02:00"),
    ("this evening", PARIS, "2026-05-10T18:00:00+02:00"),
    ("tonight", PARIS, "2026-05-10T21:00:00+02:00"),
    ("demain matin", PARIS, "2026-05-11T09:00:00+02:00"),
    ("demain après-midi", PARIS, "2026-05-11T14:00:00+02:00"),
    ("demain soir", PARIS, "2026-05-11T18:00:00+02:00"),
    ("cet après-midi", PARIS, "2026-05-10T14:00:00+02:00"),
    ("ce soir", PARIS, "2026-05-10T18:00:00+02:00"),
    ("tonight UTC", PARIS, "2026-05-10T21:00:00+00:00"),
]


@pytest.mark.parametrize(("text", "tz", "expected"), ONE_SHOTS)
def test_one_shot_phrases(text, tz, expected):
    spec = parse_when(text, now=NOW, tz=tz)
    assert spec.kind == "once"
    assert spec.first_fire_time() == datetime.fromisoformat(expected)
    assert spec.canonical == expected
    again = parse_when(spec.canonical, now=NOW, tz=spec.tz)
    assert again.first_fire_time() == spec.first_fire_time()


def test_a_zone_written_in_the_text_becomes_the_schedule_zone():
    spec = parse_when("every day at 9:00 America/New_York", now=NOW, tz=PARIS)
    assert spec.tz == "America/New_York"
    assert spec.canonical == "0 9 * * *"
    assert parse_when(spec.canonical, now=NOW, tz=spec.tz) == spec
    assert spec.next_fire_times(1) == [datetime.fromisoformat("2026-05-10T09:00:00-04:00")]


def test_in_one_month_clamps_to_the_end_of_a_shorter_month():
    now = datetime.fromisoformat("2026-01-31T08:15:00+01:00")
    spec = parse_when("in 1 month", now=now, tz=PARIS)
    assert spec.first_fire_time() == datetime.fromisoformat("2026-02-28T08:15:00+01:00")


def test_in_one_month_across_a_dst_change_keeps_the_wall_time():
    now = datetime.fromisoformat("2026-03-10T09:00:00+01:00")
    spec = parse_when("in 1 month", now=now, tz=PARIS)
    assert spec.first_fire_time() == datetime.fromisoformat("2026-04-10T09:00:00+02:00")


RECURRING = [
    # (text, canonical, local fire times in Paris)
    ("weekdays at 9", "0 9 * * 1-5", ["05-11 09:00", "05-12 09:00"]),
    ("on weekdays at 8:30", "30 8 * * 1-5", ["05-11 08:30", "05-12 08:30"]),
    ("weekdays", "0 9 * * 1-5", ["05-11 09:00"]),
    ("en semaine à 9h", "0 9 * * 1-5", ["05-11 09:00"]),
    ("du lundi au vendredi à 18h", "0 18 * * 1-5", ["05-11 18:00"]),
    ("every weekend at 10", "0 10 * * 0,6", ["05-16 10:00", "05-17 10:00", "05-23 10:00"]),
    ("on weekends at 11:00", "0 11 * * 0,6", ["05-10 11:00", "05-16 11:00"]),
    ("le week-end à 10h", "0 10 * * 0,6", ["05-16 10:00", "05-17 10:00"]),
    ("every monday and thursday at 9:00", "0 9 * * 1,4", ["05-11 09:00", "05-14 09:00"]),
    ("every mon, wed and fri at 7am", "0 7 * * 1,3,5", ["05-11 07:00", "05-13 07:00"]),
    ("mondays at 9", "0 9 * * 1", ["05-11 09:00", "05-18 09:00"]),
    ("tous les lundis et jeudis à 9h", "0 9 * * 1,4", ["05-11 09:00", "05-14 09:00"]),
    ("le lundi à 9h", "0 9 * * 1", ["05-11 09:00", "05-18 09:00"]),
    ("every morning", "0 9 * * *", ["05-11 09:00"]),
    ("every evening", "0 18 * * *", ["05-10 18:00", "05-11 18:00"]),
    ("every night", "0 21 * * *", ["05-10 21:00"]),
    ("tous les soirs", "0 18 * * *", ["05-10 18:00"]),
    ("chaque matin", "0 9 * * *", ["05-11 09:00"]),
    # monthly
    ("every month", "0 9 1 * *", ["06-01 09:00", "07-01 09:00"]),
    ("monthly", "0 9 1 * *", ["06-01 09:00"]),
    ("every month on the 1st", "0 9 1 * *", ["06-01 09:00", "07-01 09:00"]),
    ("every month on the 15th at 18:00", "0 18 15 * *", ["05-15 18:00", "06-15 18:00"]),
    ("monthly on the 3rd", "0 9 3 * *", ["06-03 09:00"]),
    ("on the 15th of every month", "0 9 15 * *", ["05-15 09:00", "06-15 09:00"]),
    ("the 2nd of each month at 8am", "0 8 2 * *", ["06-02 08:00"]),
    ("every 20th of the month", "0 9 20 * *", ["05-20 09:00"]),
    ("tous les mois le 1er", "0 9 1 * *", ["06-01 09:00"]),
    ("le 15 de chaque mois à 9h", "0 9 15 * *", ["05-15 09:00", "06-15 09:00"]),
    ("tous les 15 du mois", "0 9 15 * *", ["05-15 09:00"]),
    ("last day of the month", "0 9 L * *", ["05-31 09:00", "06-30 09:00", "07-31 09:00"]),
    ("on the last day of every month at 18:00", "0 18 L * *", ["05-31 18:00"]),
    ("every month on the last day", "0 9 L * *", ["05-31 09:00"]),
    ("le dernier jour du mois", "0 9 L * *", ["05-31 09:00"]),
    ("le dernier jour de chaque mois à 18h", "0 18 L * *", ["05-31 18:00"]),
    # the nth weekday of the month
    ("every first monday of the month", "0 9 * * 1#1", ["06-01 09:00", "07-06 09:00"]),
    ("the second tuesday of every month at 10", "0 10 * * 2#2", ["05-12 10:00", "06-09 10:00"]),
    ("every last friday of the month at 17:00", "0 17 * * 5L", ["05-29 17:00", "06-26 17:00"]),
    ("on the 5th sunday of each month", "0 9 * * 0#5", ["05-31 09:00", "08-30 09:00"]),
    ("le premier lundi du mois", "0 9 * * 1#1", ["06-01 09:00"]),
    ("tous les derniers vendredis du mois à 17h", "0 17 * * 5L", ["05-29 17:00"]),
    ("chaque troisième mercredi du mois", "0 9 * * 3#3", ["05-20 09:00"]),
]


@pytest.mark.parametrize(("text", "canonical", "local"), RECURRING)
def test_recurring_phrases(text, canonical, local):
    spec = parse_when(text, now=NOW, tz=PARIS)
    assert (spec.kind, spec.canonical) == ("cron", canonical)
    assert spec.next_fire_times(len(local)) == [expand_local(t, PARIS) for t in local]
    assert parse_when(spec.canonical, now=NOW, tz=PARIS) == spec


EVERY_N_WEEKS = [
    ("every 2 weeks on monday", "every 2 weeks on monday at 09:00", ["05-11 09:00", "05-25 09:00"]),
    (
        "every other week on friday at 10",
        "every 2 weeks on friday at 10:00",
        ["05-15 10:00", "05-29 10:00", "06-12 10:00"],
    ),
    (
        "every 3 weeks on monday and thursday at 8:30",
        "every 3 weeks on monday and thursday at 08:30",
        ["05-11 08:30", "05-14 08:30", "06-01 08:30", "06-04 08:30"],
    ),
    # Sunday 10:00 now: this Sunday 11:00 is the first, so this week is the first week.
    (
        "every 2 weeks on sunday at 11:00",
        "every 2 weeks on sunday at 11:00",
        ["05-10 11:00", "05-24 11:00"],
    ),
    ("every other monday", "every 2 weeks on monday at 09:00", ["05-11 09:00", "05-25 09:00"]),
    ("toutes les 2 semaines le lundi", "every 2 weeks on monday at 09:00", ["05-11 09:00"]),
    ("une semaine sur deux le mardi à 8h", "every 2 weeks on tuesday at 08:00", ["05-12 08:00"]),
    ("un lundi sur deux", "every 2 weeks on monday at 09:00", ["05-11 09:00", "05-25 09:00"]),
]


@pytest.mark.parametrize(("text", "canonical", "local"), EVERY_N_WEEKS)
def test_every_n_weeks(text, canonical, local):
    spec = parse_when(text, now=NOW, tz=PARIS)
    assert (spec.kind, spec.canonical) == ("cron", canonical)
    assert isinstance(spec.trigger, WeeksTrigger)
    assert spec.next_fire_times(len(local)) == [expand_local(t, PARIS) for t in local]
    assert parse_when(spec.canonical, now=NOW, tz=PARIS) == spec
    payload = json.loads(json.dumps(spec.to_dict()))
    assert payload["trigger"]["type"] == "weeks"
    assert ScheduleSpec.from_dict(payload) == spec


def test_every_one_week_on_a_day_is_a_plain_weekly_cron():
    assert parse_when("every 1 weeks on monday", now=NOW, tz=PARIS).canonical == "0 9 * * 1"


def test_every_n_weeks_follows_the_wall_clock_across_dst():
    now = datetime.fromisoformat("2026-03-16T12:00:00+01:00")  # a Monday after 09:00, CET
    spec = parse_when("every 2 weeks on monday at 9:00", now=now, tz=PARIS)
    assert spec.next_fire_times(3) == [
        datetime.fromisoformat("2026-03-23T09:00:00+01:00"),
        datetime.fromisoformat("2026-04-06T09:00:00+02:00"),
        datetime.fromisoformat("2026-04-20T09:00:00+02:00"),
    ]


def test_describe_new_forms():
    words = {
        text: parse_when(text, now=NOW, tz=PARIS).describe()
        for text in (
            "every 2 weeks on monday",
            "last day of the month",
            "every first monday of the month",
            "on the 15th of every month",
            "weekdays at 9",
            "every weekend at 10",
            "every monday and thursday at 9:00",
        )
    }
    assert words == {
        "every 2 weeks on monday": "every 2 weeks on Monday at 09:00 (Europe/Paris)",
        "last day of the month": "on the last day of every month at 09:00 (Europe/Paris)",
        "every first monday of the month": (
            "on the first Monday of every month at 09:00 (Europe/Paris)"
        ),
        "on the 15th of every month": "on day 15 of every month at 09:00 (Europe/Paris)",
        "weekdays at 9": "every weekday at 09:00 (Europe/Paris)",
        "every weekend at 10": "every Saturday and Sunday at 10:00 (Europe/Paris)",
        "every monday and thursday at 9:00": ("every Monday and Thursday at 09:00 (Europe/Paris)"),
    }


@pytest.mark.parametrize("example", EXAMPLES)
def test_every_suggested_example_is_accepted(example):
    parse_when(example, now=datetime.fromisoformat("2026-05-10T07:00:00+02:00"), tz=PARIS)


ERRORS = [
    ("in 30m UTC", "a zone ('UTC') goes after a time or a date"),
    ("every 2 hours Europe/Paris", "means nothing"),
    ("now UTC", "means nothing"),
    ("this morning", "is in the past"),
    ("every 2 months", "an interval is elapsed time, and months and years are not"),
    ("in 1201 months", "at most 1200 months"),
    ("in 999999999999999999 months", "at most 1200 months"),
    ("999999999999999999 months ago", "at most 4 digits"),
    ("next 123456 fridays", "at most 4 digits"),
    ("every month on the 32nd", "a day of the month must be 1-31, got 32"),
    ("on the 0th of every month", "a day of the month must be 1-31, got 0"),
    ("every 999 weeks on monday", "a number of weeks must be at most 520"),
    ("every 0 weeks on monday", "a number of weeks must be at least 1"),
    ("0 9 * * 8", "day-of-week '8' is out of range 0-7"),
    ("0 9 31 2 *", "never fires"),
]


@pytest.mark.parametrize(("text", "reason"), ERRORS)
def test_errors(text, reason):
    with pytest.raises(ParseError) as caught:
        parse_when(text, now=NOW, tz=PARIS)
    assert reason in caught.value.reason


SUGGESTIONS = [
    ("tomorow at 9", "tomorrow at 9"),
    ("evry day at 9:00", "every day at 9:00"),
    ("every mondya at 9", "every monday at 9"),
    ("tomorrow mornin", "tomorrow morning"),
    ("demian soir", "demain soir"),
    ("weekdys at 8:30", "weekdays at 8:30"),
    ("every frist monday of the month", "every first monday of the month"),
    # nothing to correct word by word: the nearest accepted example
    ("every month the 1st", "every month on the 1st at 9:00"),
    ("on the last day", "last day of the month"),
]


@pytest.mark.parametrize(("text", "suggestion"), SUGGESTIONS)
def test_a_rejected_phrase_gets_the_nearest_accepted_form(text, suggestion):
    with pytest.raises(ParseError) as caught:
        parse_when(text, now=NOW, tz=PARIS)
    assert f"(did you mean {suggestion!r}?)" in caught.value.reason
    parse_when(suggestion, now=NOW, tz=PARIS)  # what is suggested is accepted
    assert "Accepted forms:" in str(caught.value)


def test_every_n_weeks_at_the_end_of_time_never_fires():
    with pytest.raises(ParseError, match="never fires"):
        parse_when("every 2 weeks on monday", now=datetime(9999, 12, 30, tzinfo=UTC_ZONE), tz=UTC)
