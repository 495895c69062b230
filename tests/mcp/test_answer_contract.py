"""Answers keep their contract: ``job_run_now`` answers the job and the run it started, an
approval's answer keeps the MCP tool's name in ``tool``, and who decided is the owner the
request acts as, the same for every decision of one token user."""

from __future__ import annotations

import getpass
import uuid
from collections.abc import Iterator

import pytest

from tests.mcp.conftest import mcp_session, serving
from tests.mcp.test_approvals import waiting_approval
from tests.mcp.test_mcp import each_transport, ok
from tests.server.live_server import LiveServer


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from serving(
        tmp_path_factory,
        "answers",
        "--RecallApp.tool_policies=shell=approve",
        "--RecallApp.tool_policies=*=auto",
    )


@each_transport
async def test_job_run_now_answers_the_job_and_the_new_runs_id(
    transport: str, guarded: LiveServer
) -> None:
    async with mcp_session(transport, guarded) as session:
        job = await ok(
            session,
            "schedule_once",
            {"when": "in 2 hours", "action_type": "notification", "prompt": "run now"},
        )
        now = await ok(session, "job_run_now", {"job_id": job["job_id"]})
        assert now["tool"] == "job_run_now"
        assert now["job_id"] == job["job_id"]
        assert now["status"] == "active"
        assert now["action_type"] == "notification"
        assert now["schedule_type"] == job["schedule_type"]
        run = await ok(session, "run_output", {"run_id": now["run_id"]})
        assert run["job_id"] == job["job_id"]
        assert run["trigger"] == "manual"


@each_transport
async def test_approval_answers_keep_the_mcp_tools_name(
    transport: str, guarded: LiveServer
) -> None:
    async with mcp_session(transport, guarded) as session:
        _, record = await waiting_approval(session, f"name-{uuid.uuid4().hex[:8]}")
        shown = await ok(session, "approval_get", {"approval_id": record["id"]})
        assert shown["tool"] == "approval_get"
        assert shown["approval_tool"] == "shell.run"
        assert shown["id"] == record["id"]
        decided = await ok(
            session, "approval_decide", {"approval_id": record["id"], "decision": "deny"}
        )
        assert decided["tool"] == "approval_decide"
        assert decided["approval_tool"] == "shell.run"
        assert decided["status"] == "denied"


async def test_every_decision_of_a_token_user_names_the_same_decider(guarded: LiveServer) -> None:
    deciders = []
    async with mcp_session("http", guarded) as session:
        for _ in range(2):
            _, record = await waiting_approval(session, f"who-{uuid.uuid4().hex[:8]}")
            decision = {"approval_id": record["id"], "decision": "deny"}
            await ok(session, "approval_decide", decision)
            shown = await ok(session, "approval_list", {"status": "all"})
            (mine,) = [item for item in shown["approvals"] if item["id"] == record["id"]]
            deciders.append(mine["decided_by"])
    # The stock shared token names no one: the owner is the server's OS user, every time.
    assert deciders == [getpass.getuser()] * 2
