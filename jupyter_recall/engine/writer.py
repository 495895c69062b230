"""Batched persistence of what runs do while and after they execute.

A run's start, its output and its end are queued here and written together, one transaction
per batch: thousands of completions per second become a few hundred transactions. Output alone
waits up to ``output_interval`` so that a chatty run does not turn every line into a
transaction. Listeners hear of an end only after it is committed, so whatever they read back
from the store is already final.

Firing comes first: both share the one store thread, and a batch written while jobs are due
would delay them. So a batch is written when the firing loop has room for it (it sleeps until
a deadline further away than the batch takes, as measured on the previous ones). Under a
sustained burst that leaves no room, ends wait; once the oldest has waited ``max_defer``
seconds, one batch is written after each firing pass, so the backlog still drains.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Awaitable, Callable
from datetime import datetime
from functools import partial

import anyio

from jupyter_recall.core.clock import Clock
from jupyter_recall.core.model import Job, Run, RunStatus, RunTrigger
from jupyter_recall.engine.firing import Ended, FlushResult, flush
from jupyter_recall.store.base import Store

log = logging.getLogger("jupyter_recall.engine")

RETRY_DELAY = 1.0
"""Seconds before writing a batch again after the store refused it (e.g. a locked file)."""

MARGIN = 0.001
"""Seconds of room kept free before the next firing pass."""

CLOSING_ATTEMPTS = 3
"""At shutdown, attempts per batch before it is given up (logged) so that stopping ends."""


class FiringGate:
    """What the writer knows of the firing loop: whether it is firing, or asleep and until
    when (in monotonic seconds; writing ends is I/O scheduling on real time, not a scheduling
    decision)."""

    def __init__(self) -> None:
        self._free_until = math.inf
        self.passes = 0
        self._changed = anyio.Event()

    def firing(self) -> None:
        self.passes += 1
        self._free_until = 0.0

    def sleeping(self, seconds: float | None) -> None:
        self._free_until = math.inf if seconds is None else time.monotonic() + seconds
        self.notify()

    def notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    def room(self) -> float:
        return self._free_until - time.monotonic()

    async def changed(self, timeout: float) -> None:
        with anyio.move_on_after(timeout):
            await self._changed.wait()


RunRow = tuple[
    str,
    str,
    str,
    datetime,
    str,
    str,
    datetime,
    datetime | None,
    datetime | None,
    str,
    str | None,
    str | None,
    int,
    datetime | None,
]
"""A queued run as a tuple of plain values (enums by their text). Ends wait here by the
thousand under a burst, and a tuple of atomic values is dropped from the cyclic GC's watch,
while records would make each full collection scan them all (a pause of tens of ms)."""

_STATUSES = {status.value: status for status in RunStatus}
_TRIGGERS = {trigger.value: trigger for trigger in RunTrigger}


def _row(run: Run) -> RunRow:
    return (
        run.id,
        run.job_id,
        run.owner,
        run.scheduled_for,
        run.trigger.value,
        run.status.value,
        run.created_at,
        run.started_at,
        run.finished_at,
        run.output,
        run.error,
        run.engine_id,
        run.attempt,
        run.retry_at,
    )


def _run(row: RunRow) -> Run:
    return Run(
        row[0],
        row[1],
        row[2],
        row[3],
        _TRIGGERS[row[4]],
        _STATUSES[row[5]],
        row[6],
        row[7],
        row[8],
        row[9],
        row[10],
        row[11],
        row[12],
        row[13],
    )


class RunWriter:
    def __init__(
        self,
        call: Callable[[Callable[[], FlushResult]], Awaitable[FlushResult]],
        store: Store,
        clock: Clock,
        *,
        output_limit: int,
        on_flushed: Callable[[FlushResult, list[Ended]], None],
        read_back: Callable[[], bool] = lambda: True,
        gate: FiringGate | None = None,
        output_interval: float = 0.25,
        max_batch: int = 256,
        max_defer: float = 1.0,
    ) -> None:
        self._call = call
        self._store = store
        self._clock = clock
        self._output_limit = output_limit
        self._on_flushed = on_flushed
        self._read_back = read_back
        """Whether the settled job states are wanted (by events) with each batch."""
        self._output_interval = output_interval
        self._max_batch = max_batch
        self._gate = gate or FiringGate()
        self._max_defer = max_defer
        self._oldest: float | None = None
        """When the oldest change still queued was queued (monotonic seconds)."""
        self._forced_after = -1
        self._batch_seconds = 0.002
        """How long writing a batch takes (a moving average)."""
        self._updates: dict[str, RunRow] = {}
        self._ended: list[tuple[str, int, Job | None]] = []
        """Ended runs (their final state is in ``_updates``): id, others in flight, job."""
        self._outputs: dict[str, list[str]] = {}
        self._work = anyio.Event()
        self._urgent = anyio.Event()
        self._closing = False
        self._stopped = anyio.Event()
        self._failures = 0

    # --- producers (called from the event loop, never block) -------------------------------

    def started(self, run: Run) -> None:
        self._queued()
        self._updates[run.id] = _row(run)
        self._work.set()

    def output(self, run_id: str, text: str) -> None:
        self._queued()
        self._outputs.setdefault(run_id, []).append(text)
        self._work.set()

    def ended(self, item: Ended) -> None:
        self._queued()
        self._updates[item.run.id] = _row(item.run)
        self._ended.append((item.run.id, item.others_in_flight, item.job))
        self._work.set()
        self._urgent.set()

    def _queued(self) -> None:
        if self._oldest is None:
            self._oldest = time.monotonic()

    @property
    def pending(self) -> bool:
        return bool(self._updates or self._ended or self._outputs)

    # --- the loop ---------------------------------------------------------------------------

    async def run(self) -> None:
        try:
            while not (self._closing and not self.pending):
                await self._work.wait()
                if not self._urgent.is_set() and not self._closing:
                    with anyio.move_on_after(self._output_interval):
                        await self._urgent.wait()
                # Fresh events before taking the batch: anything queued from here on sets
                # them again, so no wake-up is lost.
                self._work = anyio.Event()
                self._urgent = anyio.Event()
                await self._drain()
        finally:
            self._stopped.set()

    async def _drain(self) -> None:
        """Write what is queued, batch by batch, giving way to the firing loop."""
        while self.pending:
            if self._closing or self._gate.room() >= self._batch_seconds + MARGIN:
                await self._write_batch()
                continue
            waited = time.monotonic() - (self._oldest or time.monotonic())
            if waited >= self._max_defer and self._gate.passes != self._forced_after:
                self._forced_after = self._gate.passes
                await self._write_batch()
                continue
            await self._gate.changed(max(self._max_defer - waited, MARGIN))

    async def close(self) -> None:
        """Write what is queued, then stop the loop."""
        self._closing = True
        self._work.set()
        self._urgent.set()
        self._gate.notify()
        await self._stopped.wait()

    def _take(self) -> tuple[list[Run], list[Ended], dict[str, str]]:
        taken, self._ended = self._ended[: self._max_batch], self._ended[self._max_batch :]
        ended = [
            Ended(_run(self._updates.pop(run_id)), others, job) for run_id, others, job in taken
        ]
        updates = [item.run for item in ended]
        while self._updates and len(updates) < self._max_batch:
            run_id = next(iter(self._updates))
            updates.append(_run(self._updates.pop(run_id)))
        outputs = {run_id: "".join(chunks) for run_id, chunks in self._outputs.items()}
        self._outputs = {}
        return updates, ended, outputs

    def _requeue(self, updates: list[Run], ended: list[Ended], outputs: dict[str, str]) -> None:
        for run in updates:
            self._updates.setdefault(run.id, _row(run))
        self._ended[:0] = [(item.run.id, item.others_in_flight, item.job) for item in ended]
        for run_id, text in outputs.items():
            self._outputs.setdefault(run_id, []).insert(0, text)

    async def _write_batch(self) -> None:
        updates, ended, outputs = self._take()
        job = partial(
            flush,
            self._store,
            updates=updates,
            ended=ended,
            outputs=outputs,
            output_limit=self._output_limit,
            now=self._clock.now(),
            read_back=self._read_back(),
        )
        started = time.monotonic()
        try:
            result = await self._call(job)
        except Exception:
            self._failures += 1
            if self._closing and self._failures >= CLOSING_ATTEMPTS:
                log.exception("gave up recording %d run changes at shutdown", len(updates))
                return
            log.exception("could not record %d run changes; retrying", len(updates))
            self._requeue(updates, ended, outputs)
            await anyio.sleep(RETRY_DELAY)
            return
        self._failures = 0
        self._batch_seconds = 0.8 * self._batch_seconds + 0.2 * (time.monotonic() - started)
        if not self.pending:
            self._oldest = None
        self._on_flushed(result, ended)
