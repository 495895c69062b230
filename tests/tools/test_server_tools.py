"""Tool actions on a real Jupyter server: GET /api/recall/tools and jobs whose action is a tool."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.server.rest import call
from tests.server.test_rest import wait_for_run


@pytest.fixture
def recall_config(recall_config):
    recall_config["tool_policies"] = {"shell": "block", "http.get": "approve", "*": "auto"}
    return recall_config


def tool_job(name: str, params: dict) -> dict:
    return {"when": "now", "action": {"type": "tool", "name": name, "params": params}}


async def test_tools_route_lists_builtins_and_policies(jp_fetch):
    body = await call(jp_fetch, "GET", "api/recall/tools")
    names = {tool["name"] for tool in body["tools"]}
    assert {"filesystem.read", "http.download", "shell.run"} <= names
    assert body["policies"] == {"shell": "block", "http.get": "approve", "*": "auto"}
    read = next(tool for tool in body["tools"] if tool["name"] == "filesystem.read")
    assert read["parameters"] == ["path", "encoding"]
    assert read["builtin"] is True


async def test_tool_job_runs_under_the_server_root(jp_fetch, jp_root_dir):
    (jp_root_dir / "notes.txt").write_text("from the root", encoding="utf-8")
    job = await call(
        jp_fetch,
        "POST",
        "api/recall/jobs",
        tool_job("filesystem.read", {"path": "notes.txt"}),
        expect=201,
    )
    run = await wait_for_run(jp_fetch, job["id"])
    assert run["status"] == "succeeded", run
    result = json.loads(run["output"])
    assert result["data"]["content"] == "from the root"


async def test_tool_job_outside_the_root_fails(jp_fetch):
    job = await call(
        jp_fetch,
        "POST",
        "api/recall/jobs",
        tool_job("filesystem.read", {"path": "../x"}),
        expect=201,
    )
    run = await wait_for_run(jp_fetch, job["id"])
    assert run["status"] == "failed"
    assert "outside the tool root" in run["error"]


async def test_blocked_tools_are_refused_and_approve_tools_wait_on_the_server(jp_fetch):
    blocked = await call(
        jp_fetch,
        "POST",
        "api/recall/jobs",
        tool_job("shell.run", {"command": "echo hi"}),
        expect=201,
    )
    run = await wait_for_run(jp_fetch, blocked["id"])
    assert run["status"] == "failed"
    assert run["error"] == (
        "tool shell.run is blocked by server config RecallApp.tool_policies['shell'] "
        "(policy: block)"
    )
    approve = await call(
        jp_fetch,
        "POST",
        "api/recall/jobs",
        tool_job("http.get", {"url": "http://127.0.0.1:1/"}),
        expect=201,
    )
    # An approve tool waits in the approvals inbox (tests/server/test_approvals.py): deny it.
    deadline = asyncio.get_running_loop().time() + 30
    while not (records := await call(jp_fetch, "GET", "api/recall/approvals"))["approvals"]:
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.1)
    [record] = records["approvals"]
    assert record["source"] == "server config RecallApp.tool_policies['http.get']"
    await call(jp_fetch, "POST", f"api/recall/approvals/{record['id']}", {"decision": "deny"})
    run = await wait_for_run(jp_fetch, approve["id"])
    assert run["status"] == "failed"
    assert run["error"] == f"tool http.get was not run: approval denied ({record['id']})"
