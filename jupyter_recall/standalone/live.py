"""Live-kernel runs in the standalone scheduler, which hosts no user's kernel.

A live-kernel run fired here waits ``grace`` seconds after its due instant (a server may be
coming back), then follows the job's ``on_missing_kernel`` policy through the usual live-kernel
executor over this process's own sessions: ``fail`` and ``skip`` record why, ``start`` starts a
kernel for the notebook in this process and runs there.
"""

from __future__ import annotations

import anyio

from jupyter_recall.core.clock import Clock
from jupyter_recall.core.model import Job, Run
from jupyter_recall.engine.executors import Executor, OutputSink, RunOutcome


class GracedLiveKernels:
    """The live-kernel executor of a process without users' kernels, after a grace period."""

    def __init__(self, live: Executor, clock: Clock, *, grace: float) -> None:
        self._live = live
        self._clock = clock
        self._grace = grace

    def concurrency_key(self, job: Job) -> str:
        return self._live.concurrency_key(job)

    async def execute(self, job: Job, run: Run, output: OutputSink) -> RunOutcome:
        due = run.scheduled_for
        waited = (self._clock.now() - due).total_seconds()
        if waited < self._grace:
            await anyio.sleep(self._grace - waited)
        return await self._live.execute(job, run, output)
