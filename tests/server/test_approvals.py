"""The approvals inbox on a real Jupyter server: records over REST, decisions with who and when,
expiry, events, and a server-side tool job under an ``approve`` policy that waits for it."""

from __future__ import annotations

import asyncio
import getpass
import json

import pytest

from tests.server.rest import call
from tests.server.test_rest import wait_for_run

ASK = {
    "tool": "shell.run",
    "summary": "shell.run(command='ls')",
    "source": "kernel policy",
    "asked_by": "kernel:notebook.ipynb",
}


@pytest.fixture
def recall_config(recall_config):
    recall_config["tool_policies"] = {"shell": "approve", "*": "auto"}
    recall_config["approval_timeout"] = 120.0
    return recall_config


async def pending(jp_fetch, *, timeout: float = 30.0, count: int = 1) -> list[dict]:
    """The pending records, once there are ``count``."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        records = (await call(jp_fetch, "GET", "api/recall/approvals", status="pending"))[
            "approvals"
        ]
        if len(records) >= count:
            return records
        assert asyncio.get_running_loop().time() < deadline, "no pending approval"
        await asyncio.sleep(0.1)


def shell_job(command: str) -> dict:
    return {
        "when": "now",
        "action": {"type": "tool", "name": "shell.run", "params": {"command": command}},
    }


async def test_a_server_tool_job_waits_for_the_inbox_and_runs_once_approved(jp_fetch):
    body = shell_job("echo approved-run")
    job = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201)
    [record] = await pending(jp_fetch)
    assert record["tool"] == "shell.run"
    assert record["summary"] == "shell.run(command='echo approved-run')"
    assert record["asked_by"].startswith("run:")
    runs = (await call(jp_fetch, "GET", f"api/recall/jobs/{job['id']}/runs"))["runs"]
    assert [run["status"] for run in runs] == ["running"]
    assert record["asked_by"] == f"run:{runs[0]['id']}"

    decided = await call(
        jp_fetch, "POST", f"api/recall/approvals/{record['id']}", {"decision": "approve"}
    )
    assert decided["status"] == "approved"
    # The identity's username (a token-authenticated test client gets a generated one).
    assert isinstance(decided["decided_by"], str)
    assert decided["decided_by"]
    assert decided["decided_at"] is not None
    run = await wait_for_run(jp_fetch, job["id"], timeout=60)
    assert run["status"] == "succeeded", run
    result = json.loads(run["output"].splitlines()[-1])
    assert result["success"] is True
    assert "approved-run" in json.dumps(result["data"])


async def test_tool_jobs_waiting_for_approval_do_not_delay_other_server_jobs(jp_fetch):
    # Two waiting runs would fill the `server` target's slots (per_kernel_limit: 2).
    tools = [
        await call(jp_fetch, "POST", "api/recall/jobs", shell_job(f"echo waited-{i}"), expect=201)
        for i in range(2)
    ]
    records = await pending(jp_fetch, count=2)
    urgent = {"when": "now", "action": {"type": "notification", "message": "urgent"}}
    job = await call(jp_fetch, "POST", "api/recall/jobs", urgent, expect=201)
    # Well before the approvals' 120 s.
    run = await wait_for_run(jp_fetch, job["id"], timeout=20)
    assert run["status"] == "succeeded", run
    assert "urgent" in run["output"]
    for record in records:
        path = f"api/recall/approvals/{record['id']}"
        await call(jp_fetch, "POST", path, {"decision": "approve"})
    for index, tool in enumerate(tools):
        run = await wait_for_run(jp_fetch, tool["id"], timeout=60)
        assert run["status"] == "succeeded", run
        assert f"waited-{index}" in run["output"]


async def settled(jp_fetch, approval_id: str, *, timeout: float = 30.0) -> dict:
    """The record once it is no longer pending."""
    path = f"api/recall/approvals/{approval_id}"
    deadline = asyncio.get_running_loop().time() + timeout
    while (record := await call(jp_fetch, "GET", path))["status"] == "pending":
        assert asyncio.get_running_loop().time() < deadline, "still pending"
        await asyncio.sleep(0.1)
    return record


async def assert_withdrawn(jp_fetch, record: dict) -> None:
    """Withdrawn: expired with a note naming the run, and no decision is taken any more."""
    got = await settled(jp_fetch, record["id"])
    assert got["status"] == "expired"
    assert got["decided_by"] is None
    assert got["note"].startswith(f"withdrawn: {record['asked_by']} was stopped")
    path = f"api/recall/approvals/{record['id']}"
    late = await call(jp_fetch, "POST", path, {"decision": "approve"}, expect=409)
    assert "already expired (withdrawn: " in late["message"]


async def test_stopping_a_run_waiting_for_approval_withdraws_it(jp_fetch):
    job = await call(jp_fetch, "POST", "api/recall/jobs", shell_job("echo stopped"), expect=201)
    [record] = await pending(jp_fetch)
    run_id = record["asked_by"].removeprefix("run:")
    await call(jp_fetch, "POST", f"api/recall/runs/{run_id}/stop")
    await assert_withdrawn(jp_fetch, record)
    run = await wait_for_run(jp_fetch, job["id"])
    assert run["status"] == "cancelled"


async def test_deleting_the_job_of_a_run_waiting_for_approval_withdraws_it(jp_fetch):
    job = await call(jp_fetch, "POST", "api/recall/jobs", shell_job("echo deleted"), expect=201)
    [record] = await pending(jp_fetch)
    await call(jp_fetch, "DELETE", f"api/recall/jobs/{job['id']}", expect=204)
    await assert_withdrawn(jp_fetch, record)


async def test_a_denied_server_tool_job_fails_with_the_reason(jp_fetch):
    job = await call(jp_fetch, "POST", "api/recall/jobs", shell_job("echo never"), expect=201)
    [record] = await pending(jp_fetch)
    await call(
        jp_fetch,
        "POST",
        f"api/recall/approvals/{record['id']}",
        {"decision": "deny", "note": "not today"},
    )
    run = await wait_for_run(jp_fetch, job["id"], timeout=60)
    assert run["status"] == "failed"
    assert run["error"] == f"tool shell.run was not run: approval denied ({record['id']})"
    got = await call(jp_fetch, "GET", f"api/recall/approvals/{record['id']}")
    assert (got["status"], got["note"]) == ("denied", "not today")


async def test_a_decision_is_final_and_bad_ones_name_the_field(jp_fetch):
    record = await call(jp_fetch, "POST", "api/recall/approvals", ASK, expect=201)
    assert record["status"] == "pending"
    path = f"api/recall/approvals/{record['id']}"
    bad = await call(jp_fetch, "POST", path, {"decision": "maybe"}, expect=400)
    assert bad["field"] == "decision"
    assert bad["accepted"] == ["approve", "deny"]
    missing = await call(jp_fetch, "POST", path, {}, expect=400)
    assert missing["field"] == "decision"
    # A misspelt note is refused, not a decision recorded without it.
    typo = await call(jp_fetch, "POST", path, {"decision": "deny", "notes": "x"}, expect=400)
    assert (typo["field"], typo["accepted"]) == ("notes", ["decision", "note"])
    await call(jp_fetch, "POST", path, {"decision": "deny"})
    again = await call(jp_fetch, "POST", path, {"decision": "approve"}, expect=409)
    assert "already denied" in again["message"]
    await call(jp_fetch, "GET", "api/recall/approvals/unknown", expect=404)
    wrong = await call(jp_fetch, "GET", "api/recall/approvals", expect=400, status="maybe")
    assert wrong["field"] == "status"


async def test_an_unanswered_approval_expires_and_cannot_be_decided_after(jp_fetch):
    record = await call(jp_fetch, "POST", "api/recall/approvals", {**ASK, "timeout": 1}, expect=201)
    path = f"api/recall/approvals/{record['id']}"
    deadline = asyncio.get_running_loop().time() + 30
    while (await call(jp_fetch, "GET", path))["status"] == "pending":
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.2)
    assert (await call(jp_fetch, "GET", path))["status"] == "expired"
    late = await call(jp_fetch, "POST", path, {"decision": "approve"}, expect=409)
    assert "already expired" in late["message"]


async def test_each_change_is_an_event_for_the_owner(jp_fetch, jp_serverapp):
    # Opened first so that the server is started (the hub is in the settings once it is).
    await call(jp_fetch, "GET", "api/recall/approvals")
    hub = jp_serverapp.web_app.settings["jupyter_recall_events"]
    queue = hub.open(getpass.getuser())
    try:
        record = await call(jp_fetch, "POST", "api/recall/approvals", ASK, expect=201)
        path = f"api/recall/approvals/{record['id']}"
        await call(jp_fetch, "POST", path, {"decision": "approve"})
        events = [await asyncio.wait_for(queue.get(), 10) for _ in range(2)]
    finally:
        hub.close(getpass.getuser(), queue)
    assert [event["type"] for event in events] == ["approval.created", "approval.decided"]
    assert events[1]["approval"]["status"] == "approved"
    assert events[1]["approval"]["id"] == record["id"]


async def test_an_unknown_field_of_a_new_approval_is_refused_naming_it(jp_fetch):
    error = await call(jp_fetch, "POST", "api/recall/approvals", {**ASK, "zz": 1}, expect=400)
    assert error["field"] == "zz"
    assert error["accepted"] == ["tool", "summary", "source", "asked_by", "timeout"]
    assert (await call(jp_fetch, "GET", "api/recall/approvals"))["approvals"] == []


async def test_the_listing_pages_with_a_cursor_beyond_one_page(jp_fetch):
    created = [
        (await call(jp_fetch, "POST", "api/recall/approvals", ASK, expect=201))["id"]
        for _ in range(7)
    ]
    first = await call(jp_fetch, "GET", "api/recall/approvals", limit="3")
    assert len(first["approvals"]) == 3
    assert first["next_cursor"]
    seen = [record["id"] for record in first["approvals"]]
    cursor = first["next_cursor"]
    while cursor is not None:
        page = await call(jp_fetch, "GET", "api/recall/approvals", limit="3", cursor=cursor)
        seen += [record["id"] for record in page["approvals"]]
        cursor = page["next_cursor"]
    # Newest first, each once, none lost (several share one millisecond: the id breaks ties).
    assert sorted(seen) == sorted(created)
    assert len(seen) == 7
    whole = await call(jp_fetch, "GET", "api/recall/approvals")
    assert [record["id"] for record in whole["approvals"]] == seen
    assert whole["next_cursor"] is None
    bad = await call(jp_fetch, "GET", "api/recall/approvals", expect=400, cursor="nonsense!")
    assert bad["field"] == "cursor"
    too_big = await call(jp_fetch, "GET", "api/recall/approvals", expect=400, limit="10001")
    assert too_big["field"] == "limit"
