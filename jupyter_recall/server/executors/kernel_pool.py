"""Warm fresh kernels: a few kernels per kernel spec started ahead of the runs that need them.

A run takes a ready kernel (started, connected, handshake done) instead of waiting about half
a second for one; the pool starts a replacement in the background. A kernel is handed out once
and shut down after its run: never reused, so runs share no state. Pooled kernels are started
in the server's root with the server's environment; the run moves them to its cwd and sets its
variables before its code (see ``fresh.py``), which is why only Python kernel specs can be
pooled. Kernels the server culled or that died while waiting are dropped when found.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections import deque

import anyio
from jupyter_client.kernelspec import NoSuchKernel

from jupyter_recall.server.executors.iopub import run_quietly
from jupyter_recall.server.executors.launcher import KernelLauncher, LaunchedKernel

log = logging.getLogger(__name__)

POOLABLE_LANGUAGES = ("python",)
RETRY_DELAYS = (1.0, 5.0, 30.0)
"""Seconds before another start after consecutive failures (the last one repeats)."""


class KernelPool:
    """Pre-started kernels per kernel spec name, refilled in the background."""

    def __init__(
        self,
        launcher: KernelLauncher,
        sizes: dict[str, int],
        *,
        cwd: str,
        startup_timeout: float = 60.0,
    ) -> None:
        self._launcher = launcher
        self._sizes = {name: size for name, size in sizes.items() if size > 0}
        self._cwd = cwd
        self._startup_timeout = startup_timeout
        self._ready: dict[str, deque[LaunchedKernel]] = {}
        self._wanted: dict[str, asyncio.Event] = {}
        self._fillers: list[asyncio.Task[None]] = []
        self.problems: list[str] = []
        """Pool entries refused at start, and why (also logged)."""

    async def start(self) -> None:
        """Check each kernel spec and start filling; refused entries are logged and skipped."""
        for name, size in self._sizes.items():
            problem = await self._check(name)
            if problem is not None:
                self.problems.append(problem)
                log.error("jupyter_recall: %s", problem)
                continue
            self._ready[name] = deque()
            self._wanted[name] = asyncio.Event()
            self._wanted[name].set()
            self._fillers.append(asyncio.create_task(self._fill(name, size)))

    async def _check(self, name: str) -> str | None:
        try:
            language = await self._launcher.spec_language(name)
        except (KeyError, NoSuchKernel):
            return f"RecallApp.kernel_pool[{name!r}]: no such kernel spec; not pooled"
        except Exception as error:  # a gateway that does not answer, an unreadable spec
            return (
                f"RecallApp.kernel_pool[{name!r}]: cannot read the kernel spec ({error}); "
                "not pooled"
            )
        if language.lower() not in POOLABLE_LANGUAGES:
            return (
                f"RecallApp.kernel_pool[{name!r}]: its language is {language or 'unknown'!r}; "
                "only a Python kernel can take a run's cwd and environment once started "
                f"(accepted: {', '.join(POOLABLE_LANGUAGES)} kernel specs); not pooled"
            )
        return None

    def pooled(self, kernel_name: str | None) -> bool:
        return (kernel_name or self._launcher.default_kernel_name) in self._ready

    def ready_ids(self, kernel_name: str) -> list[str]:
        """The ids of the kernels waiting in the pool, oldest first."""
        return [kernel.kernel_id for kernel in self._ready.get(kernel_name, ())]

    async def take(self, kernel_name: str | None) -> LaunchedKernel | None:
        """A ready kernel of that spec, now, or None (none ready, or not pooled)."""
        name = kernel_name or self._launcher.default_kernel_name
        ready = self._ready.get(name)
        while ready:
            kernel = ready.popleft()
            self._wanted[name].set()
            if await self._launcher.is_alive(kernel):
                return kernel
            log.info("jupyter_recall: pooled kernel %s is gone; dropped", kernel.kernel_id)
            await self._discard(kernel)
        return None

    async def _fill(self, name: str, size: int) -> None:
        failures = 0
        while True:
            await self._wanted[name].wait()
            self._wanted[name].clear()
            while len(self._ready[name]) < size:
                try:
                    kernel = await self._launcher.start(
                        name, cwd=self._cwd, env=dict(os.environ), timeout=self._startup_timeout
                    )
                except Exception:
                    delay = RETRY_DELAYS[min(failures, len(RETRY_DELAYS) - 1)]
                    failures += 1
                    log.exception("jupyter_recall: could not start a pooled %s kernel", name)
                    await asyncio.sleep(delay)
                    continue
                failures = 0
                await self._warm_up(kernel)
                # Started for no run in particular: the run that takes it gives it its cwd and
                # variables.
                kernel.settled = False
                self._ready[name].append(kernel)

    async def _warm_up(self, kernel: LaunchedKernel) -> None:
        """A first execution costs a fresh kernel tens of milliseconds; not the run's."""
        try:
            await run_quietly(kernel.connection, "pass", timeout=self._startup_timeout)
        except Exception:
            log.warning("jupyter_recall: pooled kernel %s did not warm up", kernel.kernel_id)

    async def _discard(self, kernel: LaunchedKernel) -> None:
        with anyio.CancelScope(shield=True):
            await self._launcher.shutdown(kernel)

    async def aclose(self) -> None:
        """Stop refilling and shut down every kernel still waiting."""
        for filler in self._fillers:
            filler.cancel()
        await asyncio.gather(*self._fillers, return_exceptions=True)
        self._fillers.clear()
        for ready in self._ready.values():
            while ready:
                await self._discard(ready.popleft())
