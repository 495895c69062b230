"""POST /api/recall/mcp with a body that is not JSON gets a JSON-RPC parse error (-32700), the
answer an MCP client understands, not the REST API's error body."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

from tests.server.live_server import TOKEN, LiveServer


def post(server: LiveServer, body: bytes) -> tuple[int, dict]:
    request = urllib.request.Request(
        f"{server.url}/api/recall/mcp",
        data=body,
        method="POST",
        headers={
            "Authorization": f"token {TOKEN}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-06-18",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_invalid_json_is_a_json_rpc_parse_error(server: LiveServer) -> None:
    status, answer = post(server, b'{"jsonrpc": "2.0", "method": ')
    assert status == 400
    assert answer["jsonrpc"] == "2.0"
    assert answer["error"]["code"] == -32700, answer
