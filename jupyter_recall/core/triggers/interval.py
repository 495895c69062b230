"""A trigger that fires every fixed elapsed duration, anchored at an instant.

Occurrences are ``anchor + k * every`` for k >= 1, computed arithmetically so that the schedule
follows absolute time: no drift, DST is irrelevant, and ``next_after`` is O(1).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from jupyter_recall.core.triggers.base import IntervalJSON

UTC = timezone.utc


@dataclass(frozen=True, slots=True)
class IntervalTrigger:
    """Fires at ``anchor + k * seconds`` for every k >= 1."""

    anchor: datetime
    seconds: int

    def __post_init__(self) -> None:
        if self.seconds <= 0:
            raise ValueError(f"interval seconds must be positive, got {self.seconds}")

    @property
    def every(self) -> timedelta:
        return timedelta(seconds=self.seconds)

    def next_after(self, after: datetime) -> datetime | None:
        step = self.every
        elapsed = after - self.anchor
        k = 1 if elapsed < step else elapsed // step + 1
        try:
            return self.anchor + k * step
        except OverflowError:
            # Past the last instant Python can hold (year 9999): the schedule has ended.
            return None

    def to_dict(self) -> IntervalJSON:
        return {"type": "interval", "anchor": self.anchor.isoformat(), "seconds": self.seconds}

    @classmethod
    def from_dict(cls, data: IntervalJSON) -> IntervalTrigger:
        anchor = datetime.fromisoformat(data["anchor"]).astimezone(UTC)
        return cls(anchor, int(data["seconds"]))
