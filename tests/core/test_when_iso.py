"""The ISO hot path of parse_when (bulk creation) against the general path it short-cuts.

``parse_when`` reads an ISO 8601 / RFC 3339 date-time before building any parsing context, and
takes the canonical text from the submitted one when it is already ``isoformat()``'s writing.
Both must give exactly what the general path (``_parse_iso`` through ``_Context.once``) gives.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_recall.core.errors import ParseError
from jupyter_recall.core.tz import lookup_tz
from jupyter_recall.core.when import ScheduleSpec, _Context, _parse_iso, parse_when

UTC = timezone.utc
NOW = datetime(2026, 5, 10, 8, 0, tzinfo=UTC)


def general(text: str, tz: str, now: datetime = NOW) -> ScheduleSpec | None:
    """What the general path makes of ``text`` (None: not an ISO text)."""
    name, zone = lookup_tz(tz)
    return _parse_iso(text.strip(), _Context(text, now, name, zone))


def expected_canonical(text: str, tz: str) -> str:
    """``isoformat()`` of the instant in the zone, computed apart from the parser."""
    instant = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    return instant.astimezone(lookup_tz(tz)[1]).isoformat()


AGREEMENT_CASES = [
    # (text, zone, whether the canonical text is the submitted one)
    # isoformat()'s own writing, in UTC: the canonical text is the submitted text
    ("2026-11-22T13:00:01.123456+00:00", "UTC", True),
    ("2026-11-22T13:00:01+00:00", "UTC", True),
    ("2026-11-22T00:00:00+00:00", "+00:00", True),
    ("2026-12-31T23:59:59.999999+00:00", "utc", True),
    # other writings of the same instants: the canonical text is written anew
    ("2026-11-22T13:00:01.000000+00:00", "UTC", False),
    ("2026-11-22T13:00:01.123+00:00", "UTC", False),
    ("2026-11-22T13:00:01-00:00", "UTC", False),
    ("2026-11-22T13:00:01+00:00:00", "UTC", False),
    ("2026-11-22 13:00:01+00:00", "UTC", False),
    ("2026-11-22t13:00:01+00:00", "UTC", False),
    ("2026-11-22T13:00+00:00", "UTC", False),
    ("2026-11-22T13:00:01Z", "UTC", False),
    ("2026-11-22T13:00:01.500z", "UTC", False),
    ("  2026-11-22T13:00:01+00:00\n", "UTC", True),
    # in another zone (London is at +00:00 in November), or written with another offset
    ("2026-11-22T13:00:01+00:00", "Europe/London", True),
    ("2026-06-22T13:00:01+00:00", "Europe/London", False),
    ("2026-11-22T13:00:01+00:00", "Europe/Paris", False),
    ("2026-11-22T13:00:01.250000+00:00", "America/New_York", False),
    ("2026-11-22T14:00:01+01:00", "UTC", False),
    ("2026-11-22T14:00:01+01:00", "Europe/Paris", True),
    ("2026-11-22T13:00:01", "UTC", False),
    ("2026-06-01T12:00", "Asia/Kolkata", False),
]


@pytest.mark.parametrize(("text", "tz", "same_text"), AGREEMENT_CASES)
def test_the_hot_path_agrees_with_the_general_path(text: str, tz: str, same_text: bool) -> None:
    spec = parse_when(text, now=NOW, tz=tz)
    assert spec == general(text, tz)
    assert spec.kind == "once"
    if "+" in text or "-00:00" in text or text.strip()[-1] in "Zz":
        assert spec.canonical == expected_canonical(text.strip(), tz)
    assert (spec.canonical == text.strip()) is same_text


REFUSED = [
    # (text, why both paths refuse it; None: not an ISO text, which the rules then refuse)
    ("2026-11-22T24:00:00+00:00", "'24:00:00' is not a valid time of day: hour 24 is out of"),
    ("2026-11-22T23:59:60+00:00", "second 60 is out of range (0-59)"),
    ("2026-02-30T10:00:00+00:00", "'2026-02-30' is not a calendar date: February has no day 30"),
    ("2026-11-22T13:00:01+05:75", "UTC offset +05:75: minute 75 is out of range (0-59)"),
    ("2026-11-22T13:00:01+0560", "UTC offset +0560: minute 60 is out of range (0-59)"),
    ("2026-11-22T13:00:01+05:00:60", "UTC offset +05:00:60: second 60 is out of range"),
    ("2026-11-22T13:00:01+24:00", "UTC offset +24:00 is out of range (-23:59 to +23:59)"),
    ("2026-11-22T13:00:01+00:00Z", None),
    ("2026-11-22Z", None),
    ("2026-11-22T13:00:01+02:00Z", None),
]


@pytest.mark.parametrize(("text", "reason"), REFUSED)
def test_texts_that_look_iso_but_are_not_are_refused(text: str, reason: str | None) -> None:
    """By both paths alike: the hot path never takes what the general path refuses (Python's
    ``fromisoformat`` reads ``+05:75`` as ``+06:15``), and the error names what is wrong."""
    with pytest.raises(ParseError) as hot:
        parse_when(text, now=NOW, tz="UTC")
    if reason is None:
        assert general(text, "UTC") is None
    else:
        with pytest.raises(ParseError) as slow:
            general(text, "UTC")
        assert str(slow.value) == str(hot.value)
        assert reason in hot.value.reason


def test_an_instant_in_the_past_is_refused_by_both_paths_alike() -> None:
    text = "2026-05-10T07:59:59.999999+00:00"
    with pytest.raises(ParseError) as hot:
        parse_when(text, now=NOW, tz="UTC")
    with pytest.raises(ParseError) as slow:
        general(text, "UTC")
    assert str(hot.value) == str(slow.value)
    assert "in the past" in str(hot.value)


@pytest.mark.parametrize(
    ("zulu", "offset"),
    [
        ("2026-06-01T10:00:00Z", "2026-06-01T10:00:00+00:00"),
        ("2026-06-01t10:00:00z", "2026-06-01T10:00:00+00:00"),
        ("2026-06-01 10:00:00.250Z", "2026-06-01T10:00:00.250+00:00"),
        ("2026-06-01T10:00Z", "2026-06-01T10:00+00:00"),
    ],
)
def test_rfc3339_zulu_is_utc_on_every_supported_python(zulu: str, offset: str) -> None:
    """Python 3.10's fromisoformat refuses "Z": the parser reads it as +00:00 there too."""
    for tz in ("UTC", "Europe/Paris"):
        assert parse_when(zulu, now=NOW, tz=tz) == parse_when(offset, now=NOW, tz=tz)


ZONES = st.sampled_from(["UTC", "+00:00", "Europe/London", "Europe/Paris", "Asia/Kolkata"])
INSTANTS = st.datetimes(
    min_value=datetime(2026, 5, 11), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
)
# Both with and without a fraction: isoformat() omits a zero one.
MICROSECONDS = st.one_of(st.just(0), st.integers(0, 999_999))


@st.composite
def writings(draw: st.DrawFn) -> str:
    instant = draw(INSTANTS).replace(microsecond=draw(MICROSECONDS))
    offset = timezone(timedelta(minutes=draw(st.sampled_from([0, 0, 60, -300, 330]))))
    text = instant.astimezone(offset).isoformat()
    return draw(
        st.sampled_from(
            [
                text,
                text.replace("T", " "),
                text.replace("+00:00", "Z"),
                text.replace("+00:00", "-00:00"),
            ]
        )
    )


@settings(max_examples=300, deadline=None)
@given(writings(), ZONES)
def test_any_isoformat_text_reads_as_the_general_path_reads_it(text: str, tz: str) -> None:
    spec = parse_when(text, now=NOW, tz=tz)
    assert spec == general(text, tz)
    assert spec.canonical == expected_canonical(text, tz)
    assert spec.first_fire_time() == datetime.fromisoformat(spec.canonical)
