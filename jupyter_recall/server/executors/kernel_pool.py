"""Warm fresh kernels: a few kernels per kernel spec started ahead of the runs that need them.

A run takes a ready kernel (started, connected, handshake done) instead of waiting about half
a second for one; the pool starts a replacement in the background. A kernel is handed out once
and shut down after its run: never reused, so runs share no state. Pooled kernels are started
in the server's root with the server's environment; the run moves them to its cwd and sets its
variables before its code (see ``fresh.py``), which is why only Python kernel specs can be
pooled. Kernels the server culled or that died while waiting (their gateway restarted, say) are
dropped when a run would take them or at the next periodic check, whichever comes first, and
replaced. A kernel spec that cannot be read because the gateway does not answer is asked again
in the background; pooling of that spec starts when it answers.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections import deque
from collections.abc import Coroutine
from dataclasses import dataclass

import anyio
from jupyter_client.kernelspec import NoSuchKernel

from jupyter_recall.server.executors.iopub import run_quietly
from jupyter_recall.server.executors.launcher import KernelLauncher, LaunchedKernel, unreachable

log = logging.getLogger(__name__)

POOLABLE_LANGUAGES = ("python",)
RETRY_DELAYS = (1.0, 5.0, 30.0)
"""Seconds before another start after consecutive failures (the last one repeats)."""
CHECK_INTERVAL = 10.0
"""Seconds between checks that the ready kernels are still alive (culled, lost with a gateway)."""


def retry_delay(failures: int) -> float:
    return RETRY_DELAYS[min(failures, len(RETRY_DELAYS) - 1)]


@dataclass(frozen=True, slots=True)
class Unanswered:
    """A kernel spec that could not be read for now (its gateway does not answer)."""

    reason: str


class KernelPool:
    """Pre-started kernels per kernel spec name, refilled in the background."""

    def __init__(
        self,
        launcher: KernelLauncher,
        sizes: dict[str, int],
        *,
        cwd: str,
        startup_timeout: float = 60.0,
        check_interval: float = CHECK_INTERVAL,
    ) -> None:
        self._launcher = launcher
        self._sizes = {name: size for name, size in sizes.items() if size > 0}
        self._cwd = cwd
        self._startup_timeout = startup_timeout
        self._check_interval = check_interval
        self._ready: dict[str, deque[LaunchedKernel]] = {}
        self._wanted: dict[str, asyncio.Event] = {}
        self._fillers: list[asyncio.Task[None]] = []
        self.problems: list[str] = []
        """Pool entries refused at start, and why (also logged)."""

    async def start(self) -> None:
        """Check each kernel spec and start filling; refused entries are logged and skipped,
        those whose gateway does not answer are asked again in the background."""
        for name, size in self._sizes.items():
            verdict = await self._check(name)
            if isinstance(verdict, Unanswered):
                log.warning(
                    "jupyter_recall: RecallApp.kernel_pool[%r]: cannot read the kernel spec "
                    "now (%s); asking again in the background, pooling starts when it answers",
                    name,
                    verdict.reason,
                )
                self._spawn(self._start_later(name, size))
            elif verdict is not None:
                self._refuse(verdict)
            else:
                self._begin(name, size)
        if self._fillers:
            self._spawn(self._watch())

    def _spawn(self, work: Coroutine[None, None, None]) -> None:
        self._fillers.append(asyncio.create_task(work))

    def _refuse(self, problem: str) -> None:
        self.problems.append(problem)
        log.error("jupyter_recall: %s", problem)

    def _begin(self, name: str, size: int) -> None:
        self._ready[name] = deque()
        self._wanted[name] = asyncio.Event()
        self._wanted[name].set()
        self._spawn(self._fill(name, size))

    async def _start_later(self, name: str, size: int) -> None:
        failures = 0
        while True:
            await asyncio.sleep(retry_delay(failures))
            failures += 1
            verdict = await self._check(name)
            if not isinstance(verdict, Unanswered):
                break
        if verdict is not None:
            self._refuse(verdict)
            return
        # At the warning's level: it closes the warning given at the start.
        log.warning("jupyter_recall: RecallApp.kernel_pool[%r]: the kernel spec answers", name)
        self._begin(name, size)

    async def _check(self, name: str) -> str | Unanswered | None:
        try:
            language = await self._launcher.spec_language(name)
        except (KeyError, NoSuchKernel):
            return f"RecallApp.kernel_pool[{name!r}]: no such kernel spec; not pooled"
        except Exception as error:
            if unreachable(error):  # a gateway that does not answer (yet)
                return Unanswered(str(error))
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
            if await self._alive(kernel):
                return kernel
            await self._drop(kernel)
        return None

    async def _alive(self, kernel: LaunchedKernel) -> bool:
        try:
            return await self._launcher.is_alive(kernel)
        except Exception as error:  # a gateway that does not answer
            log.info("jupyter_recall: pooled kernel %s: no answer (%s)", kernel.kernel_id, error)
            return False

    async def _drop(self, kernel: LaunchedKernel) -> None:
        log.info("jupyter_recall: pooled kernel %s is gone; dropped", kernel.kernel_id)
        await self._discard(kernel)

    async def _watch(self) -> None:
        """Drop the ready kernels that died or were culled while waiting, so that others start
        without waiting for a run to find them."""
        while True:
            await asyncio.sleep(self._check_interval)
            for name, ready in list(self._ready.items()):
                await self._check_ready(name, ready)

    async def _check_ready(self, name: str, ready: deque[LaunchedKernel]) -> None:
        for kernel in list(ready):
            if await self._alive(kernel) or kernel not in ready:
                continue  # alive, or taken by a run meanwhile (which checks it again)
            ready.remove(kernel)
            self._wanted[name].set()
            await self._drop(kernel)

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
                except Exception as error:
                    self._failed_start(name, error, failures)
                    await asyncio.sleep(retry_delay(failures))
                    failures += 1
                    continue
                if failures:
                    # At the warning's level: it closes the warning of the outage.
                    log.warning(
                        "jupyter_recall: pooled %s kernels start again (after %d failed starts)",
                        name,
                        failures,
                    )
                failures = 0
                await self._warm_up_into(self._ready[name], kernel)

    async def _warm_up_into(self, ready: deque[LaunchedKernel], kernel: LaunchedKernel) -> None:
        try:
            await self._warm_up(kernel)
        except BaseException:
            # Cancelled (the server stops): not in the pool yet, so nothing else would shut
            # it down.
            await self._discard(kernel)
            raise
        # Started for no run in particular: the run that takes it gives it its cwd and
        # variables.
        kernel.settled = False
        ready.append(kernel)

    @staticmethod
    def _failed_start(name: str, error: Exception, failures: int) -> None:
        """One line per outage (the first failure of a series; the rest at debug level); a
        traceback only for what is not a gateway that does not answer."""
        if failures:
            log.debug("jupyter_recall: could not start a pooled %s kernel: %s", name, error)
            return
        log.warning(
            "jupyter_recall: could not start a pooled %s kernel (%s); retrying after %s s, "
            "then every %s s",
            name,
            error,
            ", ".join(f"{delay:g}" for delay in RETRY_DELAYS[:-1]),
            f"{RETRY_DELAYS[-1]:g}",
            exc_info=not unreachable(error),
        )

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
