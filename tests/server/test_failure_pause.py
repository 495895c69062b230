"""Pause after failures and pruning through a real Jupyter server: a tool job failing at each
occurrence is paused after two, its reason in the job's JSON, and the pause notice reaches the
job's output channel, a real webhook on loopback; then prune over REST, dry run first."""

from __future__ import annotations

import asyncio

import pytest

from tests.engine.receivers import http_receiver
from tests.server.rest import call


@pytest.fixture
def hook():
    with http_receiver() as receiver:
        yield receiver


@pytest.fixture
def recall_config(recall_config, hook):
    recall_config["notification_channels"] = {"ops": {"type": "webhook", "url": hook.url}}
    # Only the prunes the test asks for: a background sweep (every minute by default) could
    # delete its runs between its dry run and its prune.
    recall_config["prune_interval"] = 3600.0
    return recall_config


async def job_now(jp_fetch, job_id):
    return await call(jp_fetch, "GET", f"api/recall/jobs/{job_id}", expect=200)


async def test_a_failing_job_pauses_after_two_occurrences_and_says_so(jp_fetch, hook):
    job = await call(
        jp_fetch,
        "POST",
        "api/recall/jobs",
        {
            "when": "every 2 seconds",
            "name": "read missing",
            "action": {"type": "tool", "name": "filesystem.read", "params": {"path": "gone.txt"}},
            "options": {"output_channel": "ops"},
            "policies": {"pause_after_failures": 2, "keep_runs": 1},
        },
        expect=201,
    )
    assert (job["failure_streak"], job["paused_reason"]) == (0, None)
    for _ in range(600):
        current = await job_now(jp_fetch, job["id"])
        if current["status"] == "paused":
            break
        await asyncio.sleep(0.1)
    assert current["status"] == "paused", current
    assert current["failure_streak"] >= 2
    assert current["paused_reason"].startswith("paused after 2 consecutive failed occurrences")
    # Two outcomes (failed), then the pause notice, all through the job's channel.
    received = await asyncio.to_thread(hook.wait, 3, 60.0)
    notices = [body for body in received if "paused" in body["tags"]]
    assert len(notices) == 1, received
    (notice,) = notices
    # The failure that paused the job is told before the pause.
    assert received[-1] is notice
    assert [body["structured_data"]["status"] for body in received[:-1]] == ["failed", "failed"]
    assert notice["title"] == "read missing: paused"
    assert notice["priority"] == "high"
    assert notice["structured_data"]["paused_reason"] == current["paused_reason"]
    assert notice["source"] == {"kind": "job", "job_id": job["id"]}

    runs = (await call(jp_fetch, "GET", f"api/recall/jobs/{job['id']}/runs", expect=200))["runs"]
    assert {run["status"] for run in runs} == {"failed"}
    pruned = len(runs) - 1
    dry = await call(jp_fetch, "POST", "api/recall/runs/prune", {"dry_run": True}, expect=200)
    assert dry == {"dry_run": True, "runs": pruned, "jobs": {job["id"]: pruned}}
    kept = await call(jp_fetch, "GET", f"api/recall/jobs/{job['id']}/runs", expect=200)
    assert len(kept["runs"]) == len(runs)
    done = await call(jp_fetch, "POST", "api/recall/runs/prune", {}, expect=200)
    assert done == {"dry_run": False, "runs": pruned, "jobs": {job["id"]: pruned}}
    left = await call(jp_fetch, "GET", f"api/recall/jobs/{job['id']}/runs", expect=200)
    assert [run["id"] for run in left["runs"]] == [runs[0]["id"]]
    assert (await job_now(jp_fetch, job["id"]))["run_count"] == len(runs)

    resumed = await call(jp_fetch, "POST", f"api/recall/jobs/{job['id']}/resume", expect=200)
    assert (resumed["status"], resumed["failure_streak"], resumed["paused_reason"]) == (
        "active",
        0,
        None,
    )
    await call(jp_fetch, "POST", f"api/recall/jobs/{job['id']}/cancel", expect=200)


async def test_prune_refuses_bad_bodies_naming_the_field(jp_fetch):
    unknown = await call(jp_fetch, "POST", "api/recall/runs/prune", {"keep": 1}, expect=400)
    assert unknown["field"] == "keep"
    wrong = await call(jp_fetch, "POST", "api/recall/runs/prune", {"dry_run": "yes"}, expect=400)
    assert wrong["field"] == "dry_run"
