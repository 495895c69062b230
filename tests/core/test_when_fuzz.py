"""Hypothesis over the grammar: phrases assembled from its own words (and numbers of any size,
zones, times, junk), mutated examples, and arbitrary text.

For every text: parse_when returns a spec or raises ParseError, nothing else; a one-shot is never
in the past; and a spec's canonical form parses back (in the spec's zone, at the same ``now``)
to the same canonical form and the same fire times.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_recall.core import when
from jupyter_recall.core.errors import ParseError
from jupyter_recall.core.tz import lookup_tz
from jupyter_recall.core.when import ScheduleSpec, _read_whole, _relative_seconds, parse_when
from jupyter_recall.core.when_words import EXAMPLES, VOCABULARY

UTC = timezone.utc
SETTINGS = settings(max_examples=200, deadline=None)

ZONES = st.sampled_from(
    ["UTC", "Europe/Paris", "America/New_York", "Australia/Lord_Howe", "+05:30"]
)
NOWS = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2040, 12, 31), timezones=st.just(UTC)
) | st.sampled_from(
    [
        datetime(2026, 3, 29, 0, 59, tzinfo=UTC),  # just before Paris springs forward
        datetime(2026, 10, 25, 0, 30, tzinfo=UTC),  # inside Paris' repeated hour
        datetime(2026, 1, 31, 12, 0, tzinfo=UTC),  # a month end
        datetime(9999, 12, 30, 0, 0, tzinfo=UTC),  # the end of time
    ]
)
NUMBERS = st.integers(0, 40).map(str) | st.integers(0, 10**30).map(str)
TOKENS = st.sampled_from(
    [
        *sorted(VOCABULARY),
        *("at", "à", "on", "in", "every", "le", "de", "du", "sur", "deux", "of", "the"),
        *("9:00", "5pm", "17h30", "1h30", "12:00:30", "2026-06-01", "1st", "15th", "32nd", "1er"),
        *("UTC", "Europe/Paris", "+02:00", "-0530", "Mars/Olympus", "*", "*/15", "L", "1#2"),
        "@daily",
    ]
)
PHRASES = st.lists(TOKENS | NUMBERS, min_size=1, max_size=9).map(" ".join)


@st.composite
def mutated_examples(draw: st.DrawFn) -> str:
    """An accepted example with one word replaced, dropped or doubled, or a zone appended."""
    words = draw(st.sampled_from(EXAMPLES)).split()
    index = draw(st.integers(0, len(words) - 1))
    action = draw(st.sampled_from(["replace", "drop", "double", "zone"]))
    if action == "replace":
        words[index] = draw(TOKENS | NUMBERS)
    elif action == "drop" and len(words) > 1:
        del words[index]
    elif action == "double":
        words.insert(index, words[index])
    else:
        words.append(draw(st.sampled_from(["UTC", "Europe/Paris", "+02:00"])))
    return " ".join(words)


TEXTS = PHRASES | mutated_examples() | st.sampled_from(EXAMPLES) | st.text(max_size=40)


def _parse(text: str, now: datetime, tz: str):
    try:
        return parse_when(text, now=now, tz=tz)
    except ParseError:
        return None


@SETTINGS
@given(text=TEXTS, now=NOWS, tz=ZONES)
def test_only_parse_errors_and_never_a_past_one_shot(text, now, tz):
    spec = _parse(text, now, tz)  # any other exception fails the test
    if spec is not None and spec.kind == "once":
        fire = spec.first_fire_time()
        assert fire is not None
        assert fire >= now, (text, now, tz)


@SETTINGS
@given(text=TEXTS, now=NOWS, tz=ZONES)
def test_canonical_forms_round_trip(text, now, tz):
    spec = _parse(text, now, tz)
    if spec is None:
        return
    again = parse_when(spec.canonical, now=now, tz=spec.tz)
    assert again.canonical == spec.canonical, text
    assert again.kind == spec.kind
    assert again.next_fire_times(5) == spec.next_fire_times(5), text


@settings(max_examples=50, deadline=None)
@given(
    count=st.integers(10**5, 10**60),
    unit=st.sampled_from(["months", "years", "weeks", "mois", "days", "ans"]),
)
def test_absurd_magnitudes_are_parse_errors_naming_the_limit(count, unit):
    now = datetime(2026, 5, 10, tzinfo=UTC)
    for text in (f"in {count} {unit}", f"{count} {unit} ago", f"every {count} weeks on monday"):
        with pytest.raises(ParseError, match="at most"):
            parse_when(text, now=now, tz="UTC")


def test_the_fuzz_reaches_the_new_phrases():
    """The strategies do produce accepted phrases of the new kinds (a fuzz that only ever
    produces errors would prove nothing about round trips)."""
    now = datetime(2026, 5, 10, 8, tzinfo=UTC)
    kinds = {
        parse_when(example, now=now - timedelta(hours=2), tz="UTC").kind for example in EXAMPLES
    }
    assert kinds == {"once", "immediate", "interval", "cron"}


RELATIVE_TEXTS = st.builds(
    lambda lead, count, unit, tail: f"{lead}{count} {unit}{tail}",
    st.sampled_from(["in ", "dans ", "", "  In  ", "IN "]),
    st.integers(0, 10**12).map(str) | st.sampled_from(["a", "an", "une", "half an", "1.5"]),
    st.sampled_from(["minutes", "hours", "days", "weeks", "months", "s", "h", "heures", "hour"]),
    st.sampled_from(["", " from now", " UTC", " Europe/Paris", " and 30 minutes", " ago"]),
)


def _reading(read):
    try:
        return read()
    except ParseError as error:
        return ("ParseError", str(error))


@SETTINGS
@given(text=TEXTS | RELATIVE_TEXTS, now=NOWS, tz=ZONES)
def test_the_shortcut_for_relative_times_reads_as_the_whole_reading(text, now, tz):
    """``parse_when`` answers relative times of seconds from a reading remembered per text;
    for every text, it answers what the whole reading (``_read_whole``) does."""
    name, zone = lookup_tz(tz)
    whole = _reading(lambda: _read_whole(text, now, name, zone))
    assert _reading(lambda: parse_when(text, now=now, tz=tz)) == whole
    if _relative_seconds(text) is not None and isinstance(whole, ScheduleSpec):
        assert whole.kind == "once", text  # the shortcut was taken (past year 9999: not)


@SETTINGS
@given(text=TEXTS | RELATIVE_TEXTS, first=NOWS, now=NOWS, tz=ZONES)
def test_a_text_read_again_reads_as_without_anything_remembered(text, first, now, tz):
    """What is remembered per text (the rules it matches, a relative time's seconds) depends
    on neither the instant nor the zone: a text read once, then at another instant in another
    zone, reads as the rules read it when nothing is remembered and no shortcut is taken."""
    _reading(lambda: parse_when(text, now=first, tz="UTC"))
    again = _reading(lambda: parse_when(text, now=now, tz=tz))
    with (
        patch.object(when, "_remembered_matches", when._rule_matches),
        patch.object(when, "_relative_once", lambda *args: None),
    ):
        assert again == _reading(lambda: parse_when(text, now=now, tz=tz)), text


def test_the_shortcut_is_taken_for_plain_relative_times():
    now = datetime(2026, 5, 10, 8, tzinfo=UTC)
    for text in ("in 5 minutes", "in 1 day", "dans 2 heures", "90s", "10 minutes from now"):
        assert _relative_seconds(text) is not None, text
        assert parse_when(text, now=now, tz="UTC") == _read_whole(text, now, "UTC", UTC)
    for text in ("in 1 month", "in 5 minutes UTC", "2026-06-01", "after abc succeeds", "now"):
        assert _relative_seconds(text) is None, text
