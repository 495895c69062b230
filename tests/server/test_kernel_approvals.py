"""A kernel's approval requests do not outlive what waits for them: a kernel shut down or
restarted withdraws the requests it asked (the cell that waited is gone), and an asker can
withdraw its own request (``POST .../withdraw``, what a kernel does when its cell is
interrupted)."""

from __future__ import annotations

import asyncio
import json

from tests.server.rest import call

APPROVALS = "api/recall/approvals"


def ask(asked_by: str) -> dict:
    return {
        "tool": "shell.run",
        "summary": "shell.run(command='ls')",
        "source": "kernel policy",
        "asked_by": asked_by,
        "timeout": 600,
    }


async def open_session(jp_fetch, path: str) -> dict:
    body = {"path": path, "name": path, "type": "notebook", "kernel": {"name": "python3"}}
    response = await jp_fetch("api", "sessions", method="POST", body=json.dumps(body))
    return json.loads(response.body)


async def settled(jp_fetch, approval_id: str, timeout: float = 30.0) -> dict:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        record = await call(jp_fetch, "GET", f"{APPROVALS}/{approval_id}")
        if record["status"] != "pending":
            return record
        assert asyncio.get_running_loop().time() < deadline, f"{approval_id} still pending"
        await asyncio.sleep(0.1)


async def test_a_restarted_kernel_withdraws_what_it_asked_and_only_that(jp_fetch):
    session = await open_session(jp_fetch, "work/analysis.ipynb")
    kernel_id = session["kernel"]["id"]
    by_path = await call(jp_fetch, "POST", APPROVALS, ask("kernel:work/analysis.ipynb"), expect=201)
    by_id = await call(jp_fetch, "POST", APPROVALS, ask(f"kernel:{kernel_id}"), expect=201)
    other = await call(jp_fetch, "POST", APPROVALS, ask("kernel:other.ipynb"), expect=201)
    run = await call(jp_fetch, "POST", APPROVALS, ask("run:r1"), expect=201)
    await jp_fetch("api", "kernels", kernel_id, "restart", method="POST", body="{}")
    for record in (by_path, by_id):
        withdrawn = await settled(jp_fetch, record["id"])
        assert withdrawn["status"] == "expired"
        why = "was restarted before a decision"
        assert withdrawn["note"] == f"withdrawn: {record['asked_by']} {why}"
    for record in (other, run):
        assert (await call(jp_fetch, "GET", f"{APPROVALS}/{record['id']}"))["status"] == "pending"
    # A request of the restarted kernel is its own: it waits for a decision.
    after = await call(jp_fetch, "POST", APPROVALS, ask("kernel:work/analysis.ipynb"), expect=201)
    await asyncio.sleep(1)
    assert (await call(jp_fetch, "GET", f"{APPROVALS}/{after['id']}"))["status"] == "pending"
    await jp_fetch("api", "sessions", session["id"], method="DELETE")
    closed = await settled(jp_fetch, after["id"])
    assert closed["note"] == "withdrawn: kernel:work/analysis.ipynb was shut down before a decision"
    with_decision = {"decision": "approve"}
    error = await call(jp_fetch, "POST", f"{APPROVALS}/{after['id']}", with_decision, expect=409)
    assert "expired" in error["message"]


async def test_an_asker_withdraws_its_own_pending_request(jp_fetch):
    record = await call(jp_fetch, "POST", APPROVALS, ask("kernel:nb.ipynb"), expect=201)
    withdrawn = await call(jp_fetch, "POST", f"{APPROVALS}/{record['id']}/withdraw")
    assert withdrawn["status"] == "expired"
    assert withdrawn["note"] == "withdrawn: kernel:nb.ipynb stopped waiting before a decision"
    assert withdrawn["decided_by"] is None
    assert await call(jp_fetch, "GET", f"{APPROVALS}/{record['id']}") == withdrawn
    error = await call(jp_fetch, "POST", f"{APPROVALS}/{record['id']}/withdraw", expect=409)
    assert error["message"].startswith(f"approval {record['id']} is already expired (withdrawn:")
    decided = await call(jp_fetch, "POST", APPROVALS, ask("kernel:nb.ipynb"), expect=201)
    await call(jp_fetch, "POST", f"{APPROVALS}/{decided['id']}", {"decision": "deny"})
    error = await call(jp_fetch, "POST", f"{APPROVALS}/{decided['id']}/withdraw", expect=409)
    assert error["message"] == f"approval {decided['id']} is already denied"
    await call(jp_fetch, "POST", f"{APPROVALS}/nosuchapproval/withdraw", expect=404)
