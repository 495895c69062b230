"""The engine's side of dependencies: it listens to ``run.finished`` and fires the jobs that
wait for the job whose run ended (``engine/dependencies.py`` does the store's part).

Nothing polls: an ended run (final for its occurrence: no retry pending) wakes the task, which
handles the upstream jobs heard since its last turn in one store call. At start it scans every
dependency once, for the upstream runs that ended while no engine listened (the server was
down, the run ended at shutdown, or another process ran it).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from functools import partial

import anyio

from jupyter_recall.core.clock import Clock
from jupyter_recall.core.dependency import UPSTREAM_ENDS
from jupyter_recall.core.model import Job, Overlap, Run
from jupyter_recall.engine import dependencies
from jupyter_recall.engine.events import JOB_UPDATED, RUN_FINISHED, Event, EventBus
from jupyter_recall.engine.runner import Runner
from jupyter_recall.store.base import Store

log = logging.getLogger("jupyter_recall.engine")

Fired = tuple[dependencies.DependentsFired, str | None]
InStore = Callable[[Callable[[], Fired]], Awaitable[Fired]]
"""The scheduler's way into its store thread."""

ERROR_BACKOFF = 1.0
"""Seconds before trying again after the store failed (what was heard is kept)."""


class DependencyTrigger:
    """Fires downstream jobs when their upstream's runs end. ``run`` is its task."""

    def __init__(
        self,
        store: Store,
        in_store: InStore,
        runner: Runner,
        bus: EventBus,
        clock: Clock,
        *,
        engine_id: str,
        owner: str | None,
    ) -> None:
        self._store = store
        self._in_store = in_store
        self._runner = runner
        self._bus = bus
        self._clock = clock
        self._engine_id = engine_id
        self._owner = owner
        self._heard: set[str] = set()
        self._catching_up: set[str] = set()
        self._scan = True
        """The first turn scans every dependency (ends missed while no engine listened)."""
        self._wake = anyio.Event()
        self._wake.set()

    def heard(self, event: Event) -> None:
        """A ``run.finished`` listener: an upstream candidate when its run executed and is its
        occurrence's outcome (a failed attempt whose retry is pending is not)."""
        run = event.run
        if run is not None and run.is_final_for_occurrence and run.status.value in UPSTREAM_ENDS:
            self.upstream_changed(run.job_id)

    def upstream_changed(self, job_id: str, *, catching_up: bool = False) -> None:
        """Look at the dependencies on ``job_id`` again: a run ended, or (``catching_up``) a
        dependent resumed with catch-up, whose pending ends ``coalesce`` then decides."""
        (self._catching_up if catching_up else self._heard).add(job_id)
        self._wake.set()

    async def run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake = anyio.Event()
            try:
                await self._turn()
            except Exception:
                log.exception("firing dependent jobs failed; trying again in %s s", ERROR_BACKOFF)
                self._wake.set()
                await anyio.sleep(ERROR_BACKOFF)

    async def _turn(self) -> None:
        if self._scan:
            await self._scan_all()
            self._scan = False
        for pending, catching_up in ((self._catching_up, True), (self._heard, False)):
            while pending:
                upstream_ids = sorted(pending)
                more, _ = await self._fire(upstream_ids, after=None, catching_up=catching_up)
                pending.difference_update(upstream_ids)
                if more:  # a backlog longer than a batch: the same upstreams again
                    pending.update(upstream_ids)

    async def _scan_all(self) -> None:
        after: str | None = None
        while True:
            more, last = await self._fire(None, after=after)
            if more:  # a backlog longer than a batch: the same page again
                continue
            if last is None:
                return
            after = last

    async def _fire(
        self, upstream_ids: list[str] | None, *, after: str | None, catching_up: bool = False
    ) -> tuple[bool, str | None]:
        result, last = await self._in_store(
            partial(
                dependencies.fire_dependents,
                self._store,
                upstream_ids,
                now=self._clock.now(),
                engine_id=self._engine_id,
                in_flight=self._runner.in_flight,
                owner=self._owner,
                after=after,
                catching_up=catching_up,
            )
        )
        self._announce(result)
        return result.more, last

    def _announce(self, result: dependencies.DependentsFired) -> None:
        for job, run in result.fired:
            self._start(job, run)
        for run in result.recorded:
            self._bus.run(RUN_FINISHED, run)
        for job in result.jobs:
            self._bus.job(JOB_UPDATED, job)

    def _start(self, job: Job, run: Run) -> None:
        self._runner.start(job, run, lane=True, serial=job.policies.overlap is not Overlap.ALLOW)
