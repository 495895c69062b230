"""Listings an agent reads stay small: a run shows the end of its output (``run_output`` has
all of it), and the approvals inbox comes a page at a time, with honest counts."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from jupyter_recall.client.tool_specs import OUTPUT_TAIL
from tests.mcp.conftest import mcp_session, serving
from tests.mcp.test_mcp import finished_run, ok
from tests.server.live_server import LiveServer

LONG = 50_000


@pytest.fixture(scope="module")
def inbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server of its own: its approvals are this module's alone."""
    yield from serving(tmp_path_factory, "inbox")


async def test_listed_runs_show_the_end_of_their_output(server: LiveServer, notebook: str) -> None:
    code = f"print('first line'); print('x' * {LONG}); print('the end')"
    body = {"when": "now", "code": code, "notebook": notebook}
    async with mcp_session("stdio", server) as session:
        job_id = (await ok(session, "schedule_code", body))["job_id"]
        run = await finished_run(session, job_id)
        listing = await session.call_tool("run_list", {"job_id": job_id})
        status = await ok(session, "schedule_status", {"job_id": job_id})
        whole = await ok(session, "run_output", {"run_id": run["id"]})
    assert "output" not in run
    assert run["output_tail"].endswith("the end\n")
    assert len(run["output_tail"]) == OUTPUT_TAIL
    assert run["output_length"] == len(whole["output"]) > LONG
    assert run["output_truncated"] is True
    (recent,) = status["recent_runs"]
    assert (recent["output_tail"], recent["output_length"]) == (
        run["output_tail"],
        run["output_length"],
    )
    # The answer, sent as structured content and as text, is a few kilobytes.
    assert len(listing.content[0].text) < 10_000  # type: ignore[union-attr]
    assert "first line" in whole["output"]
    server.request("DELETE", f"/api/recall/jobs/{job_id}")


async def test_the_approvals_inbox_comes_a_page_at_a_time(inbox: LiveServer) -> None:
    created = []
    for n in range(30):
        # Created first, expiring last: the pending page shows the soonest to expire first.
        record = {
            "tool": "shell.run",
            "summary": f"call {n}",
            "source": "test",
            "asked_by": "kernel:test",
            "timeout": 3000 - 60 * n,
        }
        created.append(inbox.request("POST", "/api/recall/approvals", record)["id"])
    async with mcp_session("http", inbox) as session:
        first = await ok(session, "approval_list", {})
        second = await ok(session, "approval_list", {"offset": first["next_offset"]})
        small = await ok(session, "approval_list", {"limit": 5, "status": "all"})
    assert (first["returned"], first["matching"], first["next_offset"]) == (20, 30, 20)
    assert (second["returned"], second["next_offset"]) == (10, None)
    shown = [record["id"] for record in first["approvals"] + second["approvals"]]
    assert shown == created[::-1]
    expiries = [record["expires_at"] for record in first["approvals"]]
    assert expiries == sorted(expiries)
    assert "total" not in first
    # Any status: newest first.
    made = [record["created_at"] for record in small["approvals"]]
    assert made == sorted(made, reverse=True)
    assert small["returned"] == 5
    assert small["next_offset"] == 5
    assert len(json.dumps(first)) < 20_000
