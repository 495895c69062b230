"""Notifications in the server: the session and UI sink, the buffer, job outcomes, REST.

- ``NotificationService`` builds the ``Notifier`` from ``RecallApp.notification_channels`` and
  is its ``SessionSink``: a notification for a notebook session is published on the event
  stream when a kernel of that session listens (it opened ``/api/recall/events?session=``),
  else it is buffered in the store (``NotificationBuffer``: 100 per session, 24 h) until the
  kernel takes it (``POST /api/recall/notifications/take``) when it connects again. One lock
  orders "is it listening, else buffer" against "take", so nothing falls in between.
- Jobs with ``options.output_channel`` send the outcome of each run that ran (succeeded,
  failed, interrupted, cancelled) to that channel.
- ``NotificationActionExecutor`` sends ``{"type": "notification"}`` actions that name a channel
  (or whose job has an ``output_channel``) through the channels; without one, a notification
  stays its run's output, which the session's kernel gets as the run's notification.
- REST: ``POST /api/recall/notifications`` sends one; ``GET`` lists the channels and what is
  buffered; ``POST /api/recall/notifications/take`` hands a session its buffered ones.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, TypeVar

import anyio
from jupyter_server.auth.decorator import authorized
from tornado import web

from jupyter_recall.core.clock import Clock
from jupyter_recall.core.documents import NotificationJSON, NotificationSource
from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.model import Job, JobKind, Run, new_id
from jupyter_recall.core.records import NotificationAction, refuse_unknown
from jupyter_recall.engine.channels import build_channels
from jupyter_recall.engine.events import RUN_FINISHED, Event, RunFinished
from jupyter_recall.engine.executors import Executor, OutputSink, RunOutcome
from jupyter_recall.engine.notify import (
    SESSION,
    UI,
    Delivery,
    Notification,
    Notifier,
    build_notification,
    outcome_notification,
)
from jupyter_recall.engine.scheduler import Scheduler
from jupyter_recall.server.handlers import RecallHandler
from jupyter_recall.server.sse import EventHub
from jupyter_recall.store.base import NotificationBuffer

T = TypeVar("T")

log = logging.getLogger("jupyter_recall.notifications")

OUTCOME_STATUSES = ("succeeded", "failed", "interrupted", "timed_out", "cancelled")
"""Runs that ran: their outcome goes to the job's output channel (skipped/missed ones do not)."""


def check_channels(config: Mapping[str, Any]) -> None:
    """Validate ``notification_channels`` (ValidationError naming the channel and setting)."""
    build_channels(config, _NoSink())


class _NoSink:
    async def to_session(self, notification: Notification) -> bool:
        raise RuntimeError("validation only")

    async def to_ui(self, notification: Notification) -> None:
        raise RuntimeError("validation only")


class NotificationService:
    """The server's notifier, its session sink and its buffer."""

    def __init__(
        self,
        store: NotificationBuffer,
        hub: EventHub,
        clock: Clock,
        channels: Mapping[str, Any],
    ) -> None:
        self.hub = hub
        self.clock = clock
        self.buffer = store
        self.notifier = Notifier(build_channels(channels, self), self)
        self._lock = anyio.Lock()
        self._limiter = anyio.CapacityLimiter(1)
        self._scheduler: Scheduler | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._outcomes: dict[str, set[asyncio.Task[None]]] = {}
        """The outcome sends in flight, by job id."""
        hub.on_dropped(self._buffer_again)

    # --- sending ----------------------------------------------------------------------------

    async def send(self, notification: Notification) -> Delivery:
        return await self.notifier.send(notification)

    async def send_json(
        self, data: Mapping[str, Any], *, owner: str, source: NotificationSource | None = None
    ) -> Delivery:
        notification = build_notification(data, owner=owner, now=self.clock.now(), source=source)
        return await self.send(notification)

    # --- the sink -----------------------------------------------------------------------------

    async def to_session(self, notification: Notification) -> bool:
        session = notification.session
        assert session is not None
        document = notification.to_json()
        document["delivered_to"] = SESSION
        async with self._lock:
            if self.hub.connected(notification.owner, session):
                self.hub.publish_notification(document)
                return True
            await self._in_store(
                partial(
                    self.buffer.buffer_notification,
                    notification.owner,
                    session,
                    document,
                    now=self.clock.now(),
                )
            )
            # The user's JupyterLab still hears of it (a toast), while the kernel is away.
            shown = document.copy()
            shown["delivered_to"], shown["buffered"] = UI, True
            self.hub.publish_notification(shown)
            return False

    def _buffer_again(self, owner: str, session: str, dropped: list[NotificationJSON]) -> None:
        """A stream ended before sending these (its kernel too far behind, or gone): they were
        answered as delivered, so they wait in the buffer for the kernel's next take. Queued
        on the lock now, before any take that follows the stream's end."""
        self._keep(asyncio.get_running_loop().create_task(self._buffer(owner, session, dropped)))

    async def _buffer(self, owner: str, session: str, dropped: list[NotificationJSON]) -> None:
        async with self._lock:
            for document in dropped:
                await self._in_store(
                    partial(
                        self.buffer.buffer_notification,
                        owner,
                        session,
                        document,
                        now=self.clock.now(),
                    )
                )

    def _keep(self, task: asyncio.Task[None]) -> None:
        """Until it ends, and ``aclose`` waits for it."""
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def to_ui(self, notification: Notification) -> None:
        document = notification.to_json()
        document["delivered_to"] = UI
        self.hub.publish_notification(document)

    async def take(self, owner: str, session: str) -> list[NotificationJSON]:
        async with self._lock:
            return await self._in_store(
                partial(self.buffer.take_notifications, owner, session, now=self.clock.now())
            )

    async def buffered(self, owner: str, session: str | None) -> list[NotificationJSON]:
        return await self._in_store(
            partial(self.buffer.buffered_notifications, owner, session, now=self.clock.now())
        )

    async def _in_store(self, func: Callable[[], T]) -> T:
        return await anyio.to_thread.run_sync(func, limiter=self._limiter)

    # --- job outcomes -------------------------------------------------------------------------

    def attach(self, scheduler: Scheduler) -> None:
        """Send run outcomes of jobs with ``options.output_channel`` (call once)."""
        self._scheduler = scheduler
        scheduler.subscribe(self._on_event, types={RUN_FINISHED})

    def _on_event(self, event: Event) -> None:
        if not isinstance(event, RunFinished) or event.run.status.value not in OUTCOME_STATUSES:
            return
        if not event.run.is_final_for_occurrence:
            return  # a retry follows: the occurrence's outcome is its last attempt's
        run, job = event.run, event.job
        if job is not None and (job.kind is JobKind.WATCHER or not _output_channel(job)):
            return
        task = asyncio.get_running_loop().create_task(self._send_outcome(run, job))
        self._keep(task)
        sending = self._outcomes.setdefault(run.job_id, set())
        sending.add(task)
        task.add_done_callback(partial(self._outcome_sent, run.job_id))

    def _outcome_sent(self, job_id: str, task: asyncio.Task[None]) -> None:
        sending = self._outcomes.get(job_id, set())
        sending.discard(task)
        if not sending:
            self._outcomes.pop(job_id, None)

    async def outcomes_sent(self, job_id: str, *, timeout: float) -> None:
        """Once the outcomes of ``job_id``'s runs being sent now are sent (at most ``timeout``
        seconds): what follows from them (its pause notice) is said after them."""
        sending = self._outcomes.get(job_id)
        if sending:
            await asyncio.wait(set(sending), timeout=timeout)

    async def _send_outcome(self, run: Run, job: Job | None) -> None:
        scheduler = self._scheduler
        assert scheduler is not None
        try:
            if job is None:
                job = await scheduler.get_job(run.job_id, owner=run.owner)
            channel = _output_channel(job)
            if channel is None or job.kind is JobKind.WATCHER:
                return
            # Events carry runs without their output: read it once, here.
            full = await scheduler.get_run(run.id, owner=run.owner)
            now = self.clock.now()
            await self.send(outcome_notification(job, full, channel=channel, now=now))
        except Exception:
            log.exception("could not send the outcome of run %s", run.id)

    async def aclose(self) -> None:
        """Let outcome notifications in flight and notifications going back to the buffer
        finish (briefly), then cancel the rest."""
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=5)
        for task in set(self._tasks):
            task.cancel()


def _output_channel(job: Job) -> str | None:
    return job.options.output_channel


# --- notification actions -------------------------------------------------------------------------


class NotificationActionExecutor:
    """Sends ``notification`` actions through the channels; every other run goes to ``inner``."""

    def __init__(self, inner: Executor, notifications: NotificationService) -> None:
        self.inner = inner
        self.notifications = notifications

    def concurrency_key(self, job: Job) -> str:
        return self.inner.concurrency_key(job)

    async def execute(self, job: Job, run: Run, output: OutputSink) -> RunOutcome:
        action = job.action
        if not isinstance(action, NotificationAction) or not (
            action.channel or _output_channel(job)
        ):
            # Without a channel a notification is its run's output, which the session's kernel
            # already gets as the run's notification: sending it again would say it twice.
            return await self.inner.execute(job, run, output)
        notification = Notification(
            id=new_id(),
            owner=job.owner,
            message=action.message,
            created_at=self.notifications.clock.now(),
            channel=str(action.channel or _output_channel(job)),
            title=action.title or "",
            priority=action.priority or "normal",
            session=job.session,
            source={"kind": "job", "job_id": job.id, "run_id": run.id},
        )
        delivery = await self.notifications.send(notification)
        heading = f"{notification.title}: " if notification.title else ""
        output.write(f"{heading}{notification.message}\n")
        output.write(f"[recall] {describe_delivery(delivery)}\n")
        return RunOutcome()

    async def aclose(self) -> None:
        closer = getattr(self.inner, "aclose", None)
        if closer is not None:
            await closer()


def describe_delivery(delivery: Delivery) -> str:
    text = f"notification {delivery.notification.id} sent to {delivery.delivered_to}"
    if delivery.buffered:
        text += " (buffered: the session's kernel is not listening)"
    if delivery.fallback_reason:
        text += f" instead of {delivery.notification.channel!r}: {delivery.fallback_reason}"
    return text


# --- REST -----------------------------------------------------------------------------------------


class _NotificationHandler(RecallHandler):
    @property
    def notifications(self) -> NotificationService:
        service = self.settings["jupyter_recall_notifications"]
        assert isinstance(service, NotificationService)
        return service


class NotificationsHandler(_NotificationHandler):
    @web.authenticated
    @authorized
    async def post(self) -> None:
        delivery = await self.notifications.send_json(self.json_body(), owner=self.owner)
        self.send_json(delivery.to_json(), status=201)

    @web.authenticated
    @authorized
    async def get(self) -> None:
        session = self.get_query_argument("session", None)
        held = await self.notifications.buffered(self.owner, session or None)
        self.send_json(
            {"channels": self.notifications.notifier.describe(), "buffered": held},
        )


class NotificationsTakeHandler(_NotificationHandler):
    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = self.json_body()
        refuse_unknown(body, ("session",))
        session = body.get("session")
        if not isinstance(session, str) or not session:
            raise ValidationError("session", f"must be a notebook path or kernel id: {session!r}")
        taken = await self.notifications.take(self.owner, session)
        self.send_json({"notifications": taken})


def notification_routes() -> list[tuple[str, type[RecallHandler]]]:
    return [
        (r"/api/recall/notifications", NotificationsHandler),
        (r"/api/recall/notifications/take", NotificationsTakeHandler),
    ]
