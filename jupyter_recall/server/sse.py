"""Live changes: the Server-Sent Events stream and the jupyter_events emission.

Both are fed by the scheduler's listeners. The SSE stream is a convenience, not durable replay:
a client that reconnects re-syncs with ``GET /api/recall/runs?since=<iso>`` and the job list.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import NotRequired, TypedDict, TypeGuard
from weakref import WeakKeyDictionary

from jupyter_events import EventLogger
from jupyter_server.auth.decorator import authorized
from tornado import web
from tornado.iostream import StreamClosedError

from jupyter_recall.core.approvals import ApprovalJSON
from jupyter_recall.core.documents import NotificationJSON
from jupyter_recall.core.errors import RecallError
from jupyter_recall.engine.events import ApprovalEvent
from jupyter_recall.engine.scheduler import Event, Scheduler
from jupyter_recall.server.handlers import RecallHandler
from jupyter_recall.server.serialize import JobJSON, RunJSON, job_to_json, run_to_json

SCHEMA_ID = "https://events.jupyter.org/jupyter_recall/change/v1"
SCHEMA_PATH = Path(__file__).parent / "event_schemas" / "change.v1.yaml"
QUEUE_LIMIT = 1000


class EventJSON(TypedDict):
    """One change as streamed and emitted (``event_schemas/change.v1.yaml``): a job's or a
    run's (with its output's ``text`` and ``offset``), a notification or an approval."""

    type: str
    owner: str
    job: JobJSON | None
    run: RunJSON | None
    text: str | None
    offset: NotRequired[int | None]
    notification: NotRequired[NotificationJSON]
    approval: NotRequired[ApprovalJSON]


def event_document(event: Event) -> EventJSON:
    if isinstance(event, ApprovalEvent):
        return {
            "type": event.type,
            "owner": event.owner,
            "job": None,
            "run": None,
            "text": None,
            "approval": event.record.to_json(),
        }
    return {
        "type": event.type,
        "owner": event.owner,
        "job": job_to_json(event.job) if event.job is not None else None,
        "run": run_to_json(event.run, include_output=False) if event.run is not None else None,
        "text": event.text,
        "offset": event.offset,
    }


def _logger_records(logger: EventLogger) -> bool:
    """Whether ``logger.emit`` of our schema would do anything: the test ``emit`` itself starts
    with (jupyter_events 0.6 to 0.12). Another version without those attributes: assume so."""
    modified = getattr(logger, "_modified_listeners", None)
    unmodified = getattr(logger, "_unmodified_listeners", None)
    if modified is None or unmodified is None:
        return True
    return bool(logger.handlers or modified.get(SCHEMA_ID) or unmodified.get(SCHEMA_ID))


class EventHub:
    """Fans scheduler events out to SSE clients (per owner) and to jupyter_events.

    An event's document is built only when someone would receive it: most events (every check
    of every watcher makes three) have nobody listening, and building the document is most of
    what publishing one costs. Subscribed with ``attach``, the hub also tells the engine when
    nobody listens at all, so the events are not even built (nor the settled job states read
    back for them): the stream is live-only, and a client that connects later reads the jobs
    and runs as they are."""

    def __init__(self, event_logger: EventLogger | None) -> None:
        self._queues: dict[str, set[asyncio.Queue[EventJSON | None]]] = {}
        self._sessions: WeakKeyDictionary[asyncio.Queue[EventJSON | None], str]
        self._sessions = WeakKeyDictionary()
        """The notebook session of streams opened by a kernel (``?session=``), kept while the
        handler holds its queue: a document it failed to send after the stream was closed is
        still its session's."""
        self._event_logger = event_logger
        self._views_changed: Callable[[], None] = _nothing
        self._dropped: DroppedNotifications = _drop
        if event_logger is not None:
            event_logger.register_event_schema(SCHEMA_PATH)

    def attach(self, scheduler: Scheduler) -> Callable[[], None]:
        """Publish the scheduler's events while anyone listens, with those of the other
        engines on its store (a live view: ``remote``); returns the unsubscribe."""
        self._views_changed = scheduler.views_changed
        return scheduler.subscribe(self.publish, listening=self.listening, remote=True)

    def listening(self) -> bool:
        """Whether any stream is open or jupyter_events would record our events."""
        return bool(self._queues) or self._logger_records()

    def publish(self, event: Event) -> None:
        if event.owner in self._queues or self._logger_records():
            self.publish_document(event_document(event))

    def _logger_records(self) -> bool:
        return self._event_logger is not None and _logger_records(self._event_logger)

    def publish_notification(self, notification: NotificationJSON) -> None:
        """A notification for the owner's streams: kernels keep those of their session."""
        self.publish_document(
            {
                "type": "notification",
                "owner": notification["owner"],
                "job": None,
                "run": None,
                "text": None,
                "notification": notification,
            }
        )

    def connected(self, owner: str, session: str) -> bool:
        """Whether a kernel of ``session`` listens now."""
        return any(self._sessions.get(queue) == session for queue in self._queues.get(owner, ()))

    def publish_document(self, document: EventJSON) -> None:
        if self._event_logger is not None:
            # jupyter_events types the data it takes as a plain dict: a shallow copy.
            self._event_logger.emit(schema_id=SCHEMA_ID, data=dict(document))
        owner = document["owner"]
        for queue in tuple(self._queues.get(owner, ())):
            try:
                queue.put_nowait(document)
            except asyncio.QueueFull:
                # A client this far behind must re-sync; ending its stream tells it to.
                self.end(owner, queue, unsent=[document])

    def open(self, owner: str, session: str | None = None) -> asyncio.Queue[EventJSON | None]:
        queue: asyncio.Queue[EventJSON | None] = asyncio.Queue(QUEUE_LIMIT)
        self._queues.setdefault(owner, set()).add(queue)
        if session:
            self._sessions[queue] = session
        self._views_changed()
        return queue

    def close(self, owner: str, queue: asyncio.Queue[EventJSON | None]) -> None:
        queues = self._queues.get(owner)
        if queues is not None:
            queues.discard(queue)
            if not queues:
                # An owner without streams costs nothing to publish for: see ``publish``.
                del self._queues[owner]
                self._views_changed()

    def end(
        self,
        owner: str,
        queue: asyncio.Queue[EventJSON | None],
        unsent: Sequence[EventJSON] = (),
    ) -> None:
        """Close a stream and replace what it still had to send by its end. The notifications
        of its session among that (and ``unsent``) go to ``on_dropped``: runs and jobs can be
        read again, a notification said delivered cannot."""
        session = self._sessions.get(queue)
        self.close(owner, queue)
        dropped = [*_end_stream(queue), *unsent]
        if session is not None:
            notifications = [n for n in map(_notification_of, dropped) if _for(n, session)]
            if notifications:
                self._dropped(owner, session, notifications)

    def on_dropped(self, receiver: DroppedNotifications) -> None:
        self._dropped = receiver

    def close_all(self) -> None:
        for owner, queues in list(self._queues.items()):
            for queue in tuple(queues):
                self.end(owner, queue)


DroppedNotifications = Callable[[str, str, list[NotificationJSON]], None]
"""Told (owner, session, notifications) of a session's notifications that a stream ended
before sending."""


def _nothing() -> None:
    return None


def _drop(owner: str, session: str, notifications: list[NotificationJSON]) -> None:
    return None


def _notification_of(document: EventJSON) -> NotificationJSON | None:
    return document.get("notification") if document["type"] == "notification" else None


def _for(notification: NotificationJSON | None, session: str) -> TypeGuard[NotificationJSON]:
    """Whether it is one of ``session``'s own (not the copy a toast shows)."""
    return (
        notification is not None
        and notification.get("delivered_to") == "session"
        and notification.get("session") == session
    )


def _end_stream(queue: asyncio.Queue[EventJSON | None]) -> list[EventJSON]:
    """Replace whatever is queued by the end-of-stream marker; what was queued."""
    queued = []
    while not queue.empty():
        document = queue.get_nowait()
        if document is not None:
            queued.append(document)
    queue.put_nowait(None)
    return queued


BUFFER_LOOK = 5.0
"""Seconds between two looks, on a kernel's stream, at its session's buffered notifications."""

TakeBuffered = Callable[[str, str], Awaitable[list[NotificationJSON]]]
"""``NotificationService.take``: a session's buffered notifications, taken from the store."""


class EventsHandler(RecallHandler):
    """``GET /api/recall/events``: the caller's changes as text/event-stream, with heartbeats.

    A kernel names its notebook session (``?session=``): notifications for that session are
    then delivered live instead of being buffered."""

    @property
    def hub(self) -> EventHub:
        hub = self.settings["jupyter_recall_events"]
        assert isinstance(hub, EventHub)
        return hub

    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.set_header("Content-Type", "text/event-stream")
        self.set_header("Cache-Control", "no-cache")
        self.set_header("X-Accel-Buffering", "no")
        owner = self.owner
        session = self.get_query_argument("session", None)
        queue = self.hub.open(owner, session)
        self._stream_queue = (owner, queue)
        heartbeat = float(self.settings["jupyter_recall_heartbeat"])
        try:
            await self._send('event: open\ndata: {"ok": true}\n\n')
            await self._stream(queue, heartbeat, session)
        except StreamClosedError:
            pass
        finally:
            self.hub.close(owner, queue)
        if not self._finished:
            self.finish()

    def on_connection_close(self) -> None:
        # A kernel that went away must stop counting as listening at once, not at the next
        # heartbeat: its session's notifications are buffered from now on.
        opened = getattr(self, "_stream_queue", None)
        if opened is not None:
            self.hub.end(*opened)
        super().on_connection_close()

    async def _stream(
        self, queue: asyncio.Queue[EventJSON | None], heartbeat: float, session: str | None
    ) -> None:
        wait = min(heartbeat, BUFFER_LOOK) if session else heartbeat
        quiet = 0.0
        while True:
            try:
                document = await asyncio.wait_for(queue.get(), timeout=wait)
            except asyncio.TimeoutError:
                quiet += wait
                if session:
                    await self._deliver_buffered(session)
                if quiet >= heartbeat:
                    quiet = 0.0
                    await self._send(": heartbeat\n\n")
                continue
            if document is None:
                return
            try:
                await self._send(f"event: {document['type']}\ndata: {json.dumps(document)}\n\n")
            except StreamClosedError:
                # It may not have reached the kernel: a kernel drops one it has seen (by id).
                self.hub.end(*self._stream_queue, unsent=[document])
                raise

    async def _deliver_buffered(self, session: str) -> None:
        """Deliver on this stream what was buffered for its session by another process on the
        store (the standalone scheduler, another server), which saw no kernel listening."""
        take: TakeBuffered | None = self.settings.get("jupyter_recall_take_notifications")
        if take is None:
            return
        try:
            taken = await take(self.owner, session)
        except RecallError as error:
            # The store away for a moment: they stay buffered for the next look.
            self.log.info("jupyter_recall: buffered notifications of %s: %s", session, error)
            return
        for document in taken:
            self.hub.publish_notification(document)

    async def _send(self, chunk: str) -> None:
        self.write(chunk)
        await self.flush()
