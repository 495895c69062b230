"""Notifications and their fan-out to named channels.

A ``Notification`` is validated once (``build_notification``) whatever sends it: the REST route,
the kernel's ``send_notification``, a watcher, a job's ``output_channel``. The ``Notifier``
hands it to the channel it names (``engine/channels/``: log, webhook, email, session, ui). An
unknown channel, or one that fails, falls back to the notebook session with the reason, so a
notification is never lost silently; the ``Delivery`` says what happened.

The session and UI channels need the host: the server implements ``SessionSink`` (publish on
the event stream, buffer while the session's kernel is not listening).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Protocol, TypedDict

from jupyter_recall.core.documents import (
    NotificationJSON,
    NotificationSource,
    OutputConfigJSON,
    output_config_of,
)
from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.limits import NOTIFICATION_PRIORITIES
from jupyter_recall.core.model import Job, Run, new_id
from jupyter_recall.core.records import (
    NOTIFICATION_MESSAGE_LIMIT,
    NOTIFICATION_TITLE_LIMIT,
    check_notification_length,
    notification_priority,
    optional_object,
)

log = logging.getLogger("jupyter_recall.notifications")

PRIORITIES = NOTIFICATION_PRIORITIES
SESSION = "session"
UI = "ui"
DEFAULT_CHANNEL = SESSION
MAX_MESSAGE = NOTIFICATION_MESSAGE_LIMIT
MAX_TITLE = NOTIFICATION_TITLE_LIMIT
MAX_TAGS = 20
MAX_TAG = 50
OUTCOME_OUTPUT_CLIP = 2000
NOTIFICATION_FIELDS = (
    "channel",
    "message",
    "title",
    "priority",
    "tags",
    "structured_data",
    "output_config",
    "session",
)


@dataclass(frozen=True, slots=True)
class Notification:
    id: str
    owner: str
    message: str
    created_at: datetime
    channel: str = DEFAULT_CHANNEL
    title: str = ""
    priority: str = "normal"
    tags: tuple[str, ...] = ()
    structured_data: dict[str, Any] = field(default_factory=dict)
    output_config: OutputConfigJSON = field(default_factory=OutputConfigJSON)
    session: str | None = None
    """The notebook session (path or kernel id) it belongs to; None: the user's UI."""
    source: NotificationSource = field(default_factory=NotificationSource)
    """Who sent it: ``{"kind": "api"}``, ``{"kind": "watcher", "job_id", "run_id"}``, ..."""
    fallback_reason: str | None = None
    """Set when it reached the session because the channel it named could not take it."""

    def to_json(self) -> NotificationJSON:
        return {
            "id": self.id,
            "owner": self.owner,
            "channel": self.channel,
            "message": self.message,
            "title": self.title,
            "priority": self.priority,
            "tags": list(self.tags),
            "structured_data": self.structured_data,
            "output_config": self.output_config,
            "session": self.session,
            "source": self.source,
            "fallback_reason": self.fallback_reason,
            "created_at": self.created_at.isoformat(),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Notification:
        return cls(
            id=str(data["id"]),
            owner=str(data["owner"]),
            message=str(data["message"]),
            created_at=datetime.fromisoformat(str(data["created_at"])),
            channel=str(data.get("channel") or DEFAULT_CHANNEL),
            title=str(data.get("title") or ""),
            priority=str(data.get("priority") or "normal"),
            tags=tuple(data.get("tags") or ()),
            structured_data=dict(data.get("structured_data") or {}),
            output_config=output_config_of(data.get("output_config") or {}),
            session=data.get("session"),
            source=data.get("source") or NotificationSource(),
            fallback_reason=data.get("fallback_reason"),
        )

    @property
    def heading(self) -> str:
        """The title, else the message's first line."""
        return self.title or self.message.strip().split("\n", 1)[0][:MAX_TITLE]


# --- validation ---------------------------------------------------------------------------------


def _text(data: Mapping[str, Any], key: str, limit: int, *, required: bool = False) -> str:
    value = data.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise ValidationError(key, f"must be a non-empty string, got {value!r}")
    return check_notification_length(value, key, limit)


def _tags(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise ValidationError("tags", f"must be a list of strings, got {value!r}")
    if len(value) > MAX_TAGS:
        raise ValidationError("tags", f"at most {MAX_TAGS} tags, got {len(value)}")
    for tag in value:
        if not isinstance(tag, str) or not tag or len(tag) > MAX_TAG:
            raise ValidationError("tags", f"each tag is a string of 1 to {MAX_TAG} characters")
    return tuple(value)


def _channel_name(value: object) -> str:
    if value is None:
        return DEFAULT_CHANNEL
    if not isinstance(value, str) or not value.strip():
        raise ValidationError("channel", f"must be a channel name, got {value!r}")
    return value


def build_notification(
    data: Mapping[str, Any],
    *,
    owner: str,
    now: datetime,
    source: NotificationSource | None = None,
) -> Notification:
    """Validate what a caller sends (``channel``, ``message``, ``title``, ``priority``,
    ``tags``, ``structured_data``, ``output_config``, ``session``); errors name the field."""
    unknown = sorted(set(data) - set(NOTIFICATION_FIELDS))
    if unknown:
        raise ValidationError(unknown[0], "unknown field", accepted=NOTIFICATION_FIELDS)
    # Absent means normal; anything given is one of the four (an empty string, null or false
    # had slipped through as "normal").
    priority = notification_priority(data.get("priority", "normal"))
    session = data.get("session")
    if session is not None and (not isinstance(session, str) or not session):
        raise ValidationError("session", f"must be a notebook path or kernel id, got {session!r}")
    return Notification(
        id=new_id(),
        owner=owner,
        message=_text(data, "message", MAX_MESSAGE, required=True),
        created_at=now,
        channel=_channel_name(data.get("channel")),
        title=_text(data, "title", MAX_TITLE),
        priority=priority,
        tags=_tags(data.get("tags")),
        structured_data=optional_object(data, "structured_data"),
        output_config=output_config_of(optional_object(data, "output_config")),
        session=session,
        source=source.copy() if source else NotificationSource(kind="api"),
    )


def outcome_notification(job: Job, run: Run, *, channel: str, now: datetime) -> Notification:
    """What a job with ``options.output_channel`` sends when one of its runs ends."""
    status = run.status.value
    lines = [f"Job {job.name!r} ({job.id}): run {run.id} {status}"]
    if run.error:
        lines.append(f"Error: {run.error}")
    output = run.output.strip()
    if output:
        clipped = output if len(output) <= OUTCOME_OUTPUT_CLIP else output[:OUTCOME_OUTPUT_CLIP]
        lines.append(clipped + ("…" if len(output) > OUTCOME_OUTPUT_CLIP else ""))
    return Notification(
        id=new_id(),
        owner=job.owner,
        message="\n".join(lines),
        created_at=now,
        channel=channel,
        title=f"{job.name}: {status}",
        priority="high" if status == "failed" else "normal",
        tags=("job", status),
        structured_data={
            "job_id": job.id,
            "run_id": run.id,
            "status": status,
            "error": run.error,
            "scheduled_for": run.scheduled_for.isoformat(),
        },
        output_config=job.options.output_config,
        session=job.session,
        source={"kind": "job", "job_id": job.id, "run_id": run.id},
    )


# --- channels and the notifier -----------------------------------------------------------------


class Channel(Protocol):
    name: str
    type: str

    async def send(self, notification: Notification) -> None:
        """Deliver, or raise (ChannelError or any exception) saying why not."""
        ...


class SessionSink(Protocol):
    """The host's side of the session and UI channels."""

    async def to_session(self, notification: Notification) -> bool:
        """Deliver to the notebook session's kernel; False when it was buffered instead
        because the kernel is not listening now."""
        ...

    async def to_ui(self, notification: Notification) -> None:
        """Publish to the user's JupyterLab (event stream)."""
        ...


class DeliveryJSON(TypedDict):
    """A sent notification and where it went (``Delivery`` in ``openapi.yaml``)."""

    notification: NotificationJSON
    delivered_to: str
    fallback_reason: str | None
    buffered: bool


@dataclass(frozen=True, slots=True)
class Delivery:
    notification: Notification
    delivered_to: str
    """The channel that took it (the requested one, or ``session`` after a fallback)."""
    fallback_reason: str | None = None
    buffered: bool = False
    """Held for the session until its kernel listens again."""

    def to_json(self) -> DeliveryJSON:
        return {
            "notification": self.notification.to_json(),
            "delivered_to": self.delivered_to,
            "fallback_reason": self.fallback_reason,
            "buffered": self.buffered,
        }


class Notifier:
    """Sends notifications to named channels; never raises on a channel's failure."""

    def __init__(self, channels: Mapping[str, Channel], sink: SessionSink) -> None:
        self.channels = dict(channels)
        self.sink = sink

    def describe(self) -> list[dict[str, str]]:
        return [{"name": name, "type": ch.type} for name, ch in sorted(self.channels.items())]

    async def send(self, notification: Notification) -> Delivery:
        channel = self.channels.get(notification.channel)
        if channel is None:
            reason = (
                f"unknown channel {notification.channel!r} "
                f"(configured: {', '.join(sorted(self.channels))})"
            )
            return await self._fall_back(notification, reason)
        if channel.type == SESSION:
            return await self._to_session(notification, notification.channel)
        try:
            await channel.send(notification)
        except Exception as error:
            reason = f"channel {channel.name!r} ({channel.type}) failed: {error}"
            return await self._fall_back(notification, reason)
        return Delivery(notification, notification.channel)

    async def _to_session(self, notification: Notification, name: str) -> Delivery:
        if notification.session is None:
            # Nobody's notebook: the user's UI is the closest thing to a session.
            await self.sink.to_ui(notification)
            return Delivery(notification, UI, notification.fallback_reason)
        live = await self.sink.to_session(notification)
        return Delivery(notification, name, notification.fallback_reason, buffered=not live)

    async def _fall_back(self, notification: Notification, reason: str) -> Delivery:
        fallen = replace(notification, fallback_reason=reason)
        delivery = await self._to_session(fallen, SESSION)
        held = " (held until its kernel listens)" if delivery.buffered else ""
        log.warning(
            "notification %s: %s; delivered to %s instead%s",
            notification.id,
            reason,
            delivery.delivered_to,
            held,
        )
        return delivery
