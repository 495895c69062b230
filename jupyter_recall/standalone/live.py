"""Live-kernel runs in the standalone scheduler, which hosts no user's kernel.

A live-kernel run fired here is handed to a server that hosts its notebook's kernel
(``engine/handoff.py``): it is marked awaiting, and a server takes it. If none has taken it
``grace`` seconds after its due instant, the job's ``on_missing_kernel`` policy applies through
the usual live-kernel executor over this process's own sessions: ``fail`` and ``skip`` record
why, ``start`` starts a kernel for the notebook in this process and runs there.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TypeVar

import anyio

from jupyter_recall.core.clock import Clock
from jupyter_recall.core.model import Job, Run
from jupyter_recall.engine import handoff
from jupyter_recall.engine.executors import Executor, OutputSink, RunOutcome
from jupyter_recall.store.base import Store

T = TypeVar("T")

POLL = 0.5
"""Seconds between looks at whether a server took an awaiting run."""

LEASE = 30.0
"""Seconds the lease of awaiting runs lasts past each renewal (renewed every ``POLL``)."""


class HandedLiveKernels:
    """The live-kernel executor of a process without users' kernels: hand over, or apply the
    policy after the grace period."""

    def __init__(
        self, live: Executor, store: Store, clock: Clock, *, engine_id: str, grace: float
    ) -> None:
        self._live = live
        self._store = store
        self._clock = clock
        self._engine_id = engine_id
        self._grace = grace
        self._limiter = anyio.CapacityLimiter(1)

    def concurrency_key(self, job: Job) -> str:
        return self._live.concurrency_key(job)

    async def _in_store(self, func: Callable[[], T]) -> T:
        return await anyio.to_thread.run_sync(func, limiter=self._limiter)

    async def execute(self, job: Job, run: Run, output: OutputSink) -> RunOutcome:
        engine = self._engine_id
        deadline = run.scheduled_for.timestamp() + self._grace
        # One look first: the row this engine just wrote reaches the store before the mark.
        await anyio.sleep(POLL)
        await self._in_store(
            partial(
                handoff.mark_awaiting,
                self._store,
                run.id,
                engine_id=engine,
                now=self._clock.now(),
                lease=LEASE,
            )
        )
        while self._clock.now().timestamp() < deadline:
            if await self._in_store(partial(handoff.taken, self._store, run.id, engine_id=engine)):
                return RunOutcome(handed_off=True)
            renew = partial(
                handoff.renew_awaiting,
                self._store,
                engine_id=engine,
                now=self._clock.now(),
                lease=LEASE,
            )
            await self._in_store(renew)
            await anyio.sleep(POLL)
        if not await self._in_store(partial(handoff.keep, self._store, run.id, engine_id=engine)):
            return RunOutcome(handed_off=True)
        return await self._live.execute(job, run, output)
