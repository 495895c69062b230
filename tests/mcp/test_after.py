"""``schedule_after`` over MCP (stdio, the SDK's client, a real server): a notification job
fired by another job's run; an unknown upstream is a tool error naming ``after_job``."""

from __future__ import annotations

from typing import Any

import pytest

from tests.mcp.conftest import mcp_session
from tests.mcp.test_mcp import call, ok
from tests.server.live_server import LiveServer

pytestmark = pytest.mark.anyio
UPSTREAM = {"when": "every day at 09:00", "action": {"type": "notification", "message": "build"}}


def finished(server: LiveServer, job_id: str) -> list[dict[str, Any]] | None:
    runs = server.request("GET", f"/api/recall/jobs/{job_id}/runs")["runs"]
    done = [run for run in runs if run["status"] != "running"]
    return done or None


async def test_schedule_after_fires_when_the_upstream_succeeds(server: LiveServer) -> None:
    first = server.request("POST", "/api/recall/jobs", UPSTREAM)["id"]
    args = {"after_job": first, "on": "finished", "prompt": "the build ended", "label": "next"}
    async with mcp_session("stdio", server) as session:
        created = await ok(session, "schedule_after", args)
        unknown = await call(session, "schedule_after", {"after_job": "0" * 12, "prompt": "x"})
    assert created["after"] == {"job": first, "on": "finished"}
    assert created["schedule_type"] == "after"
    assert (unknown["ok"], unknown["field"]) == (False, "after_job")
    server.request("POST", f"/api/recall/jobs/{first}/trigger")
    (run,) = server.wait_for(lambda: finished(server, created["job_id"]), timeout=60)
    assert (run["status"], run["trigger"]) == ("succeeded", "after")
    for job_id in (created["job_id"], first):
        server.request("DELETE", f"/api/recall/jobs/{job_id}")
