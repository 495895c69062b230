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
from functools import partial

import anyio

from jupyter_recall.core.model import Job
from jupyter_recall.engine import handoff
from jupyter_recall.engine.scheduler import Scheduler


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


class ExecutingScheduler(ClaimingScheduler):
    """A Scheduler whose firing loop never fires: jobs it creates or changes only wake the
    engine that fires them (through the store, see docs/deploy.md)."""

    async def _fire_loop(self) -> None:
        await anyio.sleep_forever()
