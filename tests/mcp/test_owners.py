"""Over HTTP, each tool call is the authenticated caller's: with an IdentityProvider that tells
users apart, one user's jobs are invisible to another, through MCP as through REST."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.mcp.conftest import http_session, serving
from tests.mcp.test_mcp import call, ok
from tests.server.live_server import LiveServer

IDENTITY = "--ServerApp.identity_provider_class=tests.mcp.identity.HeaderUsers"


@pytest.fixture(scope="module")
def named_users(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from serving(tmp_path_factory, "users", IDENTITY)


async def test_each_caller_sees_only_their_jobs(named_users: LiveServer) -> None:
    job = {"when": "in 1h", "prompt": "stand-up", "label": "alice's"}
    async with http_session(named_users, headers={"X-Test-User": "alice"}) as alice:
        created = await ok(alice, "schedule_once", job)
        mine = await ok(alice, "job_list", {})
    async with http_session(named_users, headers={"X-Test-User": "bob"}) as bob:
        theirs = await ok(bob, "job_list", {})
        looked_up = await call(bob, "schedule_status", {"job_id": created["job_id"]})
        cancelled = await call(bob, "schedule_cancel", {"job_id": created["job_id"]})
    assert [j["job_id"] for j in mine["jobs"]] == [created["job_id"]]
    assert theirs["jobs"] == []
    for refused in (looked_up, cancelled):
        assert refused["ok"] is False
        assert refused["field"] == "job_id"
    owner = named_users.request("GET", f"/api/recall/jobs/{created['job_id']}")
    assert owner["status"] == "active"


async def test_job_list_pages_and_counts_every_match(named_users: LiveServer) -> None:
    headers = {"X-Test-User": "carol"}
    async with http_session(named_users, headers=headers) as carol:
        made = [
            (await ok(carol, "schedule_once", {"when": f"in {n}h", "prompt": f"p{n}"}))["job_id"]
            for n in (1, 2, 3)
        ]
        first = await ok(carol, "job_list", {"limit": 2})
        second = await ok(carol, "job_list", {"limit": 2, "cursor": first["next_cursor"]})
        bad = await call(carol, "job_list", {"cursor": "not-a-cursor"})
    assert (first["total"], second["total"]) == (3, 3)
    assert len(first["jobs"]) == 2
    assert first["next_cursor"]
    assert second["next_cursor"] is None
    listed = [job["job_id"] for job in first["jobs"] + second["jobs"]]
    assert sorted(listed) == sorted(made)
    assert bad["ok"] is False
    assert bad["field"] == "cursor"
