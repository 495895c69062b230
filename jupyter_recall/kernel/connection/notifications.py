"""A notification queue for agent loops, fed while the kernel is idle too.

A daemon thread reads the server's event stream (``/api/recall/events``), keeps the runs of this
session's jobs that finish, and queues one notification per run (with its output). When the
stream drops it reconnects with backoff and re-syncs with ``GET /api/recall/runs?since=``, so
nothing that finished meanwhile is lost; a run is never notified twice. Recalls delivered while
no handler is registered are queued too (``type: "recall"``). Notifications sent to this session
(``send_notification``, watchers, jobs' output channels) are queued as ``type: "notification"``
or ``"watcher"``: the stream names the session, so the server sends them live; those sent while
no kernel of the session listened are taken from the server's buffer on (re)connect. Watchers'
runs are not queued one by one: a watcher speaks through its notifications.

Callbacks run in the thread that produced the notification (the listener's, or the recall's):
they must be quick and must not print (there is no cell to print into); their errors are
written to the kernel process's own stderr, never into a cell.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import sys
import threading
import urllib.parse
from collections import OrderedDict, deque
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any, TypedDict, TypeVar

from jupyter_recall.client.documents import (
    EventDocument,
    JobDocument,
    NotificationDocument,
    RunDocument,
)
from jupyter_recall.client.remote import parse_sse
from jupyter_recall.core.documents import NotificationSource
from jupyter_recall.core.errors import ValidationError
from jupyter_recall.kernel.connection import client as _client
from jupyter_recall.tools.background import check_wait_timeout


class Notification(TypedDict, total=False):
    """One item of this session's queue: ``type`` says which of the groups of fields it has
    (``run.finished``: a run of this session's jobs ended; ``notification`` or ``watcher``:
    one sent to this session; ``recall``: an instruction no handler took; ``background``: a
    background task ended)."""

    type: str
    # run.finished (and recall, background: their job, run and times)
    job_id: str | None
    job_name: str | None
    job_kind: str | None
    run_id: str | None
    status: str | None
    error: str | None
    scheduled_for: str | None
    started_at: str | None
    finished_at: str | None
    output: str
    attempt: int | None
    """1, 2, ... of the run's occurrence (its retries: ``policies.retries``); None from a
    server that does not say."""
    retry_at: str | None
    """When the next attempt of the occurrence runs, if one will: None after the last."""
    # notification, watcher
    id: str | None
    channel: str | None
    title: str | None
    message: str | None
    priority: str | None
    tags: list[str] | None
    structured_data: dict[str, Any] | None
    source: NotificationSource | None
    fallback_reason: str | None
    created_at: str | None
    watcher_id: str | None
    # recall
    instruction: str
    session: str | None
    # background
    task_id: str
    tool: str
    success: bool
    elapsed: float
    text: str


Callback = Callable[[Notification], Any]
EventCallback = Callable[[str, EventDocument], Any]
C = TypeVar("C", bound=Callback)

MAX_QUEUED = 1000
"""Oldest notifications are dropped beyond this many undrained ones."""
READ_TIMEOUT = 60.0
"""A stream silent this long (no heartbeat either) is considered dead and reopened."""
INITIAL_BACKOFF = 0.5
MAX_BACKOFF = 30.0
RESYNC_MARGIN = timedelta(seconds=5)
"""Re-sync reaches this far before the last known point: clocks of kernel and server differ."""
SEEN_LIMIT = 5000
FINAL_STATUSES = (
    "succeeded",
    "failed",
    "interrupted",
    "timed_out",
    "skipped",
    "missed",
    "cancelled",
)
SENT_FIELDS = (
    "id",
    "channel",
    "title",
    "message",
    "priority",
    "tags",
    "structured_data",
    "source",
    "fallback_reason",
    "created_at",
)

_condition = threading.Condition()
_queue: deque[Notification] = deque(maxlen=MAX_QUEUED)
_callbacks: list[Callback] = []
_event_callbacks: list[EventCallback] = []
_tracked: set[str] = set()


class _State:
    listener: Listener | None = None


_state = _State()


def _warn(message: str) -> None:
    # The process's own stderr (the server log), not sys.stderr, which a kernel routes to cells.
    stream = sys.__stderr__
    if stream is not None:
        with contextlib.suppress(Exception):
            stream.write(f"[jupyter_recall] {message}\n")
            stream.flush()


# --- the queue --------------------------------------------------------------------------------


def push(notification: Notification) -> None:
    """Queue a notification and call the callbacks with it."""
    with _condition:
        _queue.append(notification)
        callbacks = list(_callbacks)
        _condition.notify_all()
    for callback in callbacks:
        try:
            callback(notification)
        except Exception as error:
            _warn(f"notification callback {callback!r} failed: {type(error).__name__}: {error}")


def drain() -> list[Notification]:
    """Every queued notification, oldest first; the queue is then empty."""
    with _condition:
        items = list(_queue)
        _queue.clear()
    return items


def wait(timeout: float | None = None, *, count: int = 1) -> list[Notification]:
    """Block until ``count`` notifications are queued (or ``timeout`` seconds pass, at most
    3600; None: no limit), then drain. Starts the listener if it is not running."""
    # Checked as background_wait checks it: NaN would never compare as elapsed (a wait
    # forever), and a string would fail deep in threading with a bare TypeError.
    seconds = None if timeout is None else check_wait_timeout(timeout)
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValidationError("count", f"must be a positive integer, got {count!r}")
    start_in_kernel()
    with _condition:
        _condition.wait_for(lambda: len(_queue) >= count, timeout=seconds)
    return drain()


def pending() -> int:
    with _condition:
        return len(_queue)


def on_notification(callback: C) -> C:
    """Call ``callback(notification)`` for every new notification (usable as a decorator).
    Starts the listener if it is not running."""
    if not callable(callback):
        raise TypeError(f"on_notification needs a callable, got {callback!r}")
    with _condition:
        _callbacks.append(callback)
    start_in_kernel()
    return callback


def remove_callback(callback: Callback) -> None:
    with _condition:
        if callback in _callbacks:
            _callbacks.remove(callback)


def on_event(callback: EventCallback) -> EventCallback:
    """Call ``callback(event_type, document)`` for every change of the user's jobs on the
    server's event stream (``rest.md``, Events), in the listener's thread, and
    ``callback("open", {})`` after each (re)connection: what changed while disconnected must be
    read again. Starts the listener if it is not running."""
    if not callable(callback):
        raise TypeError(f"on_event needs a callable, got {callback!r}")
    with _condition:
        _event_callbacks.append(callback)
    start_in_kernel()
    return callback


def remove_event_callback(callback: EventCallback) -> None:
    with _condition:
        if callback in _event_callbacks:
            _event_callbacks.remove(callback)


def _dispatch_event(event: str, document: EventDocument) -> None:
    with _condition:
        callbacks = list(_event_callbacks)
    for callback in callbacks:
        try:
            callback(event, document)
        except Exception as error:
            _warn(f"event callback {callback!r} failed: {type(error).__name__}: {error}")


def track(job_id: str) -> None:
    """Notify the runs of this job too (jobs created from this kernel for other sessions)."""
    with _condition:
        _tracked.add(job_id)
    listener = _state.listener
    if listener is not None:
        listener.watch(job_id)


# --- server-sent events -----------------------------------------------------------------------


def _sent_notification(sent: NotificationDocument) -> Notification:
    """A notification sent to this session (``send_notification``, a watcher, a job's output
    channel), as queued: ``type`` is ``watcher`` for a watcher's, else ``notification``."""
    source = sent.get("source") or {}
    item: Notification = {
        "type": "watcher" if source.get("kind") == "watcher" else "notification",
        "id": sent.get("id"),
        "channel": sent.get("channel"),
        "title": sent.get("title"),
        "message": sent.get("message"),
        "priority": sent.get("priority"),
        "tags": sent.get("tags"),
        "structured_data": sent.get("structured_data"),
        "source": sent.get("source"),
        "fallback_reason": sent.get("fallback_reason"),
        "created_at": sent.get("created_at"),
    }
    if item["type"] == "watcher":
        item["watcher_id"] = source.get("job_id")
    return item


def _notification_of(run: RunDocument, job: JobDocument | None) -> Notification:
    return {
        "type": "run.finished",
        "job_id": run.get("job_id"),
        "job_name": job.get("name") if job else None,
        "job_kind": job.get("kind") if job else None,
        "run_id": run.get("id"),
        "status": run.get("status"),
        "error": run.get("error"),
        "scheduled_for": run.get("scheduled_for"),
        "started_at": run.get("started_at"),
        "finished_at": run.get("finished_at"),
        "output": run.get("output", ""),
        "attempt": run.get("attempt"),
        "retry_at": run.get("retry_at"),
    }


class Listener:
    """The daemon thread that turns finished runs of this session's jobs into notifications."""

    def __init__(self, client: _client.Client, session: str | None, *, since: datetime) -> None:
        self.client = client
        self.session = session
        self._since = since
        self._jobs: dict[str, JobDocument] = {}
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._stream: _client.EventStream | None = None
        self.connected = threading.Event()
        self.thread = threading.Thread(
            target=self._run, name="jupyter_recall-notifications", daemon=True
        )

    def start(self) -> None:
        self.thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        self._stopping.set()
        stream = self._stream
        if stream is not None:
            stream.close()
        if self.thread.is_alive() and threading.current_thread() is not self.thread:
            self.thread.join(timeout)

    def reconnect(self) -> None:
        """Drop the current stream: the thread reconnects and re-syncs what it missed."""
        stream = self._stream
        if stream is not None:
            stream.close()

    @property
    def alive(self) -> bool:
        return self.thread.is_alive() and not self._stopping.is_set()

    def watch(self, job_id: str, job: JobDocument | None = None) -> None:
        if job is not None and job.get("kind") == "watcher":
            # A watcher speaks through its notifications, not through each run (check).
            return
        with self._lock:
            if job is not None or job_id not in self._jobs:
                self._jobs[job_id] = job or {"id": job_id}

    def _watching(self, job_id: object) -> JobDocument | None:
        with self._lock:
            return self._jobs.get(job_id) if isinstance(job_id, str) else None

    def _run(self) -> None:
        delay = INITIAL_BACKOFF
        while not self._stopping.is_set():
            try:
                self._listen()
                delay = INITIAL_BACKOFF
            except Exception as error:
                if self._stopping.is_set():
                    break
                _warn(f"event stream: {type(error).__name__}: {error}; retrying in {delay:.1f}s")
            finally:
                self.connected.clear()
            self._stopping.wait(delay)
            delay = min(delay * 2, MAX_BACKOFF)

    def _load_jobs(self) -> None:
        with _condition:
            tracked = set(_tracked)
        for job_id in tracked:
            self.watch(job_id)
        if self.session is None:
            return
        found = self.client.every_job(query={"path": self.session})
        for job in found:
            self.watch(job["id"], job)

    def _listen(self) -> None:
        mark = datetime.now(timezone.utc) - RESYNC_MARGIN
        stream = _client.open_event_stream(self.client, self._events_path(), timeout=READ_TIMEOUT)
        self._stream = stream
        try:
            if self._stopping.is_set():
                return
            events = parse_sse(stream.lines())
            for event, _ in events:
                if event == "open":
                    break
            # Subscribed: jobs created from now on come as events; what finished since the last
            # sync point is either re-synced here or comes through the stream (duplicates are
            # dropped by run id).
            self._load_jobs()
            self._take_buffered()
            self._resync()
            self._since = mark
            self.connected.set()
            _dispatch_event("open", {})
            for event, data in events:
                self._handle(event, data)
        finally:
            self._stream = None
            stream.close()

    def _events_path(self) -> str:
        # Naming the session tells the server this kernel listens: notifications for the
        # session come live instead of being buffered.
        if self.session is None:
            return "/api/recall/events"
        return "/api/recall/events?" + urllib.parse.urlencode({"session": self.session})

    def _take_buffered(self) -> None:
        """Notifications sent to this session while no kernel of it was listening."""
        if self.session is None:
            return
        taken = self.client.request(
            "POST", "/api/recall/notifications/take", body={"session": self.session}
        )
        for sent in taken["notifications"]:
            self._notify_sent(sent)

    def _handle_sent(self, sent: NotificationDocument | None) -> None:
        """A notification on the stream: kept when it is for this session's kernel (the
        others are for another session, or for JupyterLab)."""
        if (
            isinstance(sent, dict)
            and sent.get("delivered_to") == "session"
            and sent.get("session") == self.session
        ):
            self._notify_sent(sent)

    def _notify_sent(self, sent: NotificationDocument) -> None:
        sent_id = sent.get("id")
        if not isinstance(sent_id, str) or not self._first_time(sent_id):
            return
        push(_sent_notification(sent))

    def _first_time(self, ident: str) -> bool:
        with self._lock:
            if ident in self._seen:
                return False
            self._seen[ident] = None
            while len(self._seen) > SEEN_LIMIT:
                self._seen.popitem(last=False)
        return True

    def _resync(self) -> None:
        since = self._since.astimezone(timezone.utc).isoformat()
        runs = self.client.every_run(query={"since": since})
        for run in sorted(runs, key=lambda r: str(r.get("finished_at") or "")):
            job = self._watching(run.get("job_id"))
            if job is not None and run.get("status") in FINAL_STATUSES:
                self._notify(run, job, with_output=True)

    def _handle(self, event: str, data: str) -> None:
        try:
            document: EventDocument | list[object] | str | float | None = json.loads(data)
        except ValueError:
            return
        if not isinstance(document, dict):
            return
        _dispatch_event(event, document)
        if event == "notification":
            self._handle_sent(document.get("notification"))
            return
        job = document.get("job")
        if isinstance(job, dict) and event in ("job.created", "job.updated"):
            if self.session is not None and job.get("session") == self.session:
                self.watch(str(job["id"]), job)
            return
        run = document.get("run")
        if event != "run.finished" or not isinstance(run, dict):
            return
        watched = self._watching(run.get("job_id"))
        if watched is not None:
            self._notify(run, job if isinstance(job, dict) else watched, with_output=False)

    def _notify(self, run: RunDocument, job: JobDocument, *, with_output: bool) -> None:
        run_id = run.get("id")
        if not isinstance(run_id, str) or not self._first_time(run_id):
            return
        if not with_output:
            # Events carry runs without their output: read it once, here.
            try:
                run = self.client.request("GET", f"/api/recall/runs/{run_id}")
            except Exception as error:
                _warn(f"could not read run {run_id}: {error}")
        push(_notification_of(run, job))


# --- the listener of this kernel --------------------------------------------------------------


def start(client: _client.Client | None = None, session: str | None = None) -> Listener:
    """Start the listener (once; later calls return the running one)."""
    with _condition:
        if _state.listener is not None and _state.listener.alive:
            return _state.listener
    client = client or _client.get_client()
    if session is None:
        session = _client.identity(client).session
    listener = Listener(client, session, since=datetime.now(timezone.utc) - RESYNC_MARGIN)
    with _condition:
        if _state.listener is not None and _state.listener.alive:
            return _state.listener
        _state.listener = listener
    listener.start()
    return listener


def start_in_kernel() -> Listener | None:
    """Start the listener if this process is a kernel that can reach its server; else None
    (a plain script does not get a background thread it did not ask for)."""
    running = _state.listener
    if running is not None and running.alive:
        return running
    if _client.own_kernel_id() is None:
        return None
    try:
        return start()
    except Exception as error:
        _warn(f"notifications are off: {error}")
        return None


def stop() -> None:
    """Stop the listener (on extension unload and at kernel exit)."""
    with _condition:
        listener, _state.listener = _state.listener, None
    if listener is not None:
        listener.stop()


def listener() -> Listener | None:
    return _state.listener


atexit.register(stop)
