"""Engines of Jupyter servers that share a store with a standalone scheduler.

``ClaimingScheduler`` fires as usual and also takes the live-kernel runs another engine fired
and marked awaiting (``engine/handoff.py``) whose kernel its server hosts. ``ExecutingScheduler``
(``RecallApp.run_scheduler = False``) fires nothing: it keeps the whole Scheduler API (REST
creates, edits and triggers jobs; manual runs execute here; its lease still interrupts the runs
of engines that died) and takes awaiting runs; the standalone scheduler (``jupyter recall
scheduler``) fires every job on the shared store.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from functools import partial

import anyio

from jupyter_recall.core.errors import NotFoundError
from jupyter_recall.core.model import Job, Run
from jupyter_recall.engine import handoff
from jupyter_recall.engine.events import (
    RUN_FINISHED,
    RUN_STARTED,
    JobUpdated,
    RunFinished,
    RunStarted,
)
from jupyter_recall.engine.scheduler import Scheduler
from jupyter_recall.store.base import RunFilter

RELAY_OVERLAP = timedelta(seconds=5)
"""How far back each look for other engines' runs reaches before the previous look: a run
committed by another process a little after it says it ended is still seen."""


class ClaimingScheduler(Scheduler):
    """A Scheduler that also executes the awaiting live-kernel runs its server can execute."""

    async def take_awaiting(self, hosts: Callable[[Job], Awaitable[bool]], *, grace: float) -> int:
        """One look for awaiting runs whose kernel ``hosts`` says is here: take and execute
        them. Returns how many were taken."""
        self._require_running()
        found = await self._in_store(
            partial(
                handoff.awaiting_runs,
                self.store,
                now=self.clock.now(),
                grace=grace,
                owner=self.fire_owner,
            )
        )
        count = 0
        for awaiting in found:
            if not handoff.needs_live_kernel(awaiting.job) or not await hosts(awaiting.job):
                continue
            run = await self._in_store(
                partial(handoff.take, self.store, awaiting, engine_id=self.engine_id)
            )
            if run is not None:
                self._runner.start(awaiting.job, run, lane=False, serial=False)
                count += 1
        return count

    async def relay_foreign_runs(self, since: datetime, seen: dict[str, str]) -> datetime:
        """Announce to this engine's listeners (SSE streams, jupyter_events) the runs other
        engines started or ended since ``since``, once per state (``seen``: run id -> status
        announced, kept by the caller). Returns the ``since`` of the next look. Nothing is
        read while nobody listens, nor on a store that relays events as they happen
        (PostgreSQL: ``engine/event_relay.py``); this look is SQLite's way."""
        now = self.clock.now()
        if self.relays_events or not self._bus.wants_remote(RUN_STARTED, RUN_FINISHED):
            return now
        where = RunFilter(since=since - RELAY_OVERLAP)
        runs = await self._in_store(partial(self.store.list_runs, owner=None, where=where))
        announced = dict(seen)
        # Only the runs of this look can come again (the next one starts later): the rest go.
        seen.clear()
        for run in runs:
            seen[run.id] = run.status.value
            if run.engine_id != self.engine_id and announced.get(run.id) != run.status.value:
                await self._announce_foreign(run)
        return now

    async def _announce_foreign(self, run: Run) -> None:
        # To live views only: outcome notifications were sent by the engine that ran it.
        if not run.status.is_final:
            self._bus.relay(RunStarted(run.owner, run))
            return
        try:
            job = await self._in_store(partial(self.store.get_job, run.job_id, owner=None))
        except NotFoundError:
            return  # deleted since: its deletion was announced
        self._bus.relay(RunFinished(run.owner, run, job))
        self._bus.relay(JobUpdated(job.owner, job))


class ExecutingScheduler(ClaimingScheduler):
    """A Scheduler whose firing loop never fires: jobs it creates or changes only wake the
    engine that fires them (through the store, see docs/deploy.md)."""

    async def _fire_loop(self) -> None:
        await anyio.sleep_forever()
