"""JSON documents that several layers pass along as they are: a notification as the engine
sends it, the stores hold it for an absent session and the server streams it
(``Notification`` in ``server/openapi.yaml``).

A notification's structured data and its channel's settings are free-form: what the sender
attached, and what each channel checks for itself.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict


class NotificationSource(TypedDict, total=False):
    """Who sent a notification: ``{"kind": "api"}``, ``{"kind": "watcher", "job_id",
    "run_id"}``, ``{"kind": "job", "job_id"[, "run_id"]}``."""

    kind: str
    job_id: str
    run_id: str


class NotificationJSON(TypedDict):
    id: str
    owner: str
    channel: str
    message: str
    title: str
    priority: str
    tags: list[str]
    structured_data: dict[str, Any]
    output_config: dict[str, Any]
    session: str | None
    source: NotificationSource
    fallback_reason: str | None
    created_at: str
    delivered_to: NotRequired[str]
    """Where it went: set once delivered (``session`` or ``ui``), and so when held."""
    buffered: NotRequired[bool]
    """On the UI's copy of a notification held for its absent session."""
