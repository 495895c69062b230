"""``send_notification``: a notification from this kernel through a channel of the server.

Below the watchers and the tool calls, which both send (a background task's end is told to the
UI): the one POST to ``/api/recall/notifications``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from jupyter_recall.client.documents import DeliveryDocument, NewNotificationDocument
from jupyter_recall.core.documents import output_config_of
from jupyter_recall.kernel.connection import client as _client

__all__ = ["send_notification"]


def send_notification(
    channel: str | None,
    message: str,
    title: str = "",
    priority: str = "normal",
    *,
    tags: Sequence[str] | None = None,
    structured_data: Mapping[str, Any] | None = None,
    output_config: Mapping[str, Any] | None = None,
) -> DeliveryDocument:
    """Send ``message`` through a channel of the server's config (``None``: this session's
    notification queue). An unknown or failing channel falls back to this session, with the
    reason in the answer: ``{"notification", "delivered_to", "fallback_reason", "buffered"}``."""
    body: NewNotificationDocument = {
        "message": message,
        "title": title,
        "priority": priority,
        "tags": list(tags or []),
        "structured_data": dict(structured_data or {}),
        "output_config": output_config_of(output_config or {}),
    }
    if channel is not None:
        body["channel"] = channel
    session = _client.identity().session
    if session is not None:
        body["session"] = session
    delivery: DeliveryDocument = _client.get_client().request(
        "POST", "/api/recall/notifications", body=body
    )
    return delivery
