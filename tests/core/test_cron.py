"""core.cron: the Vixie rules, table by table: (expression, previous fire, expected next).

In the style of arq's cron tests: each row gives an instant and the next fire time that follows,
in UTC unless the row names a zone. ``test_cron_reference.py`` compares thousands of random
expressions with cronsim; these rows pin the cases that matter by name.
"""

from __future__ import annotations

from datetime import datetime

import pytest

from jupyter_recall.core.cron import parse_cron
from jupyter_recall.core.errors import ParseError
from jupyter_recall.core.triggers.cron import CronTrigger
from jupyter_recall.core.when import ScheduleSpec


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


TABLE = [
    # equal-end ranges are one value, not "*"
    ("13-13 * * * *", "2026-05-10T10:00:00+00:00", "2026-05-10T10:13:00+00:00"),
    ("13-13 * * * *", "2026-05-10T10:13:00+00:00", "2026-05-10T11:13:00+00:00"),
    ("0 0 * * MON-MON", "2026-05-10T10:00:00+00:00", "2026-05-11T00:00:00+00:00"),
    ("0 0 * * MON-MON", "2026-05-11T00:00:00+00:00", "2026-05-18T00:00:00+00:00"),
    ("0 0 1 APR-APR *", "2026-05-10T10:00:00+00:00", "2027-04-01T00:00:00+00:00"),
    # both day fields restricted: either; a list covering the month is still a restriction
    ("0 9 15 * 5", "2026-05-10T10:00:00+00:00", "2026-05-15T09:00:00+00:00"),
    ("0 9 15 * 5", "2026-05-15T09:00:00+00:00", "2026-05-22T09:00:00+00:00"),
    ("0 0 1-31 * 1", "2026-05-10T10:00:00+00:00", "2026-05-11T00:00:00+00:00"),
    ("0 0 1-31 * 1", "2026-05-11T00:00:00+00:00", "2026-05-12T00:00:00+00:00"),
    ("0 0 1 * 0-6", "2026-05-10T10:00:00+00:00", "2026-05-11T00:00:00+00:00"),
    # a day field starting with "*" is unrestricted for the rule: both must match
    ("0 0 */2 * 1", "2026-05-10T10:00:00+00:00", "2026-05-11T00:00:00+00:00"),
    ("0 0 */2 * 1", "2026-05-11T00:00:00+00:00", "2026-05-25T00:00:00+00:00"),
    ("0 0 1 * */2", "2026-05-10T10:00:00+00:00", "2026-08-01T00:00:00+00:00"),
    ("0 0 * * 1", "2026-05-11T00:00:00+00:00", "2026-05-18T00:00:00+00:00"),
    # "?" is "*"
    ("0 9 ? * 1", "2026-05-11T09:00:00+00:00", "2026-05-18T09:00:00+00:00"),
    # names, any case; 7 is Sunday; steps from a value run to the end of the field
    ("0 9 * jan mon", "2026-05-10T10:00:00+00:00", "2027-01-04T09:00:00+00:00"),
    ("0 9 * * 7", "2026-05-10T10:00:00+00:00", "2026-05-17T09:00:00+00:00"),
    ("0 9 * * 5-7", "2026-05-16T09:00:00+00:00", "2026-05-17T09:00:00+00:00"),
    ("5/20 * * * *", "2026-05-10T10:45:00+00:00", "2026-05-10T11:05:00+00:00"),
    ("0 9-17/4 * * *", "2026-05-10T13:00:00+00:00", "2026-05-10T17:00:00+00:00"),
    ("0 9-17/4 * * *", "2026-05-10T17:00:00+00:00", "2026-05-11T09:00:00+00:00"),
    # extensions: last day, last weekday, nearest weekday, last Friday, nth weekday, wrapping
    ("0 9 L * *", "2026-05-10T10:00:00+00:00", "2026-05-31T09:00:00+00:00"),
    ("0 9 L 2 *", "2027-03-01T00:00:00+00:00", "2028-02-29T09:00:00+00:00"),
    ("0 9 LW * *", "2026-05-10T10:00:00+00:00", "2026-05-29T09:00:00+00:00"),
    ("0 9 16W * *", "2026-05-10T10:00:00+00:00", "2026-05-15T09:00:00+00:00"),
    ("0 9 1W * *", "2026-07-31T10:00:00+00:00", "2026-08-03T09:00:00+00:00"),
    ("0 9 * * 5L", "2026-05-10T10:00:00+00:00", "2026-05-29T09:00:00+00:00"),
    ("0 9 * * mon#1", "2026-05-10T10:00:00+00:00", "2026-06-01T09:00:00+00:00"),
    ("0 9 * * 1#5", "2026-05-10T10:00:00+00:00", "2026-06-29T09:00:00+00:00"),
    ("0 9 * * fri-mon", "2026-05-12T10:00:00+00:00", "2026-05-15T09:00:00+00:00"),
    ("0 22-1 * * *", "2026-05-10T23:30:00+00:00", "2026-05-11T00:00:00+00:00"),
    ("0 9 * * 5-1/2", "2026-05-03T10:00:00+00:00", "2026-05-08T09:00:00+00:00"),
    ("0 9 * * 7-1", "2026-05-04T10:00:00+00:00", "2026-05-10T09:00:00+00:00"),
    ("0 9 31W * *", "2026-06-01T00:00:00+00:00", "2026-06-30T09:00:00+00:00"),
    # rare: Feb 29 that is a Monday (AND rule, "*/7" starts with "*")
    ("0 0 */7 2 1", "2026-05-10T10:00:00+00:00", "2027-02-01T00:00:00+00:00"),
    ("0 0 29 2 *", "2026-05-10T10:00:00+00:00", "2028-02-29T00:00:00+00:00"),
    # DST in Paris: a skipped wall time fires at the jump, a repeated one once
    ("30 2 * * * Europe/Paris", "2026-03-28T12:00:00+00:00", "2026-03-29T01:00:00+00:00"),
    ("30 2 * * * Europe/Paris", "2026-10-24T12:00:00+00:00", "2026-10-25T00:30:00+00:00"),
    ("30 2 * * * Europe/Paris", "2026-10-25T00:30:00+00:00", "2026-10-26T01:30:00+00:00"),
    ("0 * * * * Europe/Paris", "2026-10-25T00:00:00+00:00", "2026-10-25T02:00:00+00:00"),
    ("*/30 * * * * Europe/Paris", "2026-03-29T00:30:00+00:00", "2026-03-29T01:00:00+00:00"),
    ("*/30 * * * * Europe/Paris", "2026-03-29T01:00:00+00:00", "2026-03-29T01:30:00+00:00"),
    ("15 2 * * * Australia/Lord_Howe", "2026-10-03T12:00:00+00:00", "2026-10-03T15:30:00+00:00"),
    ("30 1 * * * America/New_York", "2026-11-01T05:30:00+00:00", "2026-11-02T06:30:00+00:00"),
]


@pytest.mark.parametrize(("expression", "previous", "expected"), TABLE)
def test_next_fire_time(expression, previous, expected):
    fields = expression.split()
    zone = fields[5] if len(fields) == 6 else "UTC"
    trigger = CronTrigger(" ".join(fields[:5]), zone)
    assert trigger.next_after(at(previous)) == at(expected)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("0 9 * * 8", "day-of-week '8' is out of range 0-7"),
        ("60 * * * *", "minute '60' is out of range 0-59"),
        ("0 24 * * *", "hour '24' is out of range 0-23"),
        ("0 9 0 * *", "day-of-month '0' is out of range 1-31"),
        ("0 9 32 * *", "day-of-month '32' is out of range 1-31"),
        ("0 9 1 13 *", "month '13' is out of range 1-12"),
        ("0 9 * foo *", "month 'foo' is not a number or a name (accepted: 1-12 or jan-dec)"),
        ("0 9 * * funday", "day-of-week 'funday' is not a number or a name"),
        ("*/0 * * * *", "minute '*/0' has a step that is not a whole number of at least 1"),
        ("0 9 * * 1#6", "day-of-week '1#6' has a week number after '#' that is not 1-5"),
        ("0 9 1-x * *", "day-of-month '1-x' is not a number"),
        ("0 9,, * * *", "hour '' is not a number"),
        ("0 9 * *", "a cron expression has 5 fields"),
        ("0 9 * * * *", "got 6"),
        ("0 9 L * 8L", "day-of-week '8L' is out of range 0-7"),
        ("0 99999999999 * * *", "hour '99999999999' is out of range 0-23"),
    ],
)
def test_errors_name_the_field_and_its_range(expression, message):
    with pytest.raises(ParseError) as caught:
        parse_cron(expression)
    assert message in caught.value.reason
    assert caught.value.text == expression


@pytest.mark.parametrize(
    "expression", ["0 0 30 2 *", "0 0 31 4,6,9,11 *", "0 0 */30 2 1#5", "0 0 30,31 feb *"]
)
def test_a_cron_that_never_fires_is_known_without_searching(expression):
    cron = parse_cron(expression)
    assert not cron.fires_ever()
    assert cron.next_wall_after(datetime(2026, 1, 1)) is None


def test_huge_steps_select_the_start_alone():
    assert parse_cron("7/99999999999999999999 * * * *").minutes == (7,)


def test_the_last_minute_of_year_9999_has_no_next():
    assert parse_cron("* * * * *").next_wall_after(datetime(9999, 12, 31, 23, 59)) is None


# Schedules stored by earlier versions (croniter read these): they load, and keep their meaning.
STORED = [
    ("0 9 * * mon#1", "2026-06-01T09:00:00+00:00"),
    ("0 9 15w * *", "2026-05-15T09:00:00+00:00"),
    ("0 9 ? * 1", "2026-05-11T09:00:00+00:00"),
    ("5/15 * * * *", "2026-05-10T10:05:00+00:00"),
    ("0 9 * jan/2 *", "2026-05-11T09:00:00+00:00"),
    ("0 9 l * *", "2026-05-31T09:00:00+00:00"),
    ("0 9 * * fri-mon", "2026-05-11T09:00:00+00:00"),
    ("0 9 * * sat,sun", "2026-05-16T09:00:00+00:00"),
]


@pytest.mark.parametrize(("expression", "first"), STORED)
def test_schedules_stored_by_earlier_versions_still_load(expression, first):
    payload = {
        "version": 1,
        "kind": "cron",
        "canonical": expression,
        "tz": "UTC",
        "anchor": "2026-05-10T10:00:00+00:00",
        "trigger": {"type": "cron", "expression": expression, "tz": "UTC"},
    }
    spec = ScheduleSpec.from_dict(payload)
    assert spec.first_fire_time() == at(first)
    assert spec.to_dict() == payload
