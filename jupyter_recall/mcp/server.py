"""The MCP server (the SDK's lowlevel ``Server``) over the tool table and the resources.

The transport decides who the caller is: ``backend_for(ctx)`` gives the REST client that speaks
for the request (stdio: the one client of the process; HTTP: the authenticated caller's).
REST calls are synchronous, so they run in worker threads, never on the event loop.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from jupyter_recall import __version__
from jupyter_recall.client.toolspec import ToolFailure
from jupyter_recall.core.errors import RecallError
from jupyter_recall.mcp import resources, tools
from jupyter_recall.mcp.answers import McpAnswer
from jupyter_recall.mcp.backend import Backend
from jupyter_recall.mcp.subscriptions import OutputSubscriptions

SERVER_NAME = "jupyter-recall"
INSTRUCTIONS = (
    "Schedule code into a notebook's live kernel or a fresh kernel, notebooks, notifications, "
    "tool calls and recalls of a notebook's agent; manage jobs, runs and watchers; list and "
    "decide the approvals inbox; read a job, its runs, a run's output and approvals as "
    "recall:// resources."
)
RESOURCE_NOT_FOUND = resources.RESOURCE_NOT_FOUND
LISTING_FAILED = -32603
"""JSON-RPC's internal error: the resources could not be listed (the server unreachable)."""
Context = ServerRequestContext[Any, Any]
BackendFor = Callable[[Context], Backend]


def _tool_listing() -> types.ListToolsResult:
    return types.ListToolsResult(
        tools=[
            types.Tool(
                name=t.name, description=t.spec.description, input_schema=dict(t.input_schema())
            )
            for t in tools.MCP_TOOLS.values()
        ]
    )


def _tool_result(result: McpAnswer | ToolFailure) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(text=json.dumps(result, default=str))],
        structured_content=dict(result),
        is_error=not result["ok"],
    )


def _templates() -> types.ListResourceTemplatesResult:
    return types.ListResourceTemplatesResult(
        resource_templates=[
            types.ResourceTemplate(
                uri_template=t.uri_template,
                name=t.name,
                description=t.description,
                mime_type=t.mime_type,
            )
            for t in resources.TEMPLATES
        ]
    )


def build_server(
    backend_for: BackendFor, subscriptions: OutputSubscriptions | None = None
) -> Server[Any]:
    """The server; ``subscriptions`` (stdio) lets clients follow a run's output."""

    async def list_tools(ctx: Context, params: Any) -> types.ListToolsResult:
        return _tool_listing()

    async def call_tool(ctx: Context, params: types.CallToolRequestParams) -> types.CallToolResult:
        backend = backend_for(ctx)
        result = await anyio.to_thread.run_sync(tools.call, backend, params.name, params.arguments)
        return _tool_result(result)

    async def list_templates(ctx: Context, params: Any) -> types.ListResourceTemplatesResult:
        return _templates()

    async def list_resources(ctx: Context, params: Any) -> types.ListResourcesResult:
        try:
            listed = await anyio.to_thread.run_sync(resources.listed, backend_for(ctx))
        except RecallError as error:
            # As read_resource: an error answer saying why, not a traceback on stderr.
            raise MCPError(LISTING_FAILED, str(error)) from None
        return types.ListResourcesResult(
            resources=[types.Resource(**item, mime_type=resources.JSON) for item in listed]
        )

    async def read_resource(
        ctx: Context, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        try:
            mime, text = await anyio.to_thread.run_sync(
                resources.read, backend_for(ctx), params.uri
            )
        except RecallError as error:
            raise MCPError(RESOURCE_NOT_FOUND, str(error)) from None
        content = types.TextResourceContents(uri=params.uri, mime_type=mime, text=text)
        return types.ReadResourceResult(contents=[content])

    return Server(
        SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_subscribe_resource=subscriptions.subscribe if subscriptions else None,
        on_unsubscribe_resource=subscriptions.unsubscribe if subscriptions else None,
    )
