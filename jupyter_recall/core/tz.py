"""Time zones as users write them: an IANA name (``Europe/Paris``) or a UTC offset (``+05:30``)."""

from __future__ import annotations

import difflib
import re
import zoneinfo
from datetime import timedelta, timezone, tzinfo
from functools import lru_cache

from jupyter_recall.core.errors import ValidationError

ACCEPTED_TZ_FORMS = (
    "an IANA zone name such as 'Europe/Paris', 'America/New_York' or 'UTC'",
    "a fixed UTC offset '+HH:MM' or '-HH:MM' (also '+HHMM', '+HH')",
)

_OFFSET = re.compile(r"([+-])(\d{2}):?(\d{2})?")
_UTC_NAMES = frozenset({"utc", "z", "gmt", "etc/utc"})


def _bad_tz(text: object, why: str) -> ValidationError:
    return ValidationError("tz", f"{why}: {text!r}", accepted=ACCEPTED_TZ_FORMS)


@lru_cache(maxsize=512)
def _resolve(text: str) -> tuple[str, tzinfo]:
    stripped = text.strip()
    if stripped.lower() in _UTC_NAMES:
        return "UTC", timezone.utc
    offset = _OFFSET.fullmatch(stripped)
    if offset:
        return _fixed_offset(stripped, *offset.groups())
    return _iana(stripped)


def _fixed_offset(text: str, sign: str, hours: str, minutes: str | None) -> tuple[str, tzinfo]:
    hh, mm = int(hours), int(minutes or 0)
    if hh > 23 or mm > 59:
        raise _bad_tz(text, "offset out of range")
    delta = timedelta(hours=hh, minutes=mm)
    return f"{sign}{hh:02d}:{mm:02d}", timezone(-delta if sign == "-" else delta)


def _iana(text: str) -> tuple[str, tzinfo]:
    # Only names from the zone database: no paths, no directories, and no host-dependent aliases.
    # The lookup ignores case: zone files are case-sensitive, users type "europe/paris" too.
    name = _zone_names_by_folded_case().get(text.lower())
    if name is None:
        raise _bad_tz(text, "unknown time zone")
    zone = zoneinfo.ZoneInfo(name)
    return zone.key, zone


_HOST_ALIASES = frozenset({"localtime", "posixrules"})


@lru_cache(maxsize=1)
def _zone_names_by_folded_case() -> dict[str, str]:
    names = zoneinfo.available_timezones() - _HOST_ALIASES
    return {name.lower(): name for name in names}


_NEAR = 0.8
"""How alike a name must be to a zone's (difflib ratio) to be offered: 'Europe/Pari' is 0.96 of
'Europe/Paris'."""


def nearest_zone(text: str) -> str | None:
    """The zone name nearest to ``text`` (``Europe/Pari``: ``Europe/Paris``), or None if none
    is near."""
    names = _zone_names_by_folded_case()
    close = difflib.get_close_matches(text.lower(), names, n=1, cutoff=_NEAR)
    return names[close[0]] if close else None


def resolve_tz(text: str) -> tzinfo:
    """The tzinfo for a zone text: a ZoneInfo for IANA names, a fixed ``timezone`` for offsets.

    Raises ValidationError("tz", ...) listing the accepted forms. Lookups are cached.
    """
    if not isinstance(text, str):
        raise _bad_tz(text, "time zone must be a string")
    return _resolve(text)[1]


def lookup_tz(text: str) -> tuple[str, tzinfo]:
    """Both at once, for hot paths: ``(normalize_tz(text), resolve_tz(text))``."""
    if not isinstance(text, str):
        raise _bad_tz(text, "time zone must be a string")
    return _resolve(text)


@lru_cache(maxsize=512)
def is_zone(text: str) -> bool:
    """Whether ``lookup_tz`` takes ``text``; remembered, failures too (a phrase's last word is
    tried as a zone, and ``lookup_tz`` remembers only the zones it finds)."""
    try:
        _resolve(text)
    except ValidationError:
        return False
    return True


def normalize_tz(text: str) -> str:
    """The canonical spelling of a zone text: the IANA key, ``UTC`` or ``±HH:MM``."""
    if not isinstance(text, str):
        raise _bad_tz(text, "time zone must be a string")
    return _resolve(text)[0]


def is_fixed_offset(zone: tzinfo) -> bool:
    """True when the zone has no DST or history: every wall time maps to exactly one instant."""
    return isinstance(zone, timezone)
