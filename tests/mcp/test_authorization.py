"""Over HTTP, tool calls are authorized as the caller, by the server's Authorizer, exactly as the
REST requests they make: a user who may read recall but not write it lists and reads, and is
refused what would change a job."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.mcp.conftest import http_session, serving
from tests.mcp.test_mcp import call, ok
from tests.server.live_server import LiveServer

AUTHORIZER = "--ServerApp.authorizer_class=tests.mcp.authorizer.NoRecallWrites"


@pytest.fixture(scope="module")
def read_only(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from serving(tmp_path_factory, "read-only", AUTHORIZER)


async def test_the_authorizer_decides_each_tool_call(read_only: LiveServer) -> None:
    async with http_session(read_only) as session:
        assert (await session.list_tools()).tools
        assert (await ok(session, "job_list", {}))["total"] == 0
        refused = await call(session, "schedule_code", {"when": "in 1h", "code": "1"})
    assert refused["ok"] is False
    assert "write" in refused["error"]
    assert "recall" in refused["error"]
