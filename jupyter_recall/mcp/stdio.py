"""``jupyter recall mcp``: the MCP server over stdio, speaking to one Jupyter server's REST API."""

from __future__ import annotations

import anyio
from mcp.server.stdio import stdio_server

from jupyter_recall.client.remote import Client
from jupyter_recall.mcp.server import build_server
from jupyter_recall.mcp.subscriptions import OutputSubscriptions


async def serve(client: Client) -> None:
    """Serve one MCP client on stdin/stdout until it closes them."""
    server = build_server(lambda ctx: client, OutputSubscriptions(client))
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def run(client: Client) -> None:
    anyio.run(serve, client)
