"""The server's local IANA time zone name, the default zone of new schedules."""

from __future__ import annotations

import os
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


def _valid(name: str) -> bool:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True


def local_zone_name() -> str:
    """Best effort: $TZ, /etc/timezone, the /etc/localtime link; UTC when nothing is known."""
    candidates = [os.environ.get("TZ", "").lstrip(":")]
    timezone_file = Path("/etc/timezone")
    if timezone_file.is_file():
        candidates.append(timezone_file.read_text(encoding="utf-8").strip())
    localtime = Path("/etc/localtime")
    if localtime.is_symlink():
        target = str(localtime.resolve())
        if "zoneinfo/" in target:
            candidates.append(target.split("zoneinfo/", 1)[1])
    for name in candidates:
        if name and _valid(name):
            return name
    return "UTC"
