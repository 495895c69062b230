"""A trigger for 5-field cron expressions, evaluated on the wall clock of a zone.

``core.cron`` walks naive wall times (where there is no DST to get wrong); each wall time is then
mapped to an instant by :func:`wall_to_instant`, which applies the gap and fold rules. Because
that mapping is monotonic, the first wall occurrence whose instant is after ``after`` is the
answer; occurrences that map to the same instant (several wall times inside one DST gap, or a
wall time of the repeated hour) therefore fire once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone, tzinfo

from jupyter_recall.core.cron import Cron, parse_cron
from jupyter_recall.core.triggers.base import CronJSON
from jupyter_recall.core.triggers.wallclock import instant_to_wall, wall_to_instant
from jupyter_recall.core.tz import resolve_tz

UTC = timezone.utc

# Wall occurrences to examine per call: enough to cross a repeated hour of a per-minute cron.
_MAX_STEPS = 1000


@dataclass(frozen=True, slots=True)
class CronTrigger:
    """Fires at each wall-clock occurrence of ``expression`` in ``tz``."""

    expression: str
    tz: str
    zone: tzinfo = field(init=False, compare=False, repr=False)
    cron: Cron = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "zone", resolve_tz(self.tz))
        object.__setattr__(self, "cron", parse_cron(self.expression))

    def next_after(self, after: datetime) -> datetime | None:
        return next_cron_after(self.cron, self.zone, after)

    def to_dict(self) -> CronJSON:
        return {"type": "cron", "expression": self.expression, "tz": self.tz}

    @classmethod
    def from_dict(cls, data: CronJSON) -> CronTrigger:
        return cls(str(data["expression"]), str(data["tz"]))


def next_cron_after(cron: Cron, zone: tzinfo, after: datetime) -> datetime | None:
    """The first instant (aware UTC) strictly after ``after`` at which ``cron`` fires in ``zone``.

    Pure: ``after`` is explicit, and so is the zone."""
    # Wall times up to the wall time of `after` map to instants <= after (monotonic mapping),
    # so the walk can start there; only a repeated hour needs a few more steps.
    wall: datetime | None = instant_to_wall(after, zone)
    for _ in range(_MAX_STEPS):
        assert wall is not None
        wall = cron.next_wall_after(wall)
        if wall is None:
            return None
        instant = wall_to_instant(wall, zone)
        if instant > after:
            return instant
    # Unreachable: a repeated hour holds far fewer wall occurrences than _MAX_STEPS.
    raise RuntimeError(f"cron {cron!r} found no occurrence in {_MAX_STEPS} steps")
