"""An impossible date, time of day, UTC offset or time zone is refused naming what is wrong with
it, not as "not a recognised time expression" with a guess: ``2026-02-30`` says February has no
day 30, ``tomorrow at 9 Europe/Nowhere`` that the zone is unknown. Still a ParseError on the
field ``when``, listing the accepted forms.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

import pytest

from jupyter_recall.core.errors import ParseError
from jupyter_recall.core.tz import nearest_zone
from jupyter_recall.core.when import ACCEPTED_FORMS, parse_when
from jupyter_recall.core.when_words import EXAMPLES
from tests.core.test_when import NOW, PARIS

FIVE_FIELDS = "a cron expression has 5 fields (minute hour day-of-month month day-of-week)"
ZONE_HINT = "(a zone is an IANA name such as 'Europe/Paris' or a UTC offset such as '+02:00')"

MISTAKES = [
    # days a month lacks, months and days out of range: ISO dates and 'on <date>'
    ("2026-02-30", "'2026-02-30' is not a calendar date: February has no day 30"),
    ("on 2026-02-30", "'2026-02-30' is not a calendar date: February has no day 30"),
    ("on 2026-02-30 at 9:00", "'2026-02-30' is not a calendar date: February has no day 30"),
    ("2026-02-30 12:00", "'2026-02-30' is not a calendar date: February has no day 30"),
    ("2026-02-30T10:00:00Z", "'2026-02-30' is not a calendar date: February has no day 30"),
    (
        "2026-02-29",
        "'2026-02-29' is not a calendar date: February 2026 has no day 29 "
        "(2026 is not a leap year)",
    ),
    ("2026-04-31T10:00", "'2026-04-31' is not a calendar date: April has no day 31"),
    ("2026-13-01", "'2026-13-01' is not a calendar date: month 13 is out of range (1-12)"),
    ("2026-00-10 UTC", "'2026-00-10' is not a calendar date: month 0 is out of range (1-12)"),
    ("2026-06-00", "'2026-06-00' is not a calendar date: day 0 is out of range (1-31)"),
    ("2026-06-32", "'2026-06-32' is not a calendar date: day 32 is out of range (1-31)"),
    ("0000-01-01", "'0000-01-01' is not a calendar date: year 0 is out of range (1-9999)"),
    # hours, minutes and seconds out of range: ISO date-times and times of day
    ("2026-06-01T25:00", "'25:00' is not a valid time of day: hour 25 is out of range (0-23)"),
    ("2026-06-01 25:00", "'25:00' is not a valid time of day: hour 25 is out of range (0-23)"),
    (
        "2026-06-01T24:00:00+02:00",
        "'24:00:00' is not a valid time of day: hour 24 is out of range (0-23)",
    ),
    ("2026-06-01T12:60", "'12:60' is not a valid time of day: minute 60 is out of range (0-59)"),
    (
        "2026-06-01T12:00:60Z",
        "'12:00:60' is not a valid time of day: second 60 is out of range (0-59)",
    ),
    ("at 25:00", "'25:00' is not a valid time of day: hour 25 is out of range (0-23)"),
    ("tomorrow at 9:60", "'9:60' is not a valid time of day: minute 60 is out of range (0-59)"),
    (
        "on 2026-06-01 at 25:00",
        "'25:00' is not a valid time of day: hour 25 is out of range (0-23)",
    ),
    ("tomorrow at 25:00 UTC", "'25:00' is not a valid time of day: hour 25 is out of range (0-23)"),
    # UTC offsets out of range, in an ISO date-time or after a time
    ("2026-06-01T12:00:00+25:00", "UTC offset +25:00 is out of range (-23:59 to +23:59)"),
    ("2026-06-01T12:00:00-24:00", "UTC offset -24:00 is out of range (-23:59 to +23:59)"),
    ("2026-06-01T12:00+05:75", "UTC offset +05:75: minute 75 is out of range (0-59)"),
    ("2026-06-01T12:00+0560", "UTC offset +0560: minute 60 is out of range (0-59)"),
    ("tomorrow at 9 +25:00", "UTC offset +25:00 is out of range (-23:59 to +23:59)"),
    ("2026-06-01 12:00 +25:00", "UTC offset +25:00 is out of range (-23:59 to +23:59)"),
    ("every day at 9:00 +05:75", "UTC offset +05:75: minute 75 is out of range (0-59)"),
    # a zone that does not exist, after a text understood without it
    ("tomorrow at 9 Europe/Nowhere", f"unknown time zone 'Europe/Nowhere' {ZONE_HINT}"),
    ("tomorrow Europe/Nowhere", f"unknown time zone 'Europe/Nowhere' {ZONE_HINT}"),
    ("every day at 9:00 Mars/Olympus", f"unknown time zone 'Mars/Olympus' {ZONE_HINT}"),
    ("every monday at 9 mars/olympus", f"unknown time zone 'mars/olympus' {ZONE_HINT}"),
    ("2026-06-01 12:00 Europe/Nowhere", f"unknown time zone 'Europe/Nowhere' {ZONE_HINT}"),
    ("0 9 * * 1 Europe/Nowhere", f"unknown time zone 'Europe/Nowhere' {ZONE_HINT}"),
    ("in 30m Europe/Nowhere", f"unknown time zone 'Europe/Nowhere' {ZONE_HINT}"),
    ("at 9 Europe/Pari", "unknown time zone 'Europe/Pari' (did you mean 'Europe/Paris'?)"),
    ("demain à 9h america/new_yrok", "unknown time zone 'america/new_yrok' (did you mean "),
    ("tomorrow at 9 PST", f"unknown time zone 'PST' {ZONE_HINT}"),
    ("every day at 9 CEST", f"unknown time zone 'CEST' {ZONE_HINT}"),
    # a cron of 4, 6 or 7 fields (seconds or a year, as Quartz writes them); before, "unexpected
    # '*' after '0 0 * * *' (did you mean 'on the 15th of every month'?)"
    ("0 9 * *", f"{FIVE_FIELDS}, got 4"),
    ("0 0 9 * * *", f"{FIVE_FIELDS}, got 6: seconds and years are not read here"),
    ("*/5 * * * * *", f"{FIVE_FIELDS}, got 6: seconds and years are not read here"),
    ("0 9 * * 1-5 2026", f"{FIVE_FIELDS}, got 6: seconds and years are not read here"),
    ("0 0 9 ? * MON-FRI 2026", f"{FIVE_FIELDS}, got 7: seconds and years are not read here"),
]


@pytest.mark.parametrize(("text", "reason"), MISTAKES)
def test_an_impossible_value_is_named_in_the_error(text: str, reason: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse_when(text, now=NOW, tz=PARIS)
    error = caught.value
    assert error.reason.startswith(reason), error.reason
    assert "did you mean 'on " not in error.reason
    assert (error.field, error.text, error.accepted) == ("when", text, ACCEPTED_FORMS)
    assert str(error).startswith(f"when: cannot parse {text!r}: {reason}")


# Texts whose last word looks like a zone but whose rest is not understood either: the error is
# about the rest, as before (the zone is not the only thing wrong).
NOT_ABOUT_THE_ZONE = [
    ("tomorow at 9 Europe/Nowhere", "not a recognised time expression"),
    ("banana Europe/Nowhere", "not a recognised time expression"),
    ("every monday NOW", "'now' is not a time of day"),
    ("0 9 * * mon/sun", "day-of-week 'mon/sun'"),
    ("Europe/Nowhere", "not a recognised time expression"),
]


@pytest.mark.parametrize(("text", "reason"), NOT_ABOUT_THE_ZONE)
def test_a_zone_is_blamed_only_when_the_rest_is_understood(text: str, reason: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse_when(text, now=NOW, tz=PARIS)
    assert reason in caught.value.reason
    assert "unknown time zone" not in caught.value.reason


@pytest.mark.parametrize(
    "text",
    [
        "2028-02-29",
        "2026-06-01T23:59:59+23:59",
        "2026-06-01T12:00-23:59",
        "2026-06-01T12:00:00.5+05:30",
        "tomorrow at 9 AM",
        "tomorrow at 9 europe/paris",
        "every day at 9:00 -05:00",
    ],
)
def test_values_at_the_ends_of_their_ranges_are_taken(text: str) -> None:
    assert parse_when(text, now=NOW, tz=PARIS).next_fire_times(1)


def test_an_offset_with_minutes_over_59_is_not_read_on_as_the_next_hour() -> None:
    """``datetime.fromisoformat`` reads ``+05:75`` as ``+06:15``; the ``tz`` argument refuses
    ``+05:75``, and the text does too."""
    now = datetime(2026, 5, 10, tzinfo=timezone.utc)
    for text in ("2026-06-01T12:00:00+05:75", "2026-06-01T12:00:00+05:60:00"):
        with pytest.raises(ParseError, match="is out of range"):
            parse_when(text, now=now, tz="UTC")


def test_the_nearest_zone_is_offered_only_when_it_is_near() -> None:
    assert nearest_zone("Europe/Pari") == "Europe/Paris"
    assert nearest_zone("america/new_yrok") == "America/New_York"
    assert nearest_zone("Europe/Nowhere") is None
    assert nearest_zone("Mars/Olympus") is None


def test_the_dated_examples_users_are_shown_are_not_in_the_past_today() -> None:
    # Every refusal lists ACCEPTED_FORMS, and did-you-mean offers EXAMPLES: a dated one in the
    # past would be refused if copied. Against today's clock, as a user would copy it.
    dated = [
        example
        for text in (*ACCEPTED_FORMS, *EXAMPLES)
        for example in re.findall(r"'([^']*\d{4}-\d\d-\d\d[^']*)'", text) or [text]
        if re.search(r"\d{4}-\d\d-\d\d", example)
    ]
    assert len(dated) >= 4, dated
    now = datetime.now(timezone.utc)
    for example in dated:
        assert parse_when(example, now=now, tz="UTC").kind == "once", example
