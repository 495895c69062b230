"""POST /api/recall/mcp with a body that is not JSON gets a JSON-RPC parse error (-32700), the
answer an MCP client understands, not the REST API's error body."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

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


def list_tools(server: LiveServer, ident: object) -> tuple[int, dict]:
    """``tools/list`` with ``ident`` as its JSON-RPC id."""
    body = {"jsonrpc": "2.0", "id": ident, "method": "tools/list", "params": {}}
    return post(server, json.dumps(body).encode())


@pytest.mark.parametrize("ident", [{}, None, 1.5, [1], True, {"nested": "x" * 100}])
def test_a_request_id_that_is_not_a_string_or_an_integer_is_an_invalid_request(
    server: LiveServer, ident: object
) -> None:
    # Before: 202 with no body, and the client waited for an answer that never came.
    status, answer = list_tools(server, ident)
    assert status == 400
    assert answer["id"] is None
    assert answer["error"]["code"] == -32600, answer
    message = answer["error"]["message"]
    assert message.startswith("Invalid Request: id must be a string or an integer, got "), message
    assert len(message) < 120  # a long id is clipped


@pytest.mark.parametrize("ident", ["a", 7])
def test_string_and_integer_ids_are_answered_with_their_id(
    server: LiveServer, ident: object
) -> None:
    status, answer = list_tools(server, ident)
    assert status == 200
    assert answer["id"] == ident
    assert any(tool["name"] == "schedule_code" for tool in answer["result"]["tools"])
