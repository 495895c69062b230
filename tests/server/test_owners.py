"""Jobs declared by owners through a real server: reconcile over REST (counts, history kept),
read-only to users, switching an owner off and on, and a package's entry point at start."""

from __future__ import annotations

import asyncio
import textwrap
import urllib.error
from pathlib import Path

import pytest

from tests.server.live_server import LiveServer
from tests.server.rest import call


def declared(key: str, when: str = "every 1h", message: str = "hello") -> dict:
    return {"key": key, "when": when, "action": {"type": "notification", "message": message}}


async def put(jp_fetch, owner: str, jobs: list, expect: int = 200):
    return await call(
        jp_fetch, "PUT", f"api/recall/owners/{owner}/jobs", {"jobs": jobs}, expect=expect
    )


async def runs_of(jp_fetch, job_id: str) -> list:
    return (await call(jp_fetch, "GET", f"api/recall/jobs/{job_id}/runs"))["runs"]


async def wait_for(predicate, timeout: float = 10.0):
    deadline = asyncio.get_running_loop().time() + timeout
    while not (value := await predicate()):
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.05)
    return value


async def test_reconcile_twice_with_a_changed_set(jp_fetch):
    first = await put(jp_fetch, "nightly", [declared("a"), declared("b"), declared("c")])
    assert first["counts"] == {"created": 3, "updated": 0, "deleted": 0, "unchanged": 0}
    a = next(job for job in first["created"] if job["key"] == "a")
    assert a["plugin_owner"] == "nightly"
    assert a["name"] == "a"
    run = await call(jp_fetch, "POST", f"api/recall/jobs/{a['id']}/trigger", expect=201)

    async def finished():
        return [r for r in await runs_of(jp_fetch, a["id"]) if r["status"] == "succeeded"]

    await wait_for(finished)
    second = await put(
        jp_fetch, "nightly", [declared("a", when="every 2h"), declared("b"), declared("d")]
    )
    assert second["counts"] == {"created": 1, "updated": 1, "deleted": 1, "unchanged": 1}
    assert [job["key"] for job in second["deleted"]] == ["c"]
    (updated,) = second["updated"]
    assert updated["id"] == a["id"]
    assert updated["when"] == "every 2h"
    assert [r["id"] for r in await runs_of(jp_fetch, a["id"])] == [run["id"]]

    listed = await call(jp_fetch, "GET", "api/recall/owners/nightly/jobs")
    assert sorted(job["key"] for job in listed["jobs"]) == ["a", "b", "d"]
    assert listed["disabled"] is False
    everything = await call(jp_fetch, "GET", "api/recall/jobs")
    assert len(everything["jobs"]) == 3

    removed = await call(jp_fetch, "DELETE", "api/recall/owners/nightly/jobs")
    assert len(removed["deleted"]) == 3
    assert (await call(jp_fetch, "GET", "api/recall/jobs"))["jobs"] == []


async def test_users_cannot_edit_or_delete_a_declared_job(jp_fetch):
    (job,) = (await put(jp_fetch, "deploy", [declared("k")]))["created"]
    path = f"api/recall/jobs/{job['id']}"
    refused = await call(jp_fetch, "PATCH", path, {"name": "mine"}, expect=409)
    assert "managed by owner 'deploy'" in refused["message"]
    refused = await call(jp_fetch, "DELETE", path, expect=409)
    assert "deploy" in refused["message"]
    await call(jp_fetch, "POST", f"{path}/cancel", expect=409)
    assert (await call(jp_fetch, "POST", f"{path}/pause"))["status"] == "paused"
    assert (await call(jp_fetch, "POST", f"{path}/resume"))["status"] == "active"
    assert (await call(jp_fetch, "GET", path))["name"] == "k"


async def test_bad_declarations_are_refused_naming_the_field(jp_fetch):
    bad = await put(jp_fetch, "x", [declared("a"), declared("b", when="sometimes")], expect=400)
    assert bad["field"] == "jobs[1].when"
    bad = await put(jp_fetch, "x", [declared("a"), declared("a")], expect=400)
    assert bad["field"] == "jobs[1].key"
    assert (await call(jp_fetch, "GET", "api/recall/jobs"))["jobs"] == []


async def test_a_due_job_of_a_disabled_owner_does_not_fire(jp_fetch):
    (job,) = (await put(jp_fetch, "ops", [declared("soon", when="in 1s")]))["created"]
    switched = await call(jp_fetch, "POST", "api/recall/owners/ops/disable")
    assert [j["status"] for j in switched["jobs"]] == ["paused"]
    await call(jp_fetch, "POST", f"api/recall/jobs/{job['id']}/trigger", expect=409)
    await call(jp_fetch, "POST", f"api/recall/jobs/{job['id']}/resume", expect=409)
    await asyncio.sleep(1.5)
    assert await runs_of(jp_fetch, job["id"]) == []
    assert (await call(jp_fetch, "GET", "api/recall/owners/ops/jobs"))["disabled"] is True

    enabled = await call(jp_fetch, "POST", "api/recall/owners/ops/enable")
    assert [j["status"] for j in enabled["jobs"]] == ["active"]

    async def fired():
        return [r for r in await runs_of(jp_fetch, job["id"]) if r["status"] == "succeeded"]

    await wait_for(fired)


async def test_reconciling_or_removing_an_owner_cancels_the_jobs_waiting_for_its_jobs(jp_fetch):
    """A declared job deleted by a declaration without it, or with its owner's jobs, cancels
    the user's jobs that wait for it, as DELETE /jobs/{id} does."""
    a, b = sorted(
        (await put(jp_fetch, "pipeline", [declared("a"), declared("b")]))["created"],
        key=lambda job: job["key"],
    )
    notify = {"type": "notification", "message": "next"}
    on_a, on_b = [
        await call(
            jp_fetch,
            "POST",
            "api/recall/jobs",
            {"after": {"job": up["id"]}, "action": notify},
            expect=201,
        )
        for up in (a, b)
    ]
    reconciled = await put(jp_fetch, "pipeline", [declared("b")])
    assert [job["id"] for job in reconciled["deleted"]] == [a["id"]]
    cancelled = await call(jp_fetch, "GET", f"api/recall/jobs/{on_a['id']}")
    assert cancelled["status"] == "cancelled"
    assert cancelled["last_error"] == f"cancelled: its upstream job {a['id']} was deleted"
    assert (await call(jp_fetch, "GET", f"api/recall/jobs/{on_b['id']}"))["status"] == "active"

    await call(jp_fetch, "DELETE", "api/recall/owners/pipeline/jobs")
    cancelled = await call(jp_fetch, "GET", f"api/recall/jobs/{on_b['id']}")
    assert cancelled["status"] == "cancelled"
    assert b["id"] in cancelled["last_error"]


PACKAGE = """
def declare():
    return "demo-package", [
        {"key": "hourly", "when": "every 1h",
         "action": {"type": "notification", "message": "from the package"}},
    ]
"""


def install_tiny_package(site: Path) -> None:
    """A package declaring one job through the ``jupyter_recall.jobs`` entry point group."""
    (site / "recall_demo_jobs.py").write_text(textwrap.dedent(PACKAGE))
    info = site / "recall_demo_jobs-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: recall-demo-jobs\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[jupyter_recall.jobs]\ndemo = recall_demo_jobs:declare\n"
    )


def test_an_installed_package_declares_a_job_at_start(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    install_tiny_package(site)
    root = tmp_path / "root"
    root.mkdir()
    server = LiveServer(root, tmp_path / "recall.sqlite", env={"PYTHONPATH": str(site)})
    server.start()
    try:
        listed = server.request("GET", "/api/recall/owners/demo-package/jobs")
        (job,) = listed["jobs"]
        assert (job["key"], job["when"]) == ("hourly", "every 1h")
        with pytest.raises(urllib.error.HTTPError) as refused:
            server.request("DELETE", f"/api/recall/jobs/{job['id']}")
        refused.value.close()
        assert refused.value.code == 409
    finally:
        server.stop()
