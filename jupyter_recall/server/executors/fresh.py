"""A kernel of a run's own: taken from the pool or started for it, shut down after it.

Kernels come from a ``KernelLauncher`` (in the server: the server's kernel manager, so they are
in ``/api/kernels`` while they run and follow its kernel specs, provisioners and gateway). A
kernel is shut down when its run ends or is stopped (stopping a headless run is shutting its
kernel down) and never serves a second run. Nothing here installs signal handlers: the server
keeps its own.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from jupyter_recall.core.errors import KernelGone
from jupyter_recall.core.model import Job, Run
from jupyter_recall.server.executors.iopub import run_quietly
from jupyter_recall.server.executors.kernel_pool import KernelPool
from jupyter_recall.server.executors.launcher import KernelLauncher, LaunchedKernel


def run_variables(job: Job, run: Run) -> dict[str, str]:
    """The environment variables that tell a kernel which job and run it serves."""
    return {"JUPYTER_RECALL_JOB_ID": job.id, "JUPYTER_RECALL_RUN_ID": run.id}


def settle_code(cwd: str | None, variables: dict[str, str]) -> str:
    """Python that gives a started kernel the run's variables (and cwd), leaving no names."""
    code = f"__import__('os').environ.update({variables!r})"
    if cwd is not None:
        code += f"; __import__('os').chdir({cwd!r})"
    return code


class FreshKernels:
    """Fresh kernels for headless runs and notebooks."""

    def __init__(self, launcher: KernelLauncher, pool: KernelPool | None = None) -> None:
        self.launcher = launcher
        self.pool = pool

    async def start(self) -> None:
        """Shut down what a killed predecessor left running, then fill the pool."""
        await self.launcher.recover()
        if self.pool is not None:
            await self.pool.start()

    async def aclose(self) -> None:
        """Shut down the pool's waiting kernels, then any kernel started and not shut down."""
        if self.pool is not None:
            await self.pool.aclose()
        await self.launcher.aclose()

    @asynccontextmanager
    async def kernel(
        self,
        kernel_name: str | None,
        *,
        cwd: str,
        variables: dict[str, str],
        startup_timeout: float,
    ) -> AsyncIterator[LaunchedKernel]:
        """A kernel for the duration of the block, shut down however the block ends."""
        kernel = await self.pool.take(kernel_name) if self.pool is not None else None
        if kernel is None:
            kernel = await self.launcher.start(
                kernel_name, cwd=cwd, env={**os.environ, **variables}, timeout=startup_timeout
            )
        try:
            if not kernel.settled:
                await self._settle(kernel, cwd, variables, timeout=startup_timeout)
            yield kernel
        finally:
            with anyio.CancelScope(shield=True):
                await self.launcher.shutdown(kernel)

    async def _settle(
        self, kernel: LaunchedKernel, cwd: str, variables: dict[str, str], *, timeout: float
    ) -> None:
        """Give a pooled or remote kernel the run's cwd and variables before its code runs.

        Only Python kernels can be told; the pool holds Python kernels only, and a remote
        kernel of another language gets what its gateway passes (``KERNEL_*`` variables)."""
        connection = kernel.connection
        if connection.language != "python":
            return
        # A remote kernel's filesystem is not ours: its gateway placed it (KERNEL_WORKING_DIR).
        code = settle_code(None if self.launcher.remote else cwd, variables)
        execution = await run_quietly(connection, code, timeout=timeout)
        if execution.error is not None:
            raise KernelGone(f"{connection.label} could not take the run's cwd: {execution.error}")
