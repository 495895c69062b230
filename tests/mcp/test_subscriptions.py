"""Following a run's output over stdio: resources/subscribe, then notifications/resources/updated
while the run prints, fed by the server's event stream."""

from __future__ import annotations

import time
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPDeprecationWarning

from tests.mcp.conftest import stdio_session
from tests.mcp.test_mcp import DEADLINE, ok
from tests.server.live_server import LiveServer

SLOW = "import time\nfor i in range(6):\n    print('line', i, flush=True)\n    time.sleep(1)"


async def test_a_subscriber_hears_of_a_streaming_output(server: LiveServer, notebook: str) -> None:
    updated: list[str] = []

    async def handle(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.append(str(message.params.uri))

    async with stdio_session(server, handle) as session:
        job = await ok(
            session, "schedule_code", {"when": "now", "code": SLOW, "notebook": notebook}
        )
        deadline = time.monotonic() + DEADLINE
        runs: list[dict[str, Any]] = []
        while not runs:
            assert time.monotonic() < deadline, "the job did not start"
            await anyio.sleep(0.2)
            runs = (await ok(session, "run_list", {"job_id": job["job_id"]}))["runs"]
        uri = f"recall://runs/{runs[0]['id']}/output"
        # Deprecated by the SDK for protocol 2026-07-28 (subscriptions/listen), the method of
        # the 2025-11-25 sessions that MCP clients negotiate today.
        with pytest.warns(MCPDeprecationWarning, match="resources/subscribe"):
            await session.subscribe_resource(uri)
        with anyio.fail_after(DEADLINE):
            while "line 5" not in (await session.read_resource(uri)).contents[0].text:
                await anyio.sleep(0.5)
            # The last notification comes once the run has finished.
            while (await ok(session, "run_output", {"run_id": runs[0]["id"]}))[
                "status"
            ] == "running":
                await anyio.sleep(0.5)
            while not updated:
                await anyio.sleep(0.2)
    assert set(updated) == {uri}
    # At least one while it printed, and the one at its end.
    assert len(updated) >= 2
