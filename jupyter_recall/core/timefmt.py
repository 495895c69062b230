"""How every surface shows an instant: in the user's zone, with a hint relative to now.

``2026-11-25 09:00 CET (in 16 h)``, or ``14:03:05 CET (in 29 min)`` on the day of ``now``, or
``3 h ago`` after. The magics' tables, the cards, the ``%jobs`` panel and the ``jupyter recall``
command all use ``format_time``; the JupyterLab sidebar follows the same rule in TypeScript.
Pure: ``now`` and the zone are arguments (``zone=None`` is this machine's zone, the user's when
the kernel or the command runs on their machine).
"""

from __future__ import annotations

from datetime import datetime, timezone, tzinfo

MINUTE = 60
HOUR = 3600
DAY = 86400


def parse_instant(value: object) -> datetime | None:
    """An ISO instant of the API as an aware datetime (the API sends aware instants only; a
    naive one is taken as UTC); None when ``value`` is not an instant."""
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)
    if not isinstance(value, str) or not value:
        return None
    try:
        instant = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return instant if instant.tzinfo is not None else instant.replace(tzinfo=timezone.utc)


def _span(seconds: int) -> str:
    """``12 s``, ``29 min``, ``2 h 05 min``, ``16 h``, ``3 d``: the larger units, truncated."""
    if seconds < MINUTE:
        return f"{seconds} s"
    if seconds < HOUR:
        return f"{seconds // MINUTE} min"
    hours, minutes = divmod(seconds // MINUTE, 60)
    if seconds < 10 * HOUR and minutes:
        return f"{hours} h {minutes:02d} min"
    if seconds < 2 * DAY:
        return f"{hours} h"
    return f"{seconds // DAY} d"


def relative(instant: datetime, now: datetime) -> str:
    """``in 29 min``, ``3 h ago``, ``now`` (within a second)."""
    seconds = (instant - now).total_seconds()
    whole = int(abs(seconds))
    if whole < 1:
        return "now"
    return f"in {_span(whole)}" if seconds > 0 else f"{_span(whole)} ago"


def absolute(instant: datetime, now: datetime, zone: tzinfo | None = None) -> str:
    """``14:03:05 CET`` on the day of ``now`` (in ``zone``), else ``2026-11-25 09:00 CET``."""
    local = instant.astimezone(zone)
    name = local.tzname() or ""
    if local.date() == now.astimezone(zone).date():
        return f"{local:%H:%M:%S} {name}".rstrip()
    return f"{local:%Y-%m-%d %H:%M} {name}".rstrip()


def format_time(
    value: object, now: datetime, zone: tzinfo | None = None, *, hint: bool = True
) -> str:
    """An instant (ISO text or datetime) as every surface shows it; ``-`` when there is none.

    ``hint=False`` leaves the relative part out: for live widgets, where a printed ``in 5 min``
    would go stale (they show a ticking countdown instead)."""
    instant = parse_instant(value)
    if instant is None:
        return value if isinstance(value, str) and value else "-"
    text = absolute(instant, now, zone)
    return f"{text} ({relative(instant, now)})" if hint else text
