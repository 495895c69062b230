"""A trigger for 5-field cron expressions, evaluated on the wall clock of a zone.

croniter walks naive wall times (where it has no DST to get wrong); each wall time is then mapped
to an instant by :func:`wall_to_instant`, which applies the gap and fold rules. Because that
mapping is monotonic, the first wall occurrence whose instant is after ``after`` is the answer;
occurrences that map to the same instant (several wall times inside one DST gap, or a wall time
of the repeated hour) therefore fire once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone, tzinfo
from functools import lru_cache
from typing import Any

from croniter import CroniterBadDateError, croniter

from jupyter_recall.core.triggers.wallclock import instant_to_wall, wall_to_instant
from jupyter_recall.core.tz import resolve_tz

UTC = timezone.utc

# Wall occurrences to examine per call: enough to cross a repeated hour of a per-minute cron.
_MAX_STEPS = 1000
# croniter gives up after this many years without a match (a cron that never fires).
_MAX_YEARS = 30


@dataclass(frozen=True, slots=True)
class CronTrigger:
    """Fires at each wall-clock occurrence of ``expression`` in ``tz``."""

    expression: str
    tz: str
    zone: tzinfo = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "zone", resolve_tz(self.tz))

    def next_after(self, after: datetime) -> datetime | None:
        return _next_after(self.expression, self.tz, after)

    def to_dict(self) -> dict[str, Any]:
        return {"type": "cron", "expression": self.expression, "tz": self.tz}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CronTrigger:
        return cls(str(data["expression"]), str(data["tz"]))


# Pure in its arguments, so cached: creating many jobs with one expression at one instant (bulk
# creation, previews, planning) asks the same question many times, and croniter is slow to build.
@lru_cache(maxsize=4096)
def _next_after(expression: str, tz: str, after: datetime) -> datetime | None:
    zone = resolve_tz(tz)
    # Wall times before the wall time of `after` map to instants <= after (monotonic mapping),
    # so the walk can start there; only a repeated hour needs a few more steps.
    walker = croniter(
        expression,
        instant_to_wall(after, zone),
        ret_type=datetime,
        day_or=True,
        max_years_between_matches=_MAX_YEARS,
    )
    for _ in range(_MAX_STEPS):
        try:
            wall = walker.get_next(datetime)
        except CroniterBadDateError:
            return None
        instant = wall_to_instant(wall, zone)
        if instant > after:
            return instant
    # Unreachable: a repeated hour holds far fewer wall occurrences than _MAX_STEPS.
    raise RuntimeError(f"cron {expression!r} found no occurrence in {_MAX_STEPS} steps")
