"""Kernel executors of the server extension: the one entry point the ExtensionApp needs.

``KernelExecutors.from_serverapp(serverapp)`` gives the engine its executor (a router over live
kernels, fresh headless kernels and the server itself); ``aclose()`` at server shutdown closes
the connections it opened to live kernels. The parts live in ``server/executors/``.
"""

from __future__ import annotations

from typing import Any

from jupyter_recall.core.model import Job, Run
from jupyter_recall.engine.executors import OutputSink, RunOutcome
from jupyter_recall.server.executors import (
    HeadlessExecutor,
    LiveKernelExecutor,
    ServerActionExecutor,
    ServerManagers,
    TargetRouter,
)
from jupyter_recall.server.executors.fresh import FreshKernels
from jupyter_recall.server.executors.launcher import ManagedKernelLauncher

__all__ = ["KernelExecutors", "ServerManagers"]


class KernelExecutors:
    """The engine's executor inside a Jupyter server (implements the Executor protocol)."""

    def __init__(
        self,
        managers: ServerManagers,
        *,
        fresh: FreshKernels | None = None,
        handshake_timeout: float = 60.0,
        startup_timeout: float = 60.0,
    ) -> None:
        self.managers = managers
        self.live = LiveKernelExecutor(managers, handshake_timeout=handshake_timeout)
        # Fresh kernels come from the server's own kernel manager unless told otherwise.
        fresh = fresh or FreshKernels(
            ManagedKernelLauncher(managers.kernel_manager, managers.kernel_spec_manager)
        )
        self.headless = HeadlessExecutor(managers, fresh, startup_timeout=startup_timeout)
        self.server = ServerActionExecutor()
        self.router = TargetRouter(kernel=self.live, headless=self.headless, server=self.server)

    @classmethod
    def from_serverapp(
        cls, serverapp: Any, *, fresh: FreshKernels | None = None, **options: float
    ) -> KernelExecutors:
        return cls(ServerManagers.from_serverapp(serverapp), fresh=fresh, **options)

    def concurrency_key(self, job: Job) -> str:
        return self.router.concurrency_key(job)

    async def execute(self, job: Job, run: Run, output: OutputSink) -> RunOutcome:
        return await self.router.execute(job, run, output)

    async def aclose(self) -> None:
        await self.live.aclose()
