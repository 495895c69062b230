"""Routing the server's events to the cards and panels that show them.

One callback on the kernel's event-stream listener (``notifications.on_event``) for all of them:
no polling, and nothing runs in the kernel's main thread. Widget updates are sent from the
listener's thread: ipykernel 7 hands every IOPub message (comm messages included) to its IOPub
thread through a per-thread pipe, so a send from any thread is safe and does not wait for the
cell that is running (``tests/kernel/test_widgets.py`` checks it with a busy kernel).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Protocol

from jupyter_recall.client.documents import EventDocument
from jupyter_recall.kernel.connection import notifications

MAX_LIVE = 200
"""Subscribers kept live at most; beyond this the oldest stop following changes."""
ANY_JOB = "*"


class Subscriber(Protocol):
    def on_event(self, event: str, document: EventDocument) -> None:
        """A change of a job it follows (``rest.md``, Events), in the listener's thread."""

    def resync(self) -> None:
        """The stream was (re)opened: read the current state again."""

    def freeze(self) -> None:
        """No more updates will come (too many live subscribers)."""


def _warn(message: str) -> None:
    stream = sys.__stderr__
    if stream is not None:
        stream.write(f"[jupyter_recall] widgets: {message}\n")
        stream.flush()


def job_id_of(document: EventDocument) -> str | None:
    """The job an event is about: its job, else its run's job."""
    for key, field in (("job", "id"), ("run", "job_id")):
        part = document.get(key)
        if isinstance(part, dict) and isinstance(part.get(field), str):
            return str(part[field])
    return None


class Router:
    """Subscribers by job id (``ANY_JOB`` for panels), in subscription order."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subscribers: dict[int, tuple[str, Subscriber]] = {}
        self._counter = 0
        self._hooked = False

    def subscribe(self, job_id: str, subscriber: Subscriber) -> Callable[[], None]:
        """Follow the changes of ``job_id`` (or every job); returns the unsubscribe function."""
        with self._lock:
            self._counter += 1
            key = self._counter
            self._subscribers[key] = (job_id, subscriber)
            dropped = self._overflow()
            hook = not self._hooked
            self._hooked = True
        for old in dropped:
            old.freeze()
        if hook:
            notifications.on_event(self.dispatch)
        else:
            notifications.start_in_kernel()
        return lambda: self._unsubscribe(key)

    def _overflow(self) -> list[Subscriber]:
        dropped = []
        while len(self._subscribers) > MAX_LIVE:
            oldest = next(iter(self._subscribers))
            dropped.append(self._subscribers.pop(oldest)[1])
        return dropped

    def _unsubscribe(self, key: int) -> None:
        with self._lock:
            self._subscribers.pop(key, None)

    def following(self, job_id: str) -> list[Subscriber]:
        with self._lock:
            return [item for wanted, item in self._subscribers.values() if wanted == job_id]

    def dispatch(self, event: str, document: EventDocument) -> None:
        """The listener's callback: each subscriber of the event's job, then the panels."""
        with self._lock:
            subscribers = list(self._subscribers.values())
        job_id = job_id_of(document)
        for wanted, subscriber in subscribers:
            if event != "open" and wanted not in (job_id, ANY_JOB):
                continue
            try:
                if event == "open":
                    subscriber.resync()
                else:
                    subscriber.on_event(event, document)
            except Exception as error:
                # One broken card must not stop the others (nor the listener).
                _warn(f"{type(error).__name__}: {error} while handling {event}")


router = Router()


class Coalescer:
    """Runs ``action`` once, ``delay`` seconds after the first of a burst of ``poke()``s: a
    panel refreshed by a hundred events in a second reads the server once."""

    def __init__(self, action: Callable[[], None], delay: float = 0.25) -> None:
        self._action = action
        self._delay = delay
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None

    def poke(self) -> None:
        with self._lock:
            if self._timer is not None:
                return
            self._timer = threading.Timer(self._delay, self._fire)
            self._timer.daemon = True
            self._timer.start()

    def _fire(self) -> None:
        with self._lock:
            self._timer = None
        try:
            self._action()
        except Exception as error:
            _warn(f"{type(error).__name__}: {error} while refreshing")

    def cancel(self) -> None:
        with self._lock:
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
