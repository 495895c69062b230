"""Mapping wall-clock times in a zone to instants, with the DST rules of the design.

- A wall time skipped by a spring-forward jump fires at the first instant after the jump
  (the transition instant itself, whose wall time is the end of the gap).
- A wall time that happens twice (fall back) fires once: at its first occurrence (``fold=0``).

With these rules the mapping is monotonic (non-decreasing) in the wall time, which is what lets
triggers walk wall-clock occurrences in order and compare the instants with ``after``.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone, tzinfo

UTC = timezone.utc
_RESOLUTION = timedelta(seconds=1)


def wall_to_instant(wall: datetime, zone: tzinfo) -> datetime:
    """The aware UTC instant at which the naive wall time ``wall`` in ``zone`` fires."""
    return local_instant(wall, zone).astimezone(UTC)


def local_instant(wall: datetime, zone: tzinfo) -> datetime:
    """Like :func:`wall_to_instant` but expressed in ``zone`` (for display and canonical text)."""
    local = wall.replace(tzinfo=zone, fold=0)
    offset = local.utcoffset()
    if isinstance(zone, timezone) or offset == wall.replace(tzinfo=zone, fold=1).utcoffset():
        return local  # the usual case: one offset, so the wall time exists exactly once
    naive = local.replace(tzinfo=None)
    if local.astimezone(UTC).astimezone(zone).replace(tzinfo=None) == naive:
        return local  # a repeated wall time: fold=0 is its first occurrence
    return _end_of_gap(naive, zone).astimezone(zone)


def _end_of_gap(naive: datetime, zone: tzinfo) -> datetime:
    """The transition instant of the gap that swallowed ``naive``.

    zoneinfo maps a nonexistent time with fold=1 using the offset after the jump and with fold=0
    using the offset before it, so the transition lies between those two instants.
    """
    low = naive.replace(tzinfo=zone, fold=1).astimezone(UTC)
    high = naive.replace(tzinfo=zone, fold=0).astimezone(UTC)
    if low > high:
        low, high = high, low
    before = low.astimezone(zone).utcoffset()
    # Invariant: offset(low) == before, offset(high) != before.
    while high - low > _RESOLUTION:
        middle = low + (high - low) / 2
        middle = middle.replace(microsecond=0)
        if middle <= low:
            break
        if middle.astimezone(zone).utcoffset() == before:
            low = middle
        else:
            high = middle
    return high


def instant_to_wall(instant: datetime, zone: tzinfo) -> datetime:
    """The naive wall time in ``zone`` at an aware instant."""
    return instant.astimezone(zone).replace(tzinfo=None, fold=0)
