"""JSON documents that several layers pass along as they are: a notification as the engine
sends it, the stores hold it for an absent session and the server streams it
(``Notification`` in ``server/openapi.yaml``).

A notification's structured data is free-form: what the sender attached. Its channel's
settings (``output_config``) name the keys the channels read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict, cast


class OutputConfigJSON(TypedDict, total=False):
    """A delivery's settings for its channel (``output_config``). Only the ``email`` channel
    reads any: ``to_address`` or else ``to``, an address or a list of them, which it checks
    when it sends (``engine/channels/email.py``). Keys no channel reads are kept as given and
    ignored, as they always were."""

    to_address: str | list[str]
    to: str | list[str]


def output_config_of(config: Mapping[str, Any]) -> OutputConfigJSON:
    """A JSON object already checked to be one as ``output_config``: its values are checked by
    the channel that reads them, when it sends, so that an unsendable one is named there."""
    return cast(OutputConfigJSON, dict(config))


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
    output_config: OutputConfigJSON
    session: str | None
    source: NotificationSource
    fallback_reason: str | None
    created_at: str
    delivered_to: NotRequired[str]
    """Where it went: set once delivered (``session`` or ``ui``), and so when held."""
    buffered: NotRequired[bool]
    """On the UI's copy of a notification held for its absent session."""
