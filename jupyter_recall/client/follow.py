"""``logs --follow``: the stored output of a run, then its live output until it finishes.

The stream is opened first, then the stored output (``GET /api/recall/runs/{id}``) is printed;
live ``run.output`` chunks carry their ``offset`` in the run's whole output, so a chunk (or the
part of it) that the stored output already held is not printed twice, and a gap (output written
just before the stream opened, not yet persisted when it was read: the server persists output in
batches) is filled from the store before the chunk that follows it. When the stream drops, it is
reopened the same way; a server that does not answer meanwhile (restarting) is asked again with
a growing delay for ``RECONNECT_FOR`` seconds before its error is given.
"""

from __future__ import annotations

import contextlib
import json
import queue
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from jupyter_recall.client.documents import EventDocument, RunDocument
from jupyter_recall.client.remote import (
    Client,
    EventStream,
    api_path,
    open_event_stream,
    parse_sse,
)
from jupyter_recall.core.errors import RecallConnectionError

READ_TIMEOUT = 60.0
"""A stream silent this long (no heartbeat either) is dead: reopen it."""
GAP_WAIT = 10.0
"""Seconds to wait for the store to hold output that was written before the stream opened."""
GAP_POLL = 0.1
REOPEN_DELAY = 0.5
RECONNECT_FOR = 60.0
"""Seconds to keep asking a server that stopped answering (a restart takes a few) before the
command gives up with its error (docs/cli.md says the same)."""
RECONNECT_DELAY_MAX = 5.0

Event = tuple[str, EventDocument]


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
                    document: EventDocument | list[object] | str | float | None = json.loads(data)
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

    def get_run(self) -> RunDocument:
        run: RunDocument = self.client.request("GET", api_path("runs", self.run_id))
        return run

    def show_stored(self, run: Mapping[str, Any], upto: int | None = None) -> None:
        """Write the stored output not shown yet (up to the offset ``upto``)."""
        stored = str(run.get("output") or "")
        fresh = stored[self.shown : upto]
        if fresh:
            self.write(fresh)
            self.shown += len(fresh)

    def get_run_when_reachable(self) -> RunDocument:
        """``get_run``, asked again with a growing delay while the server does not answer,
        for up to ``RECONNECT_FOR`` seconds; then its RecallConnectionError."""
        deadline = time.monotonic() + RECONNECT_FOR
        delay = REOPEN_DELAY
        while True:
            try:
                return self.get_run()
            except RecallConnectionError:
                if time.monotonic() + delay > deadline:
                    raise
            time.sleep(delay)
            delay = min(delay * 2, RECONNECT_DELAY_MAX)

    def follow(self) -> RunDocument:
        """Follow to the end; the finished run (with its output)."""
        while not self._follow_stream():
            run = self.get_run_when_reachable()
            if run.get("status") != "running":
                break
            time.sleep(REOPEN_DELAY)
        run = self.get_run_when_reachable()
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
            self.show_stored(run)
            if run.get("status") != "running":
                return True
            return self._relay(stream)
        except (queue.Empty, RecallConnectionError):
            # Silent, or the server went away between two requests: follow() asks again.
            return False
        finally:
            stream.close()

    def _relay(self, stream: _Stream) -> bool:
        while True:
            event = stream.next(READ_TIMEOUT)
            if event is None:
                return False
            name, document = event
            run = document.get("run")
            if run is None or run.get("id") != self.run_id:
                continue
            if name == "run.finished":
                return True
            if name == "run.output":
                self.show_chunk(str(document.get("text") or ""), document.get("offset"))

    def show_chunk(self, text: str, offset: Any) -> None:
        if not isinstance(offset, int):
            # A server without offsets: every chunk as it comes.
            self.write(text)
            self.shown += len(text)
            return
        if offset > self.shown:
            self._fill_gap(offset)
        fresh = text[max(0, self.shown - offset) :]
        if fresh:
            self.write(fresh)
            self.shown = offset + len(text)

    def _fill_gap(self, offset: int) -> None:
        """Output written before the stream opened: from the store, once it is persisted."""
        deadline = time.monotonic() + GAP_WAIT
        while self.shown < offset:
            self.show_stored(self.get_run(), upto=offset)
            if self.shown >= offset or time.monotonic() > deadline:
                return
            time.sleep(GAP_POLL)
