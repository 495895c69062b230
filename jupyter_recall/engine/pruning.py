"""The engine's retention task: deletes the runs past their jobs' retention
(``engine/retention.py``) in the background, and on demand (``Scheduler.prune_runs``).

It is the lowest of the engine's priorities. Each step is one short transaction in the store
thread (a page of jobs), and a background step starts only while the firing loop sleeps with
at least ``ROOM`` seconds (or twice a step's time) before its next pass (``FiringGate``, as the
run writer does) and no run fired ahead waits for its instant: under a burst the sweep waits,
so it never delays a firing. Between sweeps it looks only at the jobs
whose runs ended since the last one; every ``FULL_SWEEP_EVERY`` intervals (and at start) at
every job, for runs that aged past ``keep_runs_for`` with no new end.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from datetime import timedelta
from functools import partial

from jupyter_recall.core.clock import Clock
from jupyter_recall.core.lifecycle import Retention
from jupyter_recall.engine import retention
from jupyter_recall.engine.writer import FiringGate
from jupyter_recall.store.base import JobCursor, Store

log = logging.getLogger("jupyter_recall.engine")

ROOM = 0.05
"""Seconds of sleep the firing loop must have ahead for a background step to start, at the
least: twice what a step takes (measured) when that is more."""

BACKGROUND_PAGE = 10
"""Jobs per background step (on demand, ``retention.JOBS_PER_PAGE``): short steps fit in the
firing loop's sleeps under a stream of jobs."""

BACKGROUND_RUNS_PER_JOB = 50
"""Runs of one job deleted per background step (so at most 500 a step); a job with more is
taken again by the next step."""

FULL_SWEEP_EVERY = 10
"""Every this many intervals the sweep looks at every job, not only those with new ends."""

WAIT_FOR_ROOM = 1.0
"""Longest wait for room before looking at the gate again."""


class Pruning:
    def __init__(
        self,
        call: Callable[[Callable[[], retention.PrunePage]], Awaitable[retention.PrunePage]],
        store: Store,
        clock: Clock,
        defaults: Retention,
        *,
        interval: float,
        gate: FiringGate,
        busy: Callable[[], bool] = lambda: False,
        deleted: Callable[[retention.DeletedRuns], None] = lambda _: None,
    ) -> None:
        if interval <= 0:
            raise ValueError(f"prune_interval must be above 0 seconds, got {interval}")
        self._call = call
        self._store = store
        self._clock = clock
        self.defaults = defaults
        self._interval = interval
        self._gate = gate
        self._busy = busy
        """Whether runs are about to start (fired ahead, waiting for their instants)."""
        self._deleted = deleted
        """Told of the runs each step deleted that left files (it must not raise)."""
        self._ended: set[str] = set()
        """Jobs whose runs ended since the last sweep."""
        self._step_seconds = 0.005
        """How long a background step takes (a moving average)."""

    def ended(self, job_ids: Iterable[str]) -> None:
        self._ended.update(job_ids)

    async def run(self) -> None:
        """The background sweeps, forever (cancelled with the engine's loops)."""
        sweeps = 0
        while True:
            try:
                if sweeps % FULL_SWEEP_EVERY == 0:
                    self._ended.clear()
                    await self._sweep(owner=None, dry_run=False, background=True)
                else:
                    await self._sweep_ended()
            except Exception:
                log.exception("pruning runs failed; trying again at the next sweep")
            sweeps += 1
            wake = self._clock.now() + timedelta(seconds=self._interval)
            await self._clock.sleep_until(wake, max_sleep=self._interval)

    async def prune(self, *, owner: str | None, dry_run: bool) -> dict[str, int]:
        return await self._sweep(owner=owner, dry_run=dry_run, background=False)

    async def _room(self) -> None:
        while self._busy() or self._gate.room() < max(ROOM, 2 * self._step_seconds):
            await self._gate.changed(WAIT_FOR_ROOM)

    async def _step(self, step: Callable[[], retention.PrunePage]) -> retention.PrunePage:
        """One background step, once the firing loop has room for it; its time measured."""
        await self._room()
        started = time.monotonic()
        page = await self._call(step)
        took = time.monotonic() - started
        # Up at once, down slowly: a slow step must not be followed by one that underestimates.
        self._step_seconds = max(took, 0.8 * self._step_seconds + 0.2 * took)
        return page

    async def _sweep(self, *, owner: str | None, dry_run: bool, background: bool) -> dict[str, int]:
        total: dict[str, int] = {}
        after: JobCursor | None = None
        while True:
            step = partial(
                retention.prune_page,
                self._store,
                defaults=self.defaults,
                now=self._clock.now(),
                after=after,
                owner=owner,
                dry_run=dry_run,
                size=BACKGROUND_PAGE if background else retention.JOBS_PER_PAGE,
                per_job=BACKGROUND_RUNS_PER_JOB if background else retention.RUNS_PER_JOB,
            )
            page = await (self._step(step) if background else self._call(step))
            self._announce(page)
            retention.merge(total, page)
            if page.more and not dry_run:
                continue  # the same jobs again: one had more runs than a page deletes
            if page.after is None:
                return total
            after = page.after

    async def _sweep_ended(self) -> None:
        pending = sorted(self._ended)
        self._ended.clear()
        while pending:
            ids, pending = pending[:BACKGROUND_PAGE], pending[BACKGROUND_PAGE:]
            now = self._clock.now()
            step = partial(
                retention.prune_ids,
                self._store,
                ids,
                defaults=self.defaults,
                now=now,
                per_job=BACKGROUND_RUNS_PER_JOB,
            )
            page = await self._step(step)
            self._announce(page)
            if page.more:
                pending[:0] = ids

    def _announce(self, page: retention.PrunePage) -> None:
        for deleted in page.deleted:
            self._deleted(deleted)
