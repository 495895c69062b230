"""A watcher started over MCP belongs to no notebook session: its start answer's hint says where
its notifications go (the user's JupyterLab, or the channel it names), never "this session"."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.mcp.conftest import TRANSPORTS, mcp_session
from tests.mcp.test_mcp import ok
from tests.server.live_server import LiveServer


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize(
    ("channel", "said"),
    [(None, "go to the user's JupyterLab (the ui channel)"), ("ui", "go to ui.")],
)
async def test_the_hint_of_a_watcher_without_a_session_says_where_it_notifies(
    transport: str, server: LiveServer, channel: str | None, said: str
) -> None:
    arguments = {
        "name": "filesystem.read",
        "params": {"path": str(Path(server.root) / "watched.txt")},
        "interval": 3600,
        **({"output_channel": channel} if channel else {}),
    }
    async with mcp_session(transport, server) as session:
        started = await ok(session, "watch_start", arguments)
        await ok(session, "watch_stop", {"watcher_id": started["watcher_id"]})
    assert started["session"] is None
    assert "this session" not in started["hint"], started["hint"]
    assert said in started["hint"], started["hint"]
