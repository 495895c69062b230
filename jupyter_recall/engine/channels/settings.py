"""Checks of channel settings, naming ``notification_channels.<name>.<setting>``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from jupyter_recall.core.errors import ValidationError

ChannelSettingsJSON = TypedDict(
    "ChannelSettingsJSON",
    {
        "type": str,
        "logger": str,
        "level": str,
        "format": str,
        "url": str,
        "headers": dict[str, str],
        "timeout": float,
        "host": str,
        "port": int,
        "from": str,
        "to": str | list[str],
        "username": str,
        "password": str,
        "starttls": bool,
        "ssl": bool,
    },
    total=False,
)
"""One channel of ``notification_channels``: its ``type`` and the settings of that type
(``log``: logger, level, format; ``webhook``: url, headers, timeout; ``email``: host, port,
from, to, username, password, starttls, ssl, timeout; ``session``/``ui``: none). Each
channel's ``from_config`` refuses a setting its type does not take."""


def check_keys(name: str, config: Mapping[str, Any], allowed: Sequence[str]) -> None:
    known = ("type", *allowed)
    unknown = sorted(set(config) - set(known))
    if unknown:
        raise ValidationError(
            f"notification_channels.{name}.{unknown[0]}", "unknown setting", accepted=known
        )


def text(name: str, config: Mapping[str, Any], key: str, default: str | None = None) -> str:
    value = config.get(key, default)
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(
            f"notification_channels.{name}.{key}", f"must be a non-empty string, got {value!r}"
        )
    return value


def optional_text(name: str, config: Mapping[str, Any], key: str) -> str | None:
    if config.get(key) is None:
        return None
    return text(name, config, key)


def seconds(name: str, config: Mapping[str, Any], key: str, default: float) -> float:
    value = config.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 300:
        raise ValidationError(
            f"notification_channels.{name}.{key}",
            f"must be a number of seconds in (0, 300], got {value!r}",
        )
    return float(value)


def count(name: str, config: Mapping[str, Any], key: str, default: int, maximum: int) -> int:
    value = config.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= maximum:
        raise ValidationError(
            f"notification_channels.{name}.{key}",
            f"must be a whole number from 0 to {maximum}, got {value!r}",
        )
    return value


def flag(name: str, config: Mapping[str, Any], key: str) -> bool:
    value = config.get(key, False)
    if not isinstance(value, bool):
        raise ValidationError(
            f"notification_channels.{name}.{key}", f"must be true or false, got {value!r}"
        )
    return value


def choice(
    name: str, config: Mapping[str, Any], key: str, accepted: Sequence[str], default: str
) -> str:
    value = config.get(key, default)
    if value not in accepted:
        raise ValidationError(
            f"notification_channels.{name}.{key}", f"unknown value {value!r}", accepted=accepted
        )
    return str(value)


def string_map(name: str, config: Mapping[str, Any], key: str) -> dict[str, str]:
    value = config.get(key) or {}
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ValidationError(f"notification_channels.{name}.{key}", "must be an object of strings")
    return dict(value)
