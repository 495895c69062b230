"""``logs --follow``: the stored output of a run, then its live output until it finishes.

Live output comes from the event stream (``run.output`` chunks), stored output from
``GET /api/recall/runs/{id}``; the server persists output in batches, a little after it streams
it. To print every chunk once, the stored output is read once before the stream opens and once
after: what was persisted in between is printed from the store, and the first live chunks that
end that part are the same text (they were streamed after the stream opened and persisted
before the second read), so they are skipped. When the stream drops, it is reopened the same way.
"""

from __future__ import annotations

import contextlib
import json
import queue
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from jupyter_recall.remote import (
    Client,
    EventStream,
    RecallConnectionError,
    open_event_stream,
    parse_sse,
)

READ_TIMEOUT = 60.0
"""A stream silent this long (no heartbeat either) is dead: reopen it."""
OVERLAP_GRACE = 0.2
"""Seconds to wait for the live chunks that may repeat the stored output just printed."""
REOPEN_DELAY = 0.5

Event = tuple[str, dict[str, Any]]


class _Stream:
    """The event stream, read by a thread into a queue so the reader can wait with a timeout."""

    def __init__(self, client: Client) -> None:
        self.events: queue.Queue[Event | None] = queue.Queue()
        self._stream: EventStream = open_event_stream(
            client, "/api/recall/events", timeout=READ_TIMEOUT
        )
        self._thread = threading.Thread(target=self._read, name="recall-logs", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            for name, data in parse_sse(self._stream.lines()):
                with contextlib.suppress(ValueError):
                    document = json.loads(data)
                    self.events.put((name, document if isinstance(document, dict) else {}))
        except Exception:
            # A closed or timed-out socket: the reader sees the end of the stream and reopens.
            pass
        finally:
            self.events.put(None)

    def next(self, timeout: float | None) -> Event | None:
        """The next event; None at the end of the stream; queue.Empty after ``timeout``."""
        return self.events.get(timeout=timeout)

    def close(self) -> None:
        self._stream.close()
        self._thread.join(5)


class Follower:
    """Writes a run's output through ``write`` once, in order, until the run finishes."""

    def __init__(self, client: Client, run_id: str, write: Callable[[str], None]) -> None:
        self.client = client
        self.run_id = run_id
        self.write = write
        self.shown = 0
        """Characters of the run's output written so far (stored and live alike)."""

    def get_run(self) -> dict[str, Any]:
        return dict(self.client.request("GET", f"/api/recall/runs/{self.run_id}"))

    def show_stored(self, run: Mapping[str, Any]) -> str:
        """Write the stored output not shown yet; that new part."""
        stored = str(run.get("output") or "")
        fresh = stored[self.shown :]
        if fresh:
            self.write(fresh)
        self.shown = max(self.shown, len(stored))
        return fresh

    def follow(self) -> dict[str, Any]:
        """Follow to the end; the finished run (with its output)."""
        run = self.get_run()
        self.show_stored(run)
        while run.get("status") == "running":
            finished = self._follow_stream()
            run = self.get_run()
            if not finished and run.get("status") == "running":
                time.sleep(REOPEN_DELAY)
        self.show_stored(run)
        return run

    def _follow_stream(self) -> bool:
        """One connection of the event stream; True when the run's end was seen."""
        try:
            stream = _Stream(self.client)
        except RecallConnectionError:
            return False
        try:
            opened = stream.next(READ_TIMEOUT)
            if opened is None or opened[0] != "open":
                return False
            run = self.get_run()
            persisted = self.show_stored(run)
            if run.get("status") != "running":
                return True
            pending = self._skip_repeated(stream, persisted)
            return self._relay(stream, pending)
        except queue.Empty:
            return False
        finally:
            stream.close()

    def _skip_repeated(self, stream: _Stream, persisted: str) -> list[Event]:
        """Live chunks already written as part of ``persisted``; the events read past them."""
        if not persisted:
            return []
        early: list[Event] = []
        deadline = time.monotonic() + OVERLAP_GRACE
        length = 0
        while length < len(persisted) and time.monotonic() < deadline:
            try:
                event = stream.next(max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            if event is None:
                break
            early.append(event)
            length += len(self._chunk(event) or "")
        chunks = [self._chunk(event) or "" for event in early]
        # The persisted live chunks are a prefix of what streamed and a suffix of `persisted`.
        for count in range(len(chunks), 0, -1):
            if chunks[count - 1] and persisted.endswith("".join(chunks[:count])):
                return early[count:]
        return early

    def _chunk(self, event: Event) -> str | None:
        name, document = event
        run = document.get("run") or {}
        if name == "run.output" and run.get("id") == self.run_id:
            return str(document.get("text") or "")
        return None

    def _is_end(self, event: Event) -> bool:
        name, document = event
        return name == "run.finished" and (document.get("run") or {}).get("id") == self.run_id

    def _relay(self, stream: _Stream, pending: list[Event]) -> bool:
        while True:
            event = pending.pop(0) if pending else stream.next(READ_TIMEOUT)
            if event is None:
                return False
            if self._is_end(event):
                return True
            chunk = self._chunk(event)
            if chunk:
                self.write(chunk)
                self.shown += len(chunk)
