"""The ``session`` and ``ui`` channels: handed to the host (the server's event stream)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jupyter_recall.engine.channels import settings
from jupyter_recall.engine.notify import SESSION, UI, Notification, SessionSink


class SessionChannel:
    """The notebook session's kernel (its notification queue); buffered while it is away.
    The Notifier asks the sink itself, to learn whether the notification was buffered."""

    type = SESSION

    def __init__(self, name: str, sink: SessionSink) -> None:
        self.name = name
        self.sink = sink

    @classmethod
    def from_config(cls, name: str, config: Mapping[str, Any], sink: SessionSink) -> SessionChannel:
        settings.check_keys(name, config, ())
        return cls(name, sink)

    async def send(self, notification: Notification) -> None:
        await self.sink.to_session(notification)


class UIChannel:
    """The user's JupyterLab: an event on the stream (shown as a toast)."""

    type = UI

    def __init__(self, name: str, sink: SessionSink) -> None:
        self.name = name
        self.sink = sink

    @classmethod
    def from_config(cls, name: str, config: Mapping[str, Any], sink: SessionSink) -> UIChannel:
        settings.check_keys(name, config, ())
        return cls(name, sink)

    async def send(self, notification: Notification) -> None:
        await self.sink.to_ui(notification)
