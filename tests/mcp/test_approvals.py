"""The approvals inbox over MCP: a server-side ``shell.run`` job under an ``approve`` policy waits
until an MCP client approves or denies it, over stdio and Streamable HTTP against a real server."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

from jupyter_recall.mcp.resources import RESOURCE_NOT_FOUND
from tests.mcp.conftest import mcp_session, serving, stdio_session
from tests.mcp.test_mcp import DEADLINE, call, each_transport, finished_run, ok
from tests.server.live_server import LiveServer


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server whose shell tools wait for a decision in the approvals inbox."""
    yield from serving(
        tmp_path_factory,
        "approvals",
        "--RecallApp.tool_policies=shell=approve",
        "--RecallApp.tool_policies=*=auto",
    )


async def waiting_approval(session: ClientSession, marker: str) -> tuple[str, dict[str, Any]]:
    """Schedule ``echo marker`` on the server now; its job id and pending approval record."""
    job = await ok(
        session,
        "schedule_once",
        {
            "when": "now",
            "action_type": "tool_call",
            "tool_name": "shell.run",
            "tool_params": {"command": f"echo {marker}"},
        },
    )
    deadline = time.monotonic() + DEADLINE
    while True:
        listed = await ok(session, "approval_list", {})
        mine = [record for record in listed["approvals"] if marker in record["summary"]]
        if mine:
            assert all(record["status"] == "pending" for record in listed["approvals"])
            return str(job["job_id"]), mine[0]
        assert time.monotonic() < deadline, "no pending approval"
        await anyio.sleep(0.3)


@each_transport
async def test_an_approved_tool_job_runs(transport: str, guarded: LiveServer) -> None:
    marker = f"approved-{uuid.uuid4().hex[:8]}"
    async with mcp_session(transport, guarded) as session:
        job_id, record = await waiting_approval(session, marker)
        assert record["tool"] == "shell.run"
        # The server-side run asked: the record says which one.
        assert record["asked_by"].startswith("run:")
        # Nothing ran while it waited.
        runs = (await ok(session, "run_list", {"job_id": job_id}))["runs"]
        assert [run["status"] for run in runs] == ["running"]
        # The pending approvals resource and the record's own resource show it.
        pending = json.loads((await session.read_resource("recall://approvals")).contents[0].text)
        assert record["id"] in [item["id"] for item in pending["approvals"]]
        one = await session.read_resource(f"recall://approvals/{record['id']}")
        assert json.loads(one.contents[0].text)["status"] == "pending"

        decided = await ok(
            session, "approval_decide", {"approval_id": record["id"], "decision": "approve"}
        )
        assert decided["status"] == "approved"
        run = await finished_run(session, job_id)
        assert run["status"] == "succeeded", run
        assert marker in json.dumps(await ok(session, "run_output", {"run_id": run["id"]}))
        shown = await ok(session, "approval_get", {"approval_id": record["id"]})
        assert shown["status"] == "approved"
        assert shown["decided_by"]
        everything = await ok(session, "approval_list", {"status": "all"})
        assert record["id"] in [item["id"] for item in everything["approvals"]]
        still = await ok(session, "approval_list", {})
        assert record["id"] not in [item["id"] for item in still["approvals"]]


@each_transport
async def test_a_denied_tool_job_fails_and_the_decision_is_final(
    transport: str, guarded: LiveServer
) -> None:
    marker = f"denied-{uuid.uuid4().hex[:8]}"
    async with mcp_session(transport, guarded) as session:
        job_id, record = await waiting_approval(session, marker)
        decision = {"approval_id": record["id"], "decision": "deny", "note": "not tonight"}
        denied = await ok(session, "approval_decide", decision)
        assert (denied["status"], denied["note"]) == ("denied", "not tonight")
        run = await finished_run(session, job_id)
        assert run["status"] == "failed"
        assert run["error"] == f"tool shell.run was not run: approval denied ({record['id']})"

        again = await call(
            session, "approval_decide", {"approval_id": record["id"], "decision": "approve"}
        )
        assert again["ok"] is False
        assert again["field"] == "approval_id"
        assert f"approval {record['id']} is already denied" in again["error"]


@each_transport
async def test_bad_approval_arguments_name_the_field(transport: str, guarded: LiveServer) -> None:
    async with mcp_session(transport, guarded) as session:
        _, record = await waiting_approval(session, f"bad-{uuid.uuid4().hex[:8]}")
        bad = await call(
            session, "approval_decide", {"approval_id": record["id"], "decision": "maybe"}
        )
        assert (bad["ok"], bad["field"]) == (False, "decision")
        assert bad["accepted"] == ["approve", "deny"]
        status = await call(session, "approval_list", {"status": "someday"})
        assert (status["field"], status["accepted"][-1]) == ("status", "all")
        missing = await call(session, "approval_get", {"approval_id": "no-such-approval"})
        assert (missing["ok"], missing["field"]) == (False, "approval_id")
        # Left pending no more: the next test's listing sees only its own records waiting.
        await ok(session, "approval_decide", {"approval_id": record["id"], "decision": "deny"})


async def subscribe(session: ClientSession, uri: str) -> None:
    # Deprecated by the SDK for protocol 2026-07-28 (subscriptions/listen), the method of the
    # 2025-11-25 sessions that MCP clients negotiate today.
    with pytest.warns(MCPDeprecationWarning, match="resources/subscribe"):
        await session.subscribe_resource(uri)


async def test_a_subscriber_hears_of_approvals(guarded: LiveServer) -> None:
    updated: list[str] = []

    async def handle(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.append(str(message.params.uri))

    async with stdio_session(guarded, handle) as session:
        await subscribe(session, "recall://approvals")
        # A record that does not exist would never change: refused, naming its URI.
        other = "recall://approvals/someone-elses-record"
        with pytest.raises(MCPError, match="someone-elses-record") as refused:
            await subscribe(session, other)
        assert refused.value.code == RESOURCE_NOT_FOUND
        job_id, record = await waiting_approval(session, f"heard-{uuid.uuid4().hex[:8]}")
        with anyio.fail_after(DEADLINE):
            while "recall://approvals" not in updated:
                await anyio.sleep(0.2)
        one = f"recall://approvals/{record['id']}"
        await subscribe(session, one)
        updated.clear()
        await ok(session, "approval_decide", {"approval_id": record["id"], "decision": "approve"})
        with anyio.fail_after(DEADLINE):
            while not {one, "recall://approvals"} <= set(updated):
                await anyio.sleep(0.2)
        assert (await finished_run(session, job_id))["status"] == "succeeded"
        with pytest.warns(MCPDeprecationWarning, match="resources/unsubscribe"):
            await session.unsubscribe_resource(one)
    # The record's subscription heard its decision; only what was subscribed to was told.
    assert set(updated) <= {one, "recall://approvals"}
