"""``jupyter recall mcp``: the MCP server over stdio, speaking to one Jupyter server's REST API.

An MCP client starts ``jupyter recall mcp`` once and keeps it for its whole session; the Jupyter
server may restart meanwhile, with a new token (``jupyter lab`` makes one at every start) or on
another port. Without ``--url``, the server came from the Jupyter runtime directory: a token it
refuses (403) or a connection it refuses makes this client look the server up there again and
send the request once more (neither reached a handler, so nothing runs twice). With ``--url``
(or ``$JUPYTER_RECALL_URL``) the address is the user's, and the error says what to change.
"""

from __future__ import annotations

import threading
import urllib.error
from collections.abc import Callable, Mapping
from typing import Any

import anyio
from mcp.server.stdio import stdio_server

from jupyter_recall.client.remote import Client, ServerInfo
from jupyter_recall.core.errors import RecallConnectionError, RecallError
from jupyter_recall.mcp.server import build_server
from jupyter_recall.mcp.subscriptions import OutputSubscriptions

Find = Callable[[], Client]
"""Finds the running server again (``cli.connect.connect`` without a URL)."""
EXPLICIT_HINT = (
    "jupyter recall mcp was given the server's address (--url or $JUPYTER_RECALL_URL): if the "
    "server restarted, put its new token (--token) in the MCP client's configuration and "
    "restart the MCP server, or leave --url out so that it finds the running server itself"
)


def refused(error: RecallConnectionError) -> bool:
    """Whether ``error`` is a token the server refused (403) or a refused connection: requests
    no handler has seen, which a server that restarted would answer."""
    cause = error.__context__
    if isinstance(cause, urllib.error.HTTPError):
        return cause.code == 403
    if isinstance(cause, urllib.error.URLError):
        return isinstance(cause.reason, ConnectionRefusedError)
    return isinstance(cause, ConnectionRefusedError)


class StdioClient(Client):
    """``client``'s server, looked up again by ``find`` when it refuses us (None: never)."""

    def __init__(self, client: Client, find: Find | None) -> None:
        super().__init__(client.server, timeout=client.timeout)
        self.find = find
        self._moving = threading.Lock()

    def open(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        timeout: float | None = None,
    ) -> Any:
        server = self.server
        try:
            return super().open(method, path, query=query, body=body, timeout=timeout)
        except RecallConnectionError as error:
            if not refused(error):
                raise
            self._follow(server, error)
        return super().open(method, path, query=query, body=body, timeout=timeout)

    def _follow(self, tried: ServerInfo, error: RecallConnectionError) -> None:
        """Adopt the server found again, unless another request did already; else raise."""
        with self._moving:
            if self.server != tried:
                return
            if self.find is None:
                raise RecallConnectionError(f"{error}; {EXPLICIT_HINT}", reason=error.reason)
            try:
                found = self.find()
            except RecallError as why:
                raise RecallConnectionError(
                    f"{error}; looked for the server again in the Jupyter runtime directory: {why}",
                    reason=error.reason,
                ) from None
            if found.server.url == self.server.url and found.server.token == self.server.token:
                raise error  # the same server and token: the refusal stands
            self.server, self.base = found.server, found.base
            self._info, self._checked = found.info(), True


async def serve(client: Client) -> None:
    """Serve one MCP client on stdin/stdout until it closes them."""
    server = build_server(lambda ctx: client, OutputSubscriptions(client))
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def run(client: Client) -> None:
    anyio.run(serve, client)
