"""Streamable HTTP under ``/api/recall/mcp``: the SDK's session manager behind a tornado handler.

jupyter_server is tornado; the SDK's Streamable HTTP transport (``StreamableHTTPSessionManager``)
is an ASGI application. The handler authenticates and authorizes the request as every REST
route does (``@web.authenticated``, ``@authorized``, resource ``recall``), then hands it to the
manager as one ASGI call: the scope carries the caller's REST client, and the manager's
``http.response.*`` messages are written back through tornado (flushed as they come, so an SSE
answer streams). The manager is stateless with JSON answers: every POST stands alone, as an
authenticated REST request does, and no MCP session outlives the credentials that opened it.
Stateless, the server has nothing to push and no session to end, so there is no GET stream and
no DELETE: both are 405, which the protocol allows and clients expect.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any, TypedDict, cast

from starlette.types import Message, Scope
from tornado import web
from tornado.iostream import StreamClosedError

from jupyter_recall.client.remote import ServerInfo
from jupyter_recall.core.limits import MAX_BODY_BYTES
from jupyter_recall.mcp.backend import Backend, CallerClient
from jupyter_recall.server.handlers import RecallHandler, authorized_to

BACKEND_KEY = "jupyter_recall.backend"
MAX_MCP_BODY = 2 * MAX_BODY_BYTES
"""The largest MCP request: the SDK's default (4 MiB) answered 413, and its client a protocol
error without a reason, before a tool could name the argument at fault; past the server's own
request body limit (``MAX_BODY_BYTES``), the tool refuses it naming the argument."""
LOOPBACK_IPS = ("", "0.0.0.0", "::", "*", "localhost", "127.0.0.1")
INVALID_REQUEST = -32600


class JsonRpcError(TypedDict):
    code: int
    message: str


class JsonRpcRefusal(TypedDict):
    jsonrpc: str
    id: None
    error: JsonRpcError


def bad_request_id(body: bytes) -> JsonRpcRefusal | None:
    """The JSON-RPC "Invalid Request" answer to a request whose ``id`` is not a string or an
    integer (MCP's ``RequestId``; null is refused too), else None. The SDK's transport reads
    such a message as none of its kinds and answers 202 with no body: the client waits for an
    answer that never comes. Anything else is the SDK's to read and refuse."""
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if not isinstance(message, dict) or "method" not in message or "id" not in message:
        return None
    ident = message["id"]
    if isinstance(ident, str) or (isinstance(ident, int) and not isinstance(ident, bool)):
        return None
    said = json.dumps(ident)
    said = said if len(said) <= 40 else f"{said[:39]}…"
    return {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": INVALID_REQUEST,
            "message": f"Invalid Request: id must be a string or an integer, got {said}",
        },
    }


class McpEndpoint:
    """The session manager of the server, started with the first request."""

    def __init__(self) -> None:
        self.manager: Any = None
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._starting = asyncio.Lock()

    async def started(self) -> Any:
        async with self._starting:
            return self.manager or await self._start()

    async def _start(self) -> Any:
        try:
            from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

            from jupyter_recall.mcp.server import build_server
        except ImportError as error:
            raise web.HTTPError(
                501, f"the MCP endpoint needs: pip install 'jupyter_recall[mcp]' ({error})"
            ) from None
        server = build_server(backend_of)
        manager = StreamableHTTPSessionManager(
            server, json_response=True, stateless=True, max_request_body_size=MAX_MCP_BODY
        )
        running = asyncio.Event()
        self._task = asyncio.create_task(self._run(manager, running))
        await running.wait()
        self.manager = manager
        return manager

    async def _run(self, manager: Any, running: asyncio.Event) -> None:
        async with manager.run():
            running.set()
            await self._stop.wait()

    async def aclose(self) -> None:
        self._stop.set()
        task, self._task = self._task, None
        if task is not None:
            await task


def backend_of(ctx: Any) -> Backend:
    """The caller's REST client, put in the ASGI scope by ``McpHandler``."""
    return cast(Backend, ctx.request.scope[BACKEND_KEY])


def loopback_url(serverapp: Any) -> str:
    if serverapp.ip not in LOOPBACK_IPS:
        return str(serverapp.connection_url)
    scheme = "https" if serverapp.certfile else "http"
    return f"{scheme}://127.0.0.1:{serverapp.port}{serverapp.base_url}"


class McpHandler(RecallHandler):
    endpoint: McpEndpoint
    _answered = False
    # The body is JSON-RPC, for the SDK's transport to read: it answers a bad one with a
    # JSON-RPC parse error (-32700), which an MCP client understands, and RecallHandler's REST
    # error body it would not.
    reads_json_body = False

    def initialize(self, name: str, *args: Any, **kwargs: Any) -> None:
        self.endpoint = kwargs.pop("endpoint")
        self._gone = asyncio.Event()
        super().initialize(name, *args, **kwargs)

    def on_connection_close(self) -> None:
        self._gone.set()

    def caller(self) -> CallerClient:
        server = ServerInfo(loopback_url(self.serverapp), "", "the MCP request")
        return CallerClient(server, dict(self.request.headers))

    def scope(self) -> Scope:
        request = self.request
        headers = [
            (key.lower().encode("latin-1"), value.encode("latin-1"))
            for key, value in request.headers.get_all()
        ]
        return {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": request.method,
            "scheme": request.protocol,
            "path": request.path,
            "raw_path": request.path.encode(),
            "root_path": "",
            "query_string": request.query.encode(),
            "headers": headers,
            "client": (request.remote_ip, 0),
            "server": None,
            BACKEND_KEY: self.caller(),
        }

    async def bridge(self) -> None:
        body = self.request.body or b""
        refusal = bad_request_id(body)
        if refusal is not None:
            self._answered = True
            self.set_status(400)
            self.set_header("Content-Type", "application/json")
            self.finish(json.dumps(refusal))
            return
        manager = await self.endpoint.started()
        delivered = False

        async def receive() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            await self._gone.wait()
            return {"type": "http.disconnect"}

        await manager.handle_request(self.scope(), receive, self.send_asgi)
        if not self._answered:
            self._answered = True
            self.finish()

    async def send_asgi(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.set_status(message["status"])
            self.clear_header("Content-Type")
            for key, value in message.get("headers", []):
                self.add_header(key.decode("latin-1"), value.decode("latin-1"))
        elif message["type"] == "http.response.body" and not self._answered:
            self.write(message.get("body", b""))
            if message.get("more_body", False):
                # A client that went away mid-stream: the manager learns it from receive().
                with contextlib.suppress(StreamClosedError):
                    await self.flush()
                return
            self._answered = True
            self.finish()

    @web.authenticated
    @authorized_to("read")
    async def post(self) -> None:
        await self.bridge()


def mcp_routes(
    endpoint: McpEndpoint,
) -> list[tuple[str, type[RecallHandler], dict[str, McpEndpoint]]]:
    return [(r"/api/recall/mcp", McpHandler, {"endpoint": endpoint})]
