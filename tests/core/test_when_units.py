"""A counted unit reads the same in the singular and the plural, in every form that counts one:
``every 1 week on monday`` (as ``docs/time-expressions.md`` writes it) is ``every 1 weeks on
monday``, ``every 2 week on monday`` is ``every 2 weeks on monday``, ``in 2 hour`` is ``in 2
hours``.
"""

from __future__ import annotations

import pytest

from jupyter_recall.core.when import parse_when
from tests.core.test_when import NOW, PARIS

# (a text written with the singular, what it means): the same text with the plural means it too.
SINGULAR_AND_PLURAL = [
    # every N weeks on <days>: 1 is the plain weekly cron, more a weeks trigger
    ("every 1 week on monday", "0 9 * * 1"),
    ("every 1 week on monday at 9:00", "0 9 * * 1"),
    ("each 1 week on friday at 17:30", "30 17 * * 5"),
    ("every 1 week on monday and thursday", "0 9 * * 1,4"),
    ("every 2 week on monday", "every 2 weeks on monday at 09:00"),
    (
        "every 3 week on mon, wed and fri at 8:30",
        "every 3 weeks on monday, wednesday and friday at 08:30",
    ),
    ("toutes les 1 semaine le lundi", "0 9 * * 1"),
    ("toutes les 2 semaine le lundi à 9h", "every 2 weeks on monday at 09:00"),
    # intervals
    ("every 1 second", "every 1s"),
    ("every 1 minute", "every 1m"),
    ("every 2 minute", "every 2m"),
    ("every 1 hour", "every 1h"),
    ("every 2 hour", "every 2h"),
    ("every 1 day", "every 1d"),
    ("every 1 week", "every 7d"),
    ("toutes les 2 heure", "every 2h"),
    ("toutes les 1 semaine", "every 7d"),
    # relative times (months and years too)
    ("in 1 minute", "2026-05-10T10:01:00+02:00"),
    ("in 2 minute", "2026-05-10T10:02:00+02:00"),
    ("in 2 hour and 1 minute", "2026-05-10T12:01:00+02:00"),
    ("in 2 day", "2026-05-12T10:00:00+02:00"),
    ("2 week from now", "2026-05-24T10:00:00+02:00"),
    ("in 2 month", "2026-07-10T10:00:00+02:00"),
    ("in 2 year", "2028-05-10T10:00:00+02:00"),
    ("dans 2 heure", "2026-05-10T12:00:00+02:00"),
    ("dans 2 semaine", "2026-05-24T10:00:00+02:00"),
    # uncounted, but "every weekdays" was taken and "every weekends" was not
    ("every weekend at 10:00", "0 10 * * 0,6"),
]

_PLURALS = {"semaine": "semaines", "heure": "heures", "weekend": "weekends"}


def plural(text: str) -> str:
    """``text`` with its unit in the plural (the one word it has to change)."""
    for unit in ("second", "minute", "hour", "day", "week", "month", "year", *_PLURALS):
        words = text.split()
        if unit in words:
            index = words.index(unit)
            words[index] = _PLURALS.get(unit, unit + "s")
            return " ".join(words)
    raise AssertionError(f"no unit in {text!r}")


@pytest.mark.parametrize(("singular", "canonical"), SINGULAR_AND_PLURAL)
def test_a_counted_unit_reads_the_same_in_the_singular_and_the_plural(singular, canonical):
    spec = parse_when(singular, now=NOW, tz=PARIS)
    assert spec.canonical == canonical
    assert parse_when(plural(singular), now=NOW, tz=PARIS) == spec


def test_every_one_week_on_monday_is_the_plain_cron_the_documentation_says():
    spec = parse_when("every 1 week on monday", now=NOW, tz=PARIS)
    assert (spec.kind, spec.canonical) == ("cron", "0 9 * * 1")
    assert spec == parse_when("0 9 * * 1", now=NOW, tz=PARIS)


@pytest.mark.parametrize(
    ("abbreviated", "written_out"),
    [
        ("every 2 wk on monday", "every 2 weeks on monday"),
        ("every 2 wks on monday at 8:30", "every 2 weeks on monday at 8:30"),
        ("every 2w on friday", "every 2 weeks on friday"),
        ("every 3wks on mon and thu", "every 3 weeks on monday and thursday"),
        ("every 1 wk on monday", "every 1 week on monday"),
        ("every other wk on tuesday", "every other week on tuesday"),
    ],
)
def test_every_n_weeks_on_a_day_takes_the_abbreviations_intervals_take(abbreviated, written_out):
    # "every 2 wk" was an interval already: its form with days read as a mistake.
    assert parse_when(abbreviated, now=NOW, tz=PARIS) == parse_when(written_out, now=NOW, tz=PARIS)
