"""Digits of other scripts read as their ASCII digits wherever a time or a duration is read: an
input method writes fullwidth digits, an Arabic keyboard Arabic-Indic ones. The natural rules
took them already (their ``\\d`` does); cron fields and ISO dates refused them, each with its own
misleading reason. Superscripts and other digits that are not decimal stay refused."""

from __future__ import annotations

import pytest

from jupyter_recall.core.errors import ParseError, ValidationError
from jupyter_recall.core.lifecycle import parse_keep_for
from jupyter_recall.core.when import parse_when
from tests.core.test_when import NOW, PARIS

ARABIC_INDIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")
FULLWIDTH = str.maketrans("0123456789", "０１２３４５６７８９")
DEVANAGARI = str.maketrans("0123456789", "०१२३४५६७८९")

TEXTS = [
    "in 30 minutes",
    "at 10:30",
    "every 15 minutes",
    "*/15 9-17 * * 1-5",
    "0 9 1 * *",
    "2026-06-01T12:00:00+02:00",
    "2026-06-01 12:00",
    "on the 15th of every month at 9:00",
    "tous les jours à 9h30",
    "tomorrow at 9:00 +02:00",
]


@pytest.mark.parametrize("script", [ARABIC_INDIC, FULLWIDTH, DEVANAGARI])
@pytest.mark.parametrize("text", TEXTS)
def test_a_time_written_in_another_scripts_digits_reads_as_in_ascii(
    text: str, script: dict[int, int]
) -> None:
    written = text.translate(script)
    assert written != text
    assert parse_when(written, now=NOW, tz=PARIS) == parse_when(text, now=NOW, tz=PARIS)


@pytest.mark.parametrize("text", ["in ³ minutes", "every ² hours", "0 ⁹ * * *", "in ½ hour"])
def test_digits_that_are_not_decimal_are_refused(text: str) -> None:
    with pytest.raises(ParseError, match="cannot parse"):
        parse_when(text, now=NOW, tz=PARIS)


@pytest.mark.parametrize(
    ("written", "seconds"), [("٧d", 604800.0), ("１h３０", 5400.0), ("٣٦٠٠", 3600.0)]
)
def test_a_duration_written_in_another_scripts_digits_reads_as_in_ascii(
    written: str, seconds: float
) -> None:
    assert parse_keep_for(written) == seconds


def test_a_superscript_duration_is_refused_naming_the_field() -> None:
    with pytest.raises(ValidationError, match=r"keep_runs_for.*not a duration"):
        parse_keep_for("³d")
