"""Pause after failures and retention of runs: the values of their policies and the pure
decisions on them (``policies.pause_after_failures``, ``policies.keep_runs``,
``policies.keep_runs_for``; ``docs/engine.md``, "Pause after failures" and "Retention").

Nothing here reads a clock or a store: the engine passes ``now`` and what it read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.limits import MAX_KEEP_RUNS, MAX_PAUSE_AFTER_FAILURES, MAX_SECONDS
from jupyter_recall.core.when_words import DURATION, ascii_digits, read_duration

if TYPE_CHECKING:
    from jupyter_recall.core.model import RunStatus

_DURATION_RE = re.compile(rf"\s*(?:{DURATION})\s*", re.IGNORECASE)
_NUMBER_RE = re.compile(r"\s*[0-9]+(?:\.[0-9]+)?\s*")
DURATION_FORMS = ("a number of seconds", "'90s'", "'30m'", "'12h'", "'7d'", "'2 weeks'", "'1h30'")


def parse_count(value: object, field: str, low: int, high: int) -> int | None:
    """An optional whole number from ``low`` to ``high`` (None stays None)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(field, f"must be an integer from {low:,} to {high:,}, got {value!r}")
    if not low <= value <= high:
        raise ValidationError(field, f"must be from {low:,} to {high:,}, got {value!r}")
    return value


def parse_pause_after(value: object, field: str = "pause_after_failures") -> int | None:
    return parse_count(value, field, 1, MAX_PAUSE_AFTER_FAILURES)


def parse_keep_runs(value: object, field: str = "keep_runs") -> int | None:
    return parse_count(value, field, 0, MAX_KEEP_RUNS)


def parse_keep_for(value: object, field: str = "keep_runs_for") -> float | None:
    """Seconds: a number, or a duration as time expressions write it (``7d``, ``12 hours``,
    ``1h30``). Months and years are refused: their length in seconds depends on the date."""
    if value is None:
        return None
    seconds = _seconds(value, field)
    if not 0 < seconds <= MAX_SECONDS:
        raise ValidationError(
            field, f"must be above 0 and at most {MAX_SECONDS:,} seconds, got {value!r}"
        )
    return seconds


def _seconds(value: object, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValidationError(
            field, f"must be a duration, got {value!r}", accepted=list(DURATION_FORMS)
        )
    if not isinstance(value, str):
        return float(value)
    value = ascii_digits(value)
    if _NUMBER_RE.fullmatch(value):  # "3600" from a flag or a form: seconds
        return float(value)
    if not _DURATION_RE.fullmatch(value.lower()):
        raise ValidationError(field, f"not a duration: {value!r}", accepted=list(DURATION_FORMS))
    duration = read_duration(value.lower())
    if duration.months:
        raise ValidationError(
            field,
            f"months and years have no fixed length: {value!r}; write days or weeks",
            accepted=list(DURATION_FORMS),
        )
    return float(duration.seconds)


# --- pause after failures -----------------------------------------------------------------


def streak_after(streak: int, status: RunStatus) -> int:
    """The count of consecutive failed occurrences once an occurrence ended with ``status``:
    ``failed`` and ``timed_out`` add one, ``succeeded`` resets it, and the outcomes that say
    nothing of the job's health (interrupted by the engine, stopped by a person, skipped,
    missed) leave it as it was."""
    if status.value in ("failed", "timed_out"):
        return streak + 1
    if status.value == "succeeded":
        return 0
    return streak


def pause_reason(streak: int, last_error: str | None) -> str:
    """What a job paused for its failures says, with the last error (first line, bounded)."""
    reason = f"paused after {streak} consecutive failed occurrences"
    if last_error:
        first = last_error.strip().splitlines()[0] if last_error.strip() else ""
        if first:
            reason += f"; last error: {first[:300]}"
    return reason


# --- retention ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Retention:
    """How many runs of a job are kept and for how long; None: no bound of that kind."""

    keep_runs: int | None = None
    keep_runs_for: float | None = None

    @property
    def bounded(self) -> bool:
        return self.keep_runs is not None or self.keep_runs_for is not None

    def over(self, defaults: Retention) -> Retention:
        """This job's retention, each bound it leaves unset taken from ``defaults``."""
        return Retention(
            self.keep_runs if self.keep_runs is not None else defaults.keep_runs,
            self.keep_runs_for if self.keep_runs_for is not None else defaults.keep_runs_for,
        )

    def cutoff(self, now: datetime) -> datetime | None:
        """Runs that finished before this instant are past their time."""
        if self.keep_runs_for is None:
            return None
        return now - timedelta(seconds=self.keep_runs_for)
