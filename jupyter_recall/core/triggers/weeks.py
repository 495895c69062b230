"""A trigger for "every N weeks on <days> at <time>", on the wall clock of a zone.

Weeks run Monday to Sunday. The trigger fires on the given days of the weeks ``start``,
``start + N weeks``, ``start + 2N weeks``... (``start`` is a Monday), at the wall time
``hour:minute`` mapped to an instant by :func:`wall_to_instant` (the DST rules of every wall-clock
schedule).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone, tzinfo

from jupyter_recall.core.triggers.base import WeeksJSON
from jupyter_recall.core.triggers.wallclock import instant_to_wall, wall_to_instant
from jupyter_recall.core.tz import resolve_tz

UTC = timezone.utc


def monday_of(day: date) -> date:
    return day - timedelta(days=day.weekday())


@dataclass(frozen=True, slots=True)
class WeeksTrigger:
    """Fires every ``weeks`` weeks from the week of ``start``, on ``days`` (0 = Monday)."""

    weeks: int
    days: tuple[int, ...]
    hour: int
    minute: int
    start: date
    tz: str
    zone: tzinfo = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        valid_days = bool(self.days) and all(0 <= day <= 6 for day in self.days)
        if self.weeks < 1 or not valid_days or self.start.weekday() != 0:
            raise ValueError(f"not a valid weeks trigger: {self!r}")
        time(self.hour, self.minute)  # ValueError for an hour or minute out of range
        object.__setattr__(self, "days", tuple(sorted(set(self.days))))
        object.__setattr__(self, "zone", resolve_tz(self.tz))

    def next_after(self, after: datetime) -> datetime | None:
        wall_day = instant_to_wall(after, self.zone).date()
        elapsed = max(0, (monday_of(wall_day) - self.start).days // 7)
        week = self.start + timedelta(weeks=elapsed - elapsed % self.weeks)
        at = time(self.hour, self.minute)
        try:
            # Three periods are plenty: after the first, only a DST fold can hold `after` back.
            for _ in range(3):
                for day in self.days:
                    wall = datetime.combine(week + timedelta(days=day), at)
                    instant = wall_to_instant(wall, self.zone)
                    if instant > after:
                        return instant
                week += timedelta(weeks=self.weeks)
        except OverflowError:
            return None
        return None

    def to_dict(self) -> WeeksJSON:
        return {
            "type": "weeks",
            "weeks": self.weeks,
            "days": list(self.days),
            "hour": self.hour,
            "minute": self.minute,
            "start": self.start.isoformat(),
            "tz": self.tz,
        }

    @classmethod
    def from_dict(cls, data: WeeksJSON) -> WeeksTrigger:
        return cls(
            weeks=int(data["weeks"]),
            days=tuple(int(day) for day in data["days"]),
            hour=int(data["hour"]),
            minute=int(data["minute"]),
            start=date.fromisoformat(data["start"]),
            tz=str(data["tz"]),
        )
