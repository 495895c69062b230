"""Events across servers: what one engine does reaches the live views (SSE streams, the
sidebar) of every server on a shared store, through the store's ``EventFeed`` (PostgreSQL:
NOTIFY/LISTEN, no polling).

Outgoing, the relay is an ordinary listener of its engine's events: it turns each into a
short note (``event_notes``: references to the run and job, not their documents; run output
with its text), coalesces them for ``COALESCE`` seconds, and publishes them in as few
payloads as fit. A chatty run is bounded: at most ``OUTPUT_PER_RUN`` characters of its output
per publication (``OUTPUT_PER_PUBLICATION`` for all runs); what is left out shows as a gap in
the offsets, which clients fill by reading the run. Nothing is published while no other
engine has a view open: engines with views say so (``here``, repeated every
``PRESENCE_EVERY`` s, good for ``PRESENCE_FOR`` s; ``gone`` when the last view closes; a
starting engine asks ``who``).

The server's approval requests travel the same way (``ApprovalEvent``, put on the bus by
``server/approvals.py``), so an inbox open on one server shows what is asked and decided on
another.

Incoming, notes of other engines (never its own: no echo) are read back from the store in
one call per batch and delivered to the engine's ``remote`` listeners only (``EventBus.relay``):
each event reaches each view once, from the one engine that made it.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Protocol, TypeVar

import anyio

from jupyter_recall.core.approvals import ApprovalRecord
from jupyter_recall.core.errors import NotFoundError
from jupyter_recall.core.model import Job, Run
from jupyter_recall.engine import event_notes
from jupyter_recall.engine.event_notes import GONE, HERE, WHO, Note
from jupyter_recall.engine.events import (
    APPROVAL_EVENTS,
    EVENT_TYPES,
    JOB_DELETED,
    RUN_OUTPUT,
    RUN_STARTED,
    ApprovalEvent,
    Event,
    EventBus,
    JobCreated,
    JobDeleted,
    JobEvent,
    JobUpdated,
    RunFinished,
    RunOutput,
    RunStarted,
)
from jupyter_recall.store.base import ApprovalStore, JobStore
from jupyter_recall.store.changes import EventFeed

log = logging.getLogger("jupyter_recall.engine")

T = TypeVar("T")
InStore = Callable[[Callable[[], T]], Awaitable[T]]

COALESCE = 0.05
"""Seconds events wait to be published together."""
OUTPUT_PER_RUN = 2000
OUTPUT_PER_PUBLICATION = 8000
PENDING_LIMIT = 5000
"""Notes held for publication at most (while the database is slow); later ones are dropped."""
BATCH_LIMIT = 500
"""Notes of other engines read back per store call."""
PRESENCE_EVERY = 10.0
PRESENCE_FOR = 30.0
RUN_CACHE = 1000
"""Runs kept to label the output of other engines' runs without reading them again."""

_JOB_EVENTS: dict[str, type[JobEvent]] = {
    JobCreated.type: JobCreated,
    JobUpdated.type: JobUpdated,
}


class _Readable(JobStore, ApprovalStore, Protocol):
    """What the relay reads back: the runs, jobs and approval records notes refer to."""


@dataclass(frozen=True, slots=True)
class _Found:
    runs: dict[str, Run]
    jobs: dict[str, Job]
    approvals: dict[str, ApprovalRecord]


class EventRelay:
    """One engine's side of the exchange; ``run`` until cancelled."""

    def __init__(
        self,
        feed: EventFeed,
        store: _Readable,
        bus: EventBus,
        in_store: InStore[_Found],
        *,
        engine_id: str,
    ) -> None:
        self._feed = feed
        self._store = store
        self._bus = bus
        self._in_store = in_store
        self.engine_id = engine_id
        self._serial = itertools.count()
        self._reader = event_notes.Reader()
        self._pending: list[Note] = []
        self._output_sent: dict[str, int] = {}
        self._dropped = 0
        self._incoming: list[Note] = []
        self._remote: dict[str, float] = {}
        self._viewing = False
        self._announced_at = 0.0
        self._runs: OrderedDict[str, Run] = OrderedDict()
        self._wake = anyio.Event()

    # --- lifecycle ------------------------------------------------------------------------

    async def run(self) -> None:
        """Listen, ask who views, and publish and deliver until cancelled."""
        token = anyio.lowlevel.current_token()

        def heard(payload: str) -> None:
            try:
                anyio.from_thread.run_sync(self._received, payload, token=token)
            except RuntimeError:  # the event loop is gone
                return

        stop_listening = self._feed.listen_for_events(heard)
        unsubscribe = self._bus.subscribe(self._outgoing, listening=self._someone_views)
        try:
            self._pending.append(event_notes.presence(self.engine_id, WHO))
            self._wake.set()
            while True:
                await self._cycle()
        finally:
            unsubscribe()
            stop_listening()

    def views_changed(self) -> None:
        """A live view of this engine opened or closed: say so to the others now."""
        self._wake.set()

    async def _cycle(self) -> None:
        with anyio.move_on_after(PRESENCE_EVERY):
            await self._wake.wait()
        self._wake = anyio.Event()
        self._presence()
        if self._pending:
            await anyio.sleep(COALESCE)
            await self._publish()
        if self._incoming:
            await self._deliver()

    # --- presence -------------------------------------------------------------------------

    def _someone_views(self) -> bool:
        """Whether another engine has a live view open now (else nothing is published)."""
        if not self._remote:
            return False
        now = time.monotonic()
        for engine, until in list(self._remote.items()):
            if until <= now:
                del self._remote[engine]
        return bool(self._remote)

    def _presence(self) -> None:
        viewing = self._bus.wants_remote(*EVENT_TYPES)
        now = time.monotonic()
        due = viewing and now - self._announced_at >= PRESENCE_EVERY
        if viewing != self._viewing or due:
            self._viewing = viewing
            self._announced_at = now
            kind = HERE if viewing else GONE
            self._pending.append(event_notes.presence(self.engine_id, kind))

    # --- outgoing -------------------------------------------------------------------------

    def _outgoing(self, event: Event) -> None:
        if len(self._pending) >= PENDING_LIMIT:
            self._dropped += 1
            return
        note = self._note(event)
        if note is not None:
            self._pending.append(note)
            self._wake.set()

    def _note(self, event: Event) -> Note | None:
        base: Note = {"e": self.engine_id, "k": event.type, "o": event.owner}
        if isinstance(event, RunOutput):
            return self._output_note(base, event)
        if isinstance(event, ApprovalEvent):
            return {**base, "a": event.record.id}
        if isinstance(event, JobEvent):
            if event.type == JOB_DELETED:
                return {**base, "row": event_notes.deleted_job_row(event.job)}
            return {**base, "j": event.job.id}
        return {**base, "r": event.run.id, "j": event.run.job_id}

    def _output_note(self, base: Note, event: RunOutput) -> Note | None:
        """The chunk, cut to what the bounds leave for this run; None when nothing is left.
        Contiguous chunks of one run join into one note."""
        sent = self._output_sent.get(event.run.id, 0)
        total = sum(self._output_sent.values())
        room = min(OUTPUT_PER_RUN - sent, OUTPUT_PER_PUBLICATION - total)
        if room <= 0:
            return None
        text = event.text[:room]
        self._output_sent[event.run.id] = sent + len(text)
        last = self._pending[-1] if self._pending else None
        if (
            last is not None
            and last["k"] == RUN_OUTPUT
            and last["r"] == event.run.id
            and int(str(last["n"])) + len(str(last["t"])) == event.offset
        ):
            last["t"] = str(last["t"]) + text
            return None
        return {**base, "r": event.run.id, "j": event.run.job_id, "t": text, "n": event.offset}

    async def _publish(self) -> None:
        notes, self._pending = self._pending, []
        self._output_sent.clear()
        if self._dropped:
            log.warning("events for other servers: %d dropped (too many at once)", self._dropped)
            self._dropped = 0
        payloads = event_notes.pack(
            _unique(notes), self._feed.payload_limit, self.engine_id, self._serial
        )
        try:
            await anyio.to_thread.run_sync(self._feed.publish_events, payloads)
        except Exception as exc:
            # Live views are not durable: a view that missed events re-reads on reconnect.
            log.warning("events for other servers not sent (%d notes): %s", len(notes), exc)

    # --- incoming -------------------------------------------------------------------------

    def _received(self, payload: str) -> None:
        for note in self._reader.notes(payload):
            if note["e"] != self.engine_id:
                self._take(note)

    def _take(self, note: Note) -> None:
        kind = str(note.get("k"))
        if kind in (HERE, WHO, GONE):
            self._heard_presence(str(note["e"]), kind)
        elif kind in EVENT_TYPES and self._bus.wants_remote(kind):
            self._incoming.append(note)
            self._wake.set()

    def _heard_presence(self, engine: str, kind: str) -> None:
        if kind == HERE:
            self._remote[engine] = time.monotonic() + PRESENCE_FOR
        elif kind == GONE:
            self._remote.pop(engine, None)
        elif self._viewing:  # WHO: answer at once
            self._announced_at = 0.0
            self._wake.set()

    async def _deliver(self) -> None:
        batch = self._incoming[:BATCH_LIMIT]
        del self._incoming[:BATCH_LIMIT]
        if self._incoming:
            self._wake.set()
        try:
            found = await self._in_store(lambda: self._read(batch))
        except Exception:
            log.exception("could not read the runs and jobs of other servers' events")
            return
        for note in batch:
            event = self._event(note, found)
            if event is not None:
                self._bus.relay(event)

    def _read(self, batch: Sequence[Note]) -> _Found:
        """In the store thread: the runs and jobs the notes refer to, as they are now."""
        runs: dict[str, Run] = {}
        jobs: dict[str, Job] = {}
        approvals = self._approvals_of(batch)
        read: set[str] = set()
        """Runs read from the store in this batch: a run taken from the cache for its output
        is read again for a start or an end, which must carry the run as it is now."""
        for note in batch:
            run_id, job_id = note.get("r"), note.get("j")
            output = note["k"] == RUN_OUTPUT
            needs_read = run_id not in runs or not output
            if isinstance(run_id, str) and run_id not in read and needs_read:
                cached = self._runs.get(run_id) if output else None
                found = cached or _maybe(partial(self._store.get_run, run_id, owner=None))
                if cached is None:
                    read.add(run_id)
                if found is not None:
                    runs[run_id] = found
            if isinstance(job_id, str) and job_id not in jobs and note["k"] != RUN_OUTPUT:
                job = _maybe(partial(self._store.get_job, job_id, owner=None))
                if job is not None:
                    jobs[job_id] = job
        return _Found(runs, jobs, approvals)

    def _approvals_of(self, batch: Sequence[Note]) -> dict[str, ApprovalRecord]:
        """The approval records the notes name, as they are now."""
        found: dict[str, ApprovalRecord] = {}
        for note in batch:
            approval_id = note.get("a")
            if isinstance(approval_id, str) and approval_id not in found:
                record = self._store.get_approval(approval_id)
                if record is not None:
                    found[approval_id] = record
        return found

    def _event(self, note: Note, found: _Found) -> Event | None:
        kind, owner = str(note["k"]), str(note.get("o"))
        if kind in APPROVAL_EVENTS:
            record = found.approvals.get(str(note.get("a")))
            return APPROVAL_EVENTS[kind](owner, record) if record is not None else None
        if kind == JOB_DELETED:
            row = note.get("row")
            return JobDeleted(owner, event_notes.job_of_row(row)) if isinstance(row, list) else None
        if kind in _JOB_EVENTS:
            job = found.jobs.get(str(note.get("j")))
            return _JOB_EVENTS[kind](owner, job) if job is not None else None
        run = found.runs.get(str(note.get("r")))
        if run is None:
            return None
        self._remember(run)
        if kind == RUN_OUTPUT:
            return RunOutput(owner, run, str(note.get("t", "")), int(str(note.get("n", 0))))
        job = found.jobs.get(run.job_id)
        return RunStarted(owner, run, job) if kind == RUN_STARTED else RunFinished(owner, run, job)

    def _remember(self, run: Run) -> None:
        self._runs[run.id] = run
        self._runs.move_to_end(run.id)
        while len(self._runs) > RUN_CACHE:
            self._runs.popitem(last=False)


def _unique(notes: Sequence[Note]) -> list[Note]:
    """The notes without repeats (a job updated twice in one publication is read once; and
    PostgreSQL would fold identical payloads of one transaction)."""
    seen: set[tuple[object, ...]] = set()
    unique: list[Note] = []
    for note in notes:
        key = (note["k"], note.get("r"), note.get("j"), note.get("n"), note.get("a"))
        if note["k"] in (RUN_OUTPUT, JOB_DELETED) or key not in seen:
            seen.add(key)
            unique.append(note)
    return unique


def _maybe(read: Callable[[], T]) -> T | None:
    try:
        return read()
    except NotFoundError:
        return None
