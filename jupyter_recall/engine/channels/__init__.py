"""Notification channels by type, built from the server's ``notification_channels`` config.

``{"ops": {"type": "webhook", "url": "..."}, "mail": {"type": "email", ...},
"audit": {"type": "log"}}``: each entry is validated here, naming the channel and the setting
at fault. ``session`` and ``ui`` always exist (a config entry of the same name replaces them),
and ``llm_notification`` is another name of ``session`` (the default channel's name in the
agent tools of the schedulers jupyter_recall follows).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.engine.channels.email import EmailChannel
from jupyter_recall.engine.channels.log import LogChannel
from jupyter_recall.engine.channels.session import SessionChannel, UIChannel
from jupyter_recall.engine.channels.webhook import WebhookChannel
from jupyter_recall.engine.notify import SESSION, UI, Channel, SessionSink

__all__ = [
    "CHANNEL_TYPES",
    "EmailChannel",
    "LogChannel",
    "SessionChannel",
    "UIChannel",
    "WebhookChannel",
    "build_channels",
]

Factory = Callable[[str, Mapping[str, Any], SessionSink], Channel]

_FACTORIES: dict[str, Factory] = {
    "log": lambda name, config, sink: LogChannel.from_config(name, config),
    "webhook": lambda name, config, sink: WebhookChannel.from_config(name, config),
    "email": lambda name, config, sink: EmailChannel.from_config(name, config),
    SESSION: SessionChannel.from_config,
    UI: UIChannel.from_config,
}
CHANNEL_TYPES = tuple(_FACTORIES)
LLM_NOTIFICATION = "llm_notification"


def build_channels(config: Mapping[str, Any], sink: SessionSink) -> dict[str, Channel]:
    """Every configured channel, plus ``session`` and ``ui`` unless configured otherwise."""
    if not isinstance(config, Mapping):
        raise ValidationError(
            "notification_channels", f"must be an object, got {type(config).__name__}"
        )
    channels: dict[str, Channel] = {
        SESSION: SessionChannel(SESSION, sink),
        UI: UIChannel(UI, sink),
        LLM_NOTIFICATION: SessionChannel(LLM_NOTIFICATION, sink),
    }
    for name, entry in config.items():
        field = f"notification_channels.{name}"
        if not isinstance(name, str) or not name.strip():
            raise ValidationError(field, "a channel name must be a non-empty string")
        if not isinstance(entry, Mapping):
            raise ValidationError(field, f"must be an object, got {type(entry).__name__}")
        kind = entry.get("type")
        factory = _FACTORIES.get(kind) if isinstance(kind, str) else None
        if factory is None:
            raise ValidationError(
                f"{field}.type", f"unknown channel type {kind!r}", accepted=CHANNEL_TYPES
            )
        channels[name] = factory(name, entry, sink)
    return channels
