"""Subscriptions to a run's output and to approvals: ``notifications/resources/updated``.

A subscription to a run's output follows the run through the server's event stream
(``client/follow.py``'s ``Follower``, the reader of ``jupyter recall logs --follow``) in a daemon
thread, and tells the client the resource changed at every chunk and once more when the run has
finished. A subscription to ``recall://approvals`` or ``recall://approvals/{id}`` follows the
``approval.*`` events of the same stream (``approval_events.py``) until it ends. The threads
are daemons: a client that goes away does not keep ``jupyter recall mcp`` alive until the runs
it followed have ended.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError

from jupyter_recall.client.follow import Follower
from jupyter_recall.client.remote import Client, api_path
from jupyter_recall.core.errors import RecallError
from jupyter_recall.mcp.approval_events import ApprovalEvents
from jupyter_recall.mcp.resources import RESOURCE_NOT_FOUND, followed

Context = ServerRequestContext[Any, Any]


class _Following:
    """One subscription: tells ``session`` of every change of ``uri`` until stopped."""

    def __init__(self, session: ServerSession, uri: str) -> None:
        self.session = session
        self.uri = uri
        self.stopped = threading.Event()
        self.token = anyio.lowlevel.current_token()

    def tell(self, _chunk: str = "") -> None:
        if self.stopped.is_set():
            return
        try:
            anyio.from_thread.run(self.session.send_resource_updated, self.uri, token=self.token)
        except Exception:
            # The client or the event loop is gone: there is no one left to tell.
            self.stopped.set()

    def follow(self, client: Client, run_id: str) -> None:
        try:
            Follower(client, run_id, self.tell).follow()
        except RecallError:
            return  # the run is gone or the server unreachable: nothing more will change
        self.tell()


class OutputSubscriptions:
    def __init__(self, client: Client) -> None:
        self.client = client
        self.active: dict[str, _Following] = {}

    async def subscribe(
        self, ctx: Context, params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        uri = params.uri
        try:
            kind, ident = followed(uri)
            # What does not exist would be followed silently, and never change; a server
            # that cannot be reached is said now, not by a subscription that never speaks.
            await anyio.to_thread.run_sync(self._check, kind, ident)
            self._stop(uri)
            following = self.active[uri] = _Following(ctx.session, uri)
            target: Callable[..., None] = following.follow
            args: tuple[Any, ...] = (self.client, ident)
            if kind == "approvals":
                events = ApprovalEvents(self.client, ident, following.tell, following.stopped)
                first = await anyio.to_thread.run_sync(events.open, self.client.timeout)
                target, args = events.follow, (first,)
        except RecallError as error:
            self._stop(uri)
            # The caller's mistake (or the server down): an error answer, not a traceback.
            message = str(error) if uri in str(error) else f"{uri}: {error}"
            raise MCPError(RESOURCE_NOT_FOUND, message) from None
        name = f"recall-mcp-{ident or kind}"
        threading.Thread(target=target, args=args, name=name, daemon=True).start()
        return types.EmptyResult()

    def _check(self, kind: str, ident: str | None) -> None:
        """That the followed thing exists (and the server answers), or a ``RecallError``."""
        if kind == "run" and ident is not None:
            self.client.request("GET", api_path("runs", ident))
        elif ident is not None:
            self.client.request("GET", api_path("approvals", ident))
        else:
            self.client.request("GET", api_path("approvals"), query={"status": "pending"})

    async def unsubscribe(
        self, ctx: Context, params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        self._stop(params.uri)
        return types.EmptyResult()

    def _stop(self, uri: str) -> None:
        following = self.active.pop(uri, None)
        if following is not None:
            following.stopped.set()
