"""Where fresh kernels come from: a Jupyter multi-kernel manager, behind a small protocol.

In the server the manager is the server's own (``serverapp.kernel_manager``): fresh kernels then
follow its configuration (kernel specs, provisioners, ``--gateway-url``, which makes it a
``GatewayMappingKernelManager``) and are listed in ``/api/kernels`` while they run. A process
without a Jupyter server can hand ``ManagedKernelLauncher`` a plain ``AsyncMultiKernelManager``,
or implement ``KernelLauncher`` itself.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any, Protocol

import anyio
from jupyter_core.utils import ensure_async
from jupyter_server.gateway.gateway_client import gateway_request
from jupyter_server.gateway.managers import GatewayMappingKernelManager
from jupyter_server.utils import url_escape, url_path_join
from tornado.httpclient import HTTPClientError
from tornado.web import HTTPError

from jupyter_recall.server.executors.gateway_channels import (
    GatewayConnection,
    WakingGatewayKernelClient,
)
from jupyter_recall.server.executors.iopub import LOST_STATES, ChannelRouter, KernelConnection
from jupyter_recall.server.executors.kernel_journal import KernelJournal

log = logging.getLogger(__name__)


def unreachable(error: Exception) -> bool:
    """An error of a gateway that does not answer (or answers it cannot serve now)."""
    if isinstance(error, HTTPError):  # the server's gateway client's
        return error.status_code >= 500
    if isinstance(error, HTTPClientError):  # tornado's (599: no answer, the stream closed)
        return error.code >= 500
    return isinstance(error, (OSError, TimeoutError))


@dataclass(slots=True)
class LaunchedKernel:
    """A started kernel with our connection to it, handshake done."""

    kernel_id: str
    kernel_name: str
    manager: Any
    """This kernel's own ``KernelManager`` (what nbclient takes as ``km``)."""
    connection: ChannelRouter
    settled: bool
    """Started with the run's cwd and environment (else the run applies them itself)."""


class KernelLauncher(Protocol):
    """Starts and shuts down fresh kernels."""

    @property
    def remote(self) -> bool:
        """Kernels run elsewhere (a gateway): paths of this machine mean nothing to them."""

    @property
    def default_kernel_name(self) -> str: ...

    async def start(
        self, kernel_name: str | None, *, cwd: str, env: dict[str, str], timeout: float
    ) -> LaunchedKernel: ...

    async def is_alive(self, kernel: LaunchedKernel) -> bool: ...

    async def shutdown(self, kernel: LaunchedKernel) -> None: ...

    async def aclose(self) -> None:
        """Shut down every kernel it started that is still running."""

    async def recover(self) -> None:
        """Shut down the kernels a predecessor killed before it could left running."""

    async def spec_language(self, kernel_name: str) -> str:
        """The language of a kernel spec; KeyError if there is no such spec."""


class ManagedKernelLauncher:
    """Fresh kernels from a Jupyter ``MultiKernelManager`` (the server's, or one of our own)."""

    def __init__(
        self,
        kernel_manager: Any,
        kernel_spec_manager: Any = None,
        *,
        journal: KernelJournal | None = None,
    ) -> None:
        self._manager = kernel_manager
        self._specs = kernel_spec_manager or kernel_manager.kernel_spec_manager
        self._starting: set[asyncio.Future[str]] = set()
        self._closing: set[asyncio.Task[None]] = set()
        self._started: set[str] = set()
        """Kernels started here and not shut down yet."""
        self._journal = journal if self.remote else None
        """Where this process lists its gateway kernels, for its successor after a kill."""
        self._leftovers: set[str] = set()
        """Kernels a predecessor left that could not be shut down yet (kept in the journal)."""

    @property
    def remote(self) -> bool:
        return isinstance(self._manager, GatewayMappingKernelManager)

    @property
    def default_kernel_name(self) -> str:
        return str(self._manager.default_kernel_name)

    async def spec_language(self, kernel_name: str) -> str:
        spec = await ensure_async(self._specs.get_kernel_spec(kernel_name))
        if isinstance(spec, dict):  # a gateway answers with the JSON model
            return str(spec.get("spec", {}).get("language", ""))
        return str(spec.language)

    async def start(
        self, kernel_name: str | None, *, cwd: str, env: dict[str, str], timeout: float
    ) -> LaunchedKernel:
        # Shielded: a kernel whose start is cancelled half-way would be left running unseen.
        starting = asyncio.ensure_future(self._start_kernel(kernel_name, cwd, env))
        self._starting.add(starting)
        starting.add_done_callback(self._starting.discard)
        try:
            with anyio.fail_after(timeout):
                kernel_id = await asyncio.shield(starting)
        except BaseException:
            starting.add_done_callback(self._shutdown_started)
            raise
        try:
            with anyio.fail_after(timeout):
                return await self._connect(kernel_id)
        except BaseException:
            await self._shutdown_shielded(kernel_id)
            raise

    async def _start_kernel(self, kernel_name: str | None, cwd: str, env: dict[str, str]) -> str:
        started = self._manager.start_kernel(kernel_name=kernel_name, cwd=cwd, env=env)
        kernel_id = str(await ensure_async(started))
        self._started.add(kernel_id)
        self._note()
        manager = self._manager.get_kernel(kernel_id)
        if getattr(self._manager, "use_pending_kernels", False):
            await manager.ready  # started, not yet ready
        # A run's kernel that dies fails the run; restarting it would lose the run's request.
        # (A gateway restarts its kernels itself: its ``restarting`` status fails the run.)
        manager.stop_restarter()
        manager.autorestart = False
        return kernel_id

    async def _connect(self, kernel_id: str) -> LaunchedKernel:
        manager = self._manager.get_kernel(kernel_id)
        label = f"fresh kernel {kernel_id}"
        connection: ChannelRouter
        if self.remote:
            connection = await GatewayConnection.open(kernel_id, label=label)
            # nbclient's client for this kernel (notebook actions) then waits without polling.
            manager.client_factory = WakingGatewayKernelClient
        else:
            connection = KernelConnection(manager, label=label)
        try:
            await connection.handshake(timeout=float("inf"))
        except BaseException:
            connection.close()
            raise
        return LaunchedKernel(
            kernel_id, str(manager.kernel_name), manager, connection, settled=not self.remote
        )

    def _shutdown_started(self, starting: asyncio.Future[str]) -> None:
        if starting.cancelled() or starting.exception() is not None:
            return
        self._shutdown_task(starting.result())

    def _shutdown_task(self, kernel_id: str) -> asyncio.Task[None]:
        """The kernel's shutdown in a task of its own, which ``aclose`` waits for."""
        task = asyncio.ensure_future(self._shutdown_id(kernel_id))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)
        return task

    async def _shutdown_shielded(self, kernel_id: str) -> None:
        """Shut the kernel down even if the caller is cancelled meanwhile: anyio's shielded
        scope does not hold against ``Task.cancel`` (the pool's close cancels its fillers so),
        ``asyncio.shield`` of a task of its own does."""
        await asyncio.shield(self._shutdown_task(kernel_id))

    async def is_alive(self, kernel: LaunchedKernel) -> bool:
        """Still there and still ours to talk to: our connection open, the manager (or the
        gateway) still has it, and it is not being restarted."""
        # A gateway lists a kernel it restarts under us: its websocket's status tells.
        if kernel.connection.closed or kernel.connection.lost:
            return False
        if kernel.kernel_id not in self._manager:
            return False
        if not await ensure_async(kernel.manager.is_alive()):
            return False
        # A gateway kernel's manager refreshed its model from the gateway just now; after
        # the gateway said it has no such kernel (404), is_alive answered True once, and the
        # manager holds no kernel.
        if not getattr(kernel.manager, "has_kernel", True):
            return False
        return getattr(kernel.manager, "execution_state", None) not in LOST_STATES

    async def shutdown(self, kernel: LaunchedKernel) -> None:
        kernel.connection.close()
        await self._shutdown_shielded(kernel.kernel_id)

    async def aclose(self) -> None:
        """Shut down what nothing else did: a kernel held by a task cancelled at the server's
        stop, say. Left to jupyter_server's own shutdown at exit, a gateway kernel whose
        gateway does not answer leaves its event loop running after SIGTERM."""
        # A start under way ends in the started set, or (its caller gone) in a shutdown task.
        while self._starting or self._closing:
            await asyncio.gather(*self._starting, *self._closing, return_exceptions=True)
        for kernel_id in list(self._started):
            await self._shutdown_id(kernel_id)

    def _note(self) -> None:
        if self._journal is not None:
            self._journal.write(self._started | self._leftovers)

    async def recover(self) -> None:
        """Shut down the gateway kernels that a predecessor of the same engine id left running
        (killed, it could not), as its journal lists them. Those whose gateway does not answer
        now stay listed, for the next start."""
        leftovers = self._journal.read() if self._journal is not None else None
        if self._journal is None or leftovers is None or not leftovers.kernel_ids:
            return
        if leftovers.gateway != self._journal.gateway:
            log.warning(
                "jupyter_recall: %d kernels left running on gateway %s by a stopped "
                "predecessor: not shut down (the gateway is %s now)",
                len(leftovers.kernel_ids),
                leftovers.gateway,
                self._journal.gateway,
            )
        else:
            ended = [kid for kid in leftovers.kernel_ids if await self._end_leftover(kid)]
            self._leftovers = set(leftovers.kernel_ids) - set(ended)
            log.warning(
                "jupyter_recall: shut down %d gateway kernels a stopped predecessor left "
                "running (%s); %d more wait for the gateway to answer (at the next start)",
                len(ended),
                ", ".join(ended),
                len(self._leftovers),
            )
        self._note()

    async def _end_leftover(self, kernel_id: str) -> bool:
        """Whether the gateway no longer has the kernel (shut down now, or already gone)."""
        url = url_path_join(self._manager.kernels_url, url_escape(kernel_id))
        try:
            await gateway_request(url, method="DELETE")
        except Exception as error:
            if isinstance(error, HTTPError) and error.status_code == 404:
                return True
            if unreachable(error):
                return False
            log.warning("jupyter_recall: cannot shut down gateway kernel %s: %s", kernel_id, error)
        return True

    async def _shutdown_id(self, kernel_id: str) -> None:
        """Shut the kernel down. It stays listed as started until that is over: a shutdown
        cancelled half-way is done again by ``aclose``."""
        # Not in the manager: culled, or shut down by someone else already.
        if kernel_id in self._manager:
            await self._shutdown_managed(kernel_id)
        self._started.discard(kernel_id)
        self._note()

    async def _shutdown_managed(self, kernel_id: str) -> None:
        try:
            # The kernel holds nothing worth a graceful exit: its run is over or was stopped.
            await ensure_async(self._manager.shutdown_kernel(kernel_id, now=True))
        except Exception as error:
            if not (self.remote and unreachable(error)):
                log.exception("could not shut down fresh kernel %s", kernel_id)
                return
            # Forgotten: jupyter_server's own shutdown of every kernel at exit would fail on
            # it the same way, and that failure leaves its event loop running after SIGTERM.
            # Kept in the journal: the next start shuts it down if the gateway answers then.
            self._manager.remove_kernel(kernel_id)
            self._leftovers.add(kernel_id)
            self._note()
            log.warning(
                "could not shut down fresh kernel %s: its gateway does not answer (%s); "
                "forgotten here (the gateway may still list it)",
                kernel_id,
                error,
            )
