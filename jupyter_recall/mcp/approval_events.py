"""The ``approval.*`` events of the server's event stream, for subscriptions to approvals.

A subscription to ``recall://approvals`` hears of every record created, decided or expired (each
changes the pending list); one to ``recall://approvals/{id}`` of that record's changes only. The
stream is opened, up to its ``open`` event, before ``resources/subscribe`` answers, so a change
made after the answer is never missed; a stream that drops is reopened until the subscription
ends.
"""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Callable, Iterator

from jupyter_recall.client.remote import Client, EventStream, open_event_stream, parse_sse
from jupyter_recall.core.errors import RecallConnectionError, RecallError

EVENTS = "/api/recall/events"
READ_TIMEOUT = 60.0
"""A stream silent this long (no heartbeat either) is dead: reopen it. The first open of a
subscription waits the client's timeout instead: ``resources/subscribe`` answers within it."""
REOPEN_DELAY = 1.0
Events = Iterator[tuple[str, str]]


def concerns(name: str, data: str, approval_id: str | None) -> bool:
    """Whether the event ``name`` with ``data`` changes the followed approvals."""
    if not name.startswith("approval."):
        return False
    if approval_id is None:
        return True
    try:
        document = json.loads(data)
    except ValueError:
        return False
    record = document.get("approval") if isinstance(document, dict) else None
    return isinstance(record, dict) and record.get("id") == approval_id


class ApprovalEvents:
    """Calls ``tell`` at each change of the followed approvals until ``stopped`` is set."""

    def __init__(
        self,
        client: Client,
        approval_id: str | None,
        tell: Callable[[], None],
        stopped: threading.Event,
    ) -> None:
        self.client = client
        self.approval_id = approval_id
        self.tell = tell
        self.stopped = stopped

    def open(self, timeout: float = READ_TIMEOUT) -> tuple[EventStream, Events]:
        """A stream the server has registered (its ``open`` event read within ``timeout``);
        ``RecallError`` if it cannot be opened. Later reads wait ``READ_TIMEOUT``."""
        stream = open_event_stream(self.client, EVENTS, timeout=timeout)
        events = parse_sse(stream.lines())
        try:
            opened = next(events, None)
        except (OSError, http.client.HTTPException) as error:
            stream.close()
            raise RecallConnectionError(
                f"the event stream of {self.client.base} did not open: {error or 'timed out'}"
            ) from None
        if opened is None or opened[0] != "open":
            stream.close()
            raise RecallConnectionError(
                f"the event stream of {self.client.base} ended before it opened"
            )
        stream.set_timeout(READ_TIMEOUT)
        return stream, events

    def follow(self, first: tuple[EventStream, Events] | None) -> None:
        opened = first
        while not self.stopped.is_set():
            if opened is not None:
                self._relay(*opened)
            if self.stopped.wait(REOPEN_DELAY):
                return
            try:
                opened = self.open()
            except RecallError:
                opened = None  # the server is away: try again after the delay

    def _relay(self, stream: EventStream, events: Events) -> None:
        try:
            for name, data in events:
                if self.stopped.is_set():
                    return
                if concerns(name, data, self.approval_id):
                    self.tell()
        except (OSError, http.client.HTTPException):
            pass  # a closed or timed-out socket: the caller reopens
        finally:
            stream.close()
