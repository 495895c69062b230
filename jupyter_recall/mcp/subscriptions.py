"""Subscriptions to a run's output: ``notifications/resources/updated`` while it streams.

A subscription follows the run through the server's event stream (``cli/follow.py``'s
``Follower``, the reader of ``jupyter recall logs --follow``) in a worker thread, and tells the
client the resource changed at every chunk and once more when the run has finished.
"""

from __future__ import annotations

import threading
from typing import Any

import anyio
import anyio.abc
import anyio.from_thread
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession

from jupyter_recall.cli.follow import Follower
from jupyter_recall.core.errors import RecallError
from jupyter_recall.mcp.resources import run_output_id
from jupyter_recall.remote import Client

Context = ServerRequestContext[Any, Any]


class OutputSubscriptions:
    def __init__(self, client: Client, task_group: anyio.abc.TaskGroup) -> None:
        self.client = client
        self.task_group = task_group
        self.active: dict[str, threading.Event] = {}

    async def subscribe(
        self, ctx: Context, params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        run_id = run_output_id(params.uri)
        stopped = self.active.pop(params.uri, None)
        if stopped is not None:
            stopped.set()
        stop = threading.Event()
        self.active[params.uri] = stop
        self.task_group.start_soon(self._follow, ctx.session, params.uri, run_id, stop)
        return types.EmptyResult()

    async def unsubscribe(
        self, ctx: Context, params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        stop = self.active.pop(params.uri, None)
        if stop is not None:
            stop.set()
        return types.EmptyResult()

    async def _follow(
        self, session: ServerSession, uri: str, run_id: str, stop: threading.Event
    ) -> None:
        def changed(_text: str) -> None:
            if not stop.is_set():
                anyio.from_thread.run(session.send_resource_updated, uri)

        follower = Follower(self.client, run_id, changed)
        try:
            await anyio.to_thread.run_sync(follower.follow, abandon_on_cancel=True)
        except RecallError:
            # The run is gone or the server unreachable: nothing more will change.
            return
        if not stop.is_set():
            await session.send_resource_updated(uri)
        if self.active.get(uri) is stop:
            del self.active[uri]
