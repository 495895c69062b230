"""Checks of the options the server (``RecallApp``) and the standalone scheduler
(``RecallScheduler``) share: each names the application and the option it refuses."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from traitlets import TraitError

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.lifecycle import parse_keep_for, parse_keep_runs
from jupyter_recall.core.limits import MAX_SECONDS
from jupyter_recall.core.tz import resolve_tz
from jupyter_recall.engine.channels.settings import ChannelSettingsJSON
from jupyter_recall.server.notifications import check_channels
from jupyter_recall.store.urls import store_kind
from jupyter_recall.tools.policy import POLICIES, check_key


def checked_db_url(app: str, value: object) -> str:
    url = str(value)
    try:
        store_kind(url)
    except ValidationError as error:
        raise TraitError(f"{app}.{error}") from None
    return url


def checked_timezone(app: str, value: object) -> str:
    zone = str(value)
    try:
        resolve_tz(zone)
    except ValidationError as error:
        raise TraitError(f"{app}.default_timezone: {error}") from None
    return zone


def checked_count(app: str, name: str, value: object) -> int:
    """A count of at least one (runs, characters)."""
    count = int(str(value))
    if count < 1:
        raise TraitError(f"{app}.{name} must be >= 1, got {count}")
    return count


def checked_timeout(app: str, value: float | None) -> float | None:
    """``default_timeout``: seconds above 0 and at most ``MAX_SECONDS``, or None (no limit)."""
    if value is not None and not 0 < value <= MAX_SECONDS:
        raise TraitError(
            f"{app}.default_timeout must be above 0 and at most {MAX_SECONDS:,} seconds, "
            f"or None; got {value}"
        )
    return None if value is None else float(value)


def checked_retention(app: str, name: str, value: object) -> float | None:
    """``keep_runs`` (a count from 0) or ``keep_runs_for`` (seconds, or a duration's text
    such as ``7d``), or None (no bound); the error names the application and the option."""
    parse = parse_keep_runs if name == "keep_runs" else parse_keep_for
    try:
        return parse(value, f"{app}.{name}")
    except ValidationError as error:
        raise TraitError(str(error)) from None


def checked_channels(app: str, value: Mapping[str, object]) -> dict[str, ChannelSettingsJSON]:
    channels = dict(value)
    try:
        check_channels(channels)
    except ValidationError as error:
        raise TraitError(f"{app}.{error}") from None
    # Checked: each channel is an object holding its type's settings only.
    return cast(dict[str, ChannelSettingsJSON], channels)


def checked_tool_policies(app: str, value: Any) -> dict[str, str]:
    """``{app}.tool_policies`` checked: the standalone scheduler refuses what the server does."""
    policies = dict(value)
    for name, policy in policies.items():
        try:
            check_key(name, "tool_policies")
        except ValidationError as error:
            raise TraitError(f"{app}.tool_policies: {error}") from None
        if policy not in POLICIES:
            raise TraitError(
                f"{app}.tool_policies[{name!r}]: unknown policy {policy!r} "
                f"(accepted: {', '.join(POLICIES)})"
            )
    return policies
