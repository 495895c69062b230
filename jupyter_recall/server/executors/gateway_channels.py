"""Our own connection to a kernel on a Jupyter Kernel (or Enterprise) Gateway: its websocket.

A gateway kernel has no ZMQ sockets we can reach; the gateway serves its channels as JSON
messages on ``<gateway>/api/kernels/<id>/channels``, the same protocol the server itself proxies
for the browser (``GatewayClient``'s URL, headers and certificates are used). Messages are routed
by parent id exactly as for local kernels (``iopub.ChannelRouter``). Notebooks run through
nbclient with ``WakingGatewayKernelClient``, jupyter_server's client without its busy wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import queue
import time
from collections.abc import Callable
from typing import Any

from jupyter_client.jsonutil import json_default
from jupyter_client.session import Session
from jupyter_server.gateway.gateway_client import GatewayClient
from jupyter_server.gateway.managers import ChannelQueue, GatewayKernelClient
from jupyter_server.utils import url_path_join
from tornado.escape import url_escape
from tornado.httpclient import HTTPRequest
from tornado.websocket import WebSocketClientConnection, WebSocketClosedError, websocket_connect

from jupyter_recall.core.errors import KernelGone
from jupyter_recall.server.executors.iopub import ChannelRouter, Message, is_kernel_lost

log = logging.getLogger(__name__)


def channels_url(kernel_id: str) -> str:
    client = GatewayClient.instance()
    return url_path_join(
        client.ws_url or "", client.kernels_endpoint, url_escape(kernel_id), "channels"
    )


class GatewayConnection(ChannelRouter):
    """Shell, control and IOPub of one gateway kernel, over one websocket."""

    def __init__(self, websocket: WebSocketClientConnection, *, label: str) -> None:
        # The gateway signs what it forwards to the kernel: our messages need no key.
        super().__init__(Session(username="jupyter_recall"), label=label)
        self._websocket = websocket
        self._reader = asyncio.ensure_future(self._read())

    @classmethod
    async def open(cls, kernel_id: str, *, label: str) -> GatewayConnection:
        # Headers (the gateway's token), timeouts and certificates, as the server's own proxy.
        connection_args: Callable[[], dict[str, Any]] = (
            GatewayClient.instance().load_connection_args
        )
        request = HTTPRequest(channels_url(kernel_id), **connection_args())
        return cls(await websocket_connect(request), label=label)

    async def _read(self) -> None:
        while True:
            raw = await self._websocket.read_message()
            if raw is None:
                break
            try:
                msg = json.loads(raw)
                channel = str(msg.pop("channel"))
            except (ValueError, KeyError, TypeError):
                log.warning("dropping an unreadable message from %s", self.label)
                continue
            self._route(channel, msg)
        # The gateway closed the socket: the runs waiting on it learn it from their inboxes.
        super().close()

    def send(self, channel: str, msg: Message) -> None:
        try:
            self._websocket.write_message(
                json.dumps({**msg, "channel": channel}, default=json_default)
            )
        except WebSocketClosedError:
            raise KernelGone(f"the gateway closed the connection to {self.label}") from None

    def close(self) -> None:
        super().close()
        self._reader.cancel()
        self._websocket.close()


class _WakingChannelQueue(ChannelQueue):
    """A gateway channel queue whose reader sleeps until a message comes.

    jupyter_server's queue polls with ``asyncio.sleep(0)`` while it waits, which keeps the
    server's event loop busy for as long as a notebook's cell runs. Here the websocket reader
    thread wakes the waiting coroutine instead.
    """

    def __init__(self, channel_name: str, channel_socket: Any, log: logging.Logger) -> None:
        super().__init__(channel_name, channel_socket, log)
        self._loop = asyncio.get_running_loop()
        self._arrived = asyncio.Event()
        self.kernel_lost = False
        """The gateway said the kernel died (a ``restarting`` or ``dead`` status)."""

    def put_nowait(self, item: Any) -> None:
        if isinstance(item, dict) and is_kernel_lost(str(self.channel_name), item):
            self.kernel_lost = True
        super().put_nowait(item)
        self._loop.call_soon_threadsafe(self._arrived.set)

    async def _async_get(self, timeout: float | None = None) -> Any:
        deadline = math.inf if timeout is None else time.monotonic() + timeout
        while True:
            self._arrived.clear()
            try:
                return self.get(block=False)
            except queue.Empty:
                pass
            if self.response_router_finished:
                raise RuntimeError("Response router had finished")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise queue.Empty
            # Bounded: the router's end sets a flag, not the event.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), min(remaining, ROUTER_CHECK))


ROUTER_CHECK = 0.5
"""Seconds between checks that the gateway client's websocket reader still runs."""


class WakingGatewayKernelClient(GatewayKernelClient):
    """jupyter_server's gateway kernel client, with shell and IOPub queues that do not poll."""

    def _waking(self, name: str) -> _WakingChannelQueue:
        attribute = f"_{name}_channel"
        channel: _WakingChannelQueue | None = getattr(self, attribute)
        if channel is None:
            channel = _WakingChannelQueue(name, self.channel_socket, self.log)
            setattr(self, attribute, channel)
            if self._channel_queues is not None:
                self._channel_queues[name] = channel
        return channel

    @property
    def shell_channel(self) -> ChannelQueue:
        return self._waking("shell")

    @property
    def iopub_channel(self) -> ChannelQueue:
        return self._waking("iopub")

    async def is_alive(self) -> bool:
        """Alive until the gateway says the kernel died or closes the websocket.

        jupyter_client's check asks the manager, and a ``GatewayKernelManager`` has no
        provisioner: nbclient's liveness poll would fail on an assertion after a second."""
        iopub = self._waking("iopub")
        return not (iopub.kernel_lost or iopub.response_router_finished)
