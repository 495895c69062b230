"""Instants of the API as the magics, widgets and command line read and show them."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from jupyter_recall.kernel.tables import format_instant, parse_instant

UTC = timezone.utc


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-06-01T12:00:00+00:00", datetime(2026, 6, 1, 12, tzinfo=UTC)),
        ("2026-06-01T12:00:00Z", datetime(2026, 6, 1, 12, tzinfo=UTC)),
        (
            "2026-06-01T14:00:00.250000+02:00",
            datetime(2026, 6, 1, 12, 0, 0, 250000, tzinfo=UTC),
        ),
        ("2026-06-01T12:00:00", datetime(2026, 6, 1, 12, tzinfo=UTC)),  # naive: taken as UTC
        ("soon", None),
        ("", None),
        (None, None),
        (1717243200, None),
    ],
)
def test_parse_instant(text: object, expected: datetime | None) -> None:
    parsed = parse_instant(text)
    assert parsed == expected
    if parsed is not None:
        assert parsed.utcoffset() is not None


def test_format_instant_in_utc_in_another_zone_and_for_non_instants() -> None:
    assert format_instant("2026-06-01T14:00:00+02:00") == "2026-06-01 12:00:00 UTC"
    plus_five = timezone(timedelta(hours=5), "PKT")
    assert format_instant("2026-06-01T12:00:00Z", plus_five) == "2026-06-01 17:00:00 PKT"
    assert format_instant("2026-06-01T12:00:00") == "2026-06-01 12:00:00 UTC"
    assert format_instant("not a time") == "not a time"
    assert format_instant(None) == "-"
