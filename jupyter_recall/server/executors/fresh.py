"""A kernel of a run's own: started for it, shut down after it, invisible to the server.

The kernel is not in the server's kernel list, so the server never culls or restarts it, and it
is shut down when the run ends or is stopped (stopping a headless run is shutting it down).
Nothing here installs signal handlers: the server keeps its own.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
from jupyter_client.ioloop.manager import AsyncIOLoopKernelManager

from jupyter_recall.core.model import Job, Run
from jupyter_recall.server.executors.context import ServerManagers

log = logging.getLogger(__name__)


def run_environment(job: Job, run: Run) -> dict[str, str]:
    """The kernel's environment: the server's, plus which job and run it serves."""
    return {**os.environ, "JUPYTER_RECALL_JOB_ID": job.id, "JUPYTER_RECALL_RUN_ID": run.id}


@asynccontextmanager
async def fresh_kernel(
    managers: ServerManagers,
    kernel_name: str | None,
    *,
    cwd: str,
    env: dict[str, str],
    startup_timeout: float,
) -> AsyncIterator[AsyncIOLoopKernelManager]:
    """A kernel of our own for the duration of the block, shut down however the block ends."""
    spec_manager = managers.kernel_spec_manager
    name = kernel_name or spec_manager.default_kernel_name
    manager = AsyncIOLoopKernelManager(
        kernel_name=name, kernel_spec_manager=spec_manager, autorestart=False
    )
    try:
        with anyio.fail_after(startup_timeout):
            await manager.start_kernel(cwd=cwd, env=env)
        yield manager
    finally:
        with anyio.CancelScope(shield=True):
            await _shutdown(manager)


async def _shutdown(manager: AsyncIOLoopKernelManager) -> None:
    if not manager.has_kernel:
        manager.cleanup_resources()
        return
    try:
        # The kernel holds nothing worth a graceful exit: the run is over or was stopped.
        await manager.shutdown_kernel(now=True)
    except Exception:
        log.exception("could not shut down headless kernel %s", manager.kernel_name)
