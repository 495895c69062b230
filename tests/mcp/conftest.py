"""A real Jupyter server with the extension, a notebook with a live kernel, and MCP clients of the
official SDK over both transports: ``jupyter recall mcp`` spawned over stdio, and Streamable HTTP
at ``/api/recall/mcp`` with the server's token."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.server.live_server import TOKEN, LiveServer

NOTEBOOK = "live.ipynb"
JUPYTER = str(Path(sys.executable).parent / "jupyter")
TRANSPORTS = ("stdio", "http")
Handler = Callable[[Any], Awaitable[None]]


def serving(factory: pytest.TempPathFactory, name: str, *args: str) -> Iterator[LiveServer]:
    """A server of its own (``args``: more options), stopped when the fixture ends."""
    root = factory.mktemp(name)
    (root / "watched.txt").write_text("first\n")
    live = LiveServer(root, root.parent / f"{name}.sqlite", args=args).start()
    try:
        yield live
    finally:
        live.stop()


@pytest.fixture(scope="package")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from serving(tmp_path_factory, "mcp")


@pytest.fixture(scope="package")
def notebook(server: LiveServer) -> Iterator[str]:
    """A notebook session of the server, with its live kernel."""
    body = {"path": NOTEBOOK, "type": "notebook", "kernel": {"name": "python3"}}
    session = server.request("POST", "/api/sessions", body)
    try:
        yield NOTEBOOK
    finally:
        server.request("DELETE", f"/api/sessions/{session['id']}")


@contextlib.asynccontextmanager
async def stdio_session(
    server: LiveServer, handler: Handler | None = None
) -> AsyncIterator[ClientSession]:
    command = StdioServerParameters(
        command=JUPYTER, args=["recall", "mcp", "--url", server.url, "--token", TOKEN]
    )
    async with (
        stdio_client(command) as (read, write),
        ClientSession(read, write, message_handler=handler) as session,
    ):
        await session.initialize()
        yield session


@contextlib.asynccontextmanager
async def http_session(
    server: LiveServer, token: str | None = TOKEN, headers: dict[str, str] | None = None
) -> AsyncIterator[ClientSession]:
    headers = {**({"Authorization": f"token {token}"} if token else {}), **(headers or {})}
    url = f"{server.url}/api/recall/mcp"
    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def mcp_session(
    transport: str, server: LiveServer
) -> contextlib.AbstractAsyncContextManager[ClientSession]:
    return stdio_session(server) if transport == "stdio" else http_session(server)
