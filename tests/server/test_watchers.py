"""Watchers through a real server: a file polled with filesystem.read, notifications exactly on
its changes, strategies, validation, policies, pause/resume/stop, status and history."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

import pytest

from jupyter_recall.client.remote import error_from_response
from jupyter_recall.core.errors import UnknownServerTool
from jupyter_recall.server.watcher_options import EPOCH
from tests.engine.receivers import http_receiver
from tests.server.rest import call


@pytest.fixture
def hook():
    with http_receiver() as receiver:
        yield receiver


@pytest.fixture
def recall_config(recall_config, hook):
    recall_config["notification_channels"] = {"ops": {"type": "webhook", "url": hook.url}}
    recall_config["tool_policies"] = {"shell": "approve", "http.post": "block"}
    return recall_config


async def wait_for(predicate, timeout=10.0):
    deadline = asyncio.get_running_loop().time() + timeout
    while not (value := await predicate()):
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.05)
    return value


async def start(jp_fetch, **body):
    body = {"tool": "filesystem.read", "interval": 3600, "output_channel": "ops", **body}
    return await call(jp_fetch, "POST", "api/recall/watchers", body, expect=201)


async def status(jp_fetch, watcher_id, **query):
    return await call(jp_fetch, "GET", f"api/recall/watchers/{watcher_id}", **query)


async def check_now(jp_fetch, watcher_id):
    """Run one check now (a manual run of the watcher's job) and wait until it is recorded."""
    before = (await status(jp_fetch, watcher_id))["checks"]
    await call(jp_fetch, "POST", f"api/recall/jobs/{watcher_id}/trigger", expect=201)

    async def recorded():
        current = await status(jp_fetch, watcher_id)
        return current if current["checks"] > before else None

    return await wait_for(recorded)


async def first_check(jp_fetch, watcher_id):
    async def recorded():
        current = await status(jp_fetch, watcher_id)
        return current if current["checks"] >= 1 else None

    return await wait_for(recorded)


async def test_on_change_notifies_exactly_on_the_file_changes(jp_fetch, jp_root_dir, hook):
    polled = jp_root_dir / "status.txt"
    polled.write_text("deploying")
    watcher = await start(jp_fetch, params={"path": "status.txt"}, label="deploy status")
    assert watcher["status"] == "running"
    assert watcher["notify_when"] == "on_change"
    assert "checking filesystem.read every 3600s" in watcher["hint"]
    await first_check(jp_fetch, watcher["watcher_id"])
    await check_now(jp_fetch, watcher["watcher_id"])
    polled.write_text("live")
    await check_now(jp_fetch, watcher["watcher_id"])
    await check_now(jp_fetch, watcher["watcher_id"])
    polled.write_text("failed")
    final = await check_now(jp_fetch, watcher["watcher_id"])
    bodies = await asyncio.to_thread(hook.wait, 3)
    await asyncio.sleep(0.3)
    assert len(hook.received) == 3
    contents = [b["structured_data"]["result"]["data"]["content"] for b in bodies]
    assert contents == ["deploying", "live", "failed"]
    assert [b["structured_data"]["reason"] for b in bodies] == ["baseline", "changed", "changed"]
    assert bodies[1]["message"].startswith(
        f'[WATCHER UPDATE] watcher_id={watcher["watcher_id"]}, label="deploy status", '
        "tool=filesystem.read\nCheck #3 (interval: 3600s, 2 notification(s) so far, "
        "strategy: on_change): changed"
    )
    assert (final["checks"], final["notifications"]) == (5, 3)
    assert [h["reason"] for h in final["history"]] == [
        "changed",
        "unchanged",
        "changed",
        "unchanged",
        "baseline",
    ]
    assert final["last_result"]["result"]["data"]["content"] == "failed"
    assert final["last_notified_at"] is not None


async def test_a_watcher_job_edited_through_the_jobs_api_checks_as_edited(
    jp_fetch, jp_root_dir, hook
):
    (jp_root_dir / "a.txt").write_text("first file")
    (jp_root_dir / "b.txt").write_text("second file")
    watcher = await start(jp_fetch, params={"path": "a.txt"}, label="before")
    watcher_id = watcher["watcher_id"]
    await first_check(jp_fetch, watcher_id)
    await check_now(jp_fetch, watcher_id)
    job = await call(jp_fetch, "GET", f"api/recall/jobs/{watcher_id}")
    options = job["options"]
    options["watcher"]["label"] = "after"
    action = {**job["action"], "params": {"path": "b.txt"}}
    edit = {"action": action, "options": options}
    await call(jp_fetch, "PATCH", f"api/recall/jobs/{watcher_id}", edit)
    await check_now(jp_fetch, watcher_id)
    bodies = await asyncio.to_thread(hook.wait, 2)
    assert [b["structured_data"]["reason"] for b in bodies] == ["baseline", "changed"]
    assert bodies[1]["structured_data"]["result"]["data"]["content"] == "second file"
    assert bodies[1]["structured_data"]["label"] == "after"


async def test_a_watchers_schedule_edited_through_the_jobs_api_is_its_interval(
    jp_fetch, jp_root_dir
):
    (jp_root_dir / "a.txt").write_text("watched")
    watcher_id = (await start(jp_fetch, params={"path": "a.txt"}, interval=10))["watcher_id"]
    path = f"api/recall/jobs/{watcher_id}"
    job = await call(jp_fetch, "PATCH", path, {"when": "every 30 seconds"})
    assert job["options"]["watcher"]["interval"] == 30
    # As at creation, its checks fall on whole multiples of the new interval.
    next_check = datetime.fromisoformat(job["next_fire_at"])
    assert (next_check - EPOCH) % timedelta(seconds=30) == timedelta(0), next_check
    assert (await status(jp_fetch, watcher_id))["interval"] == 30
    for when, text in (
        ("at 9:00", "a watcher checks at an interval"),
        ("every 2s", "between 5 and 3600 seconds"),
    ):
        refused = await call(jp_fetch, "PATCH", path, {"when": when}, expect=400)
        assert refused["field"] == "when"
        assert text in refused["message"]
    # A refused edit changes nothing.
    assert (await call(jp_fetch, "GET", path))["when"] == "every 30 seconds"
    assert (await status(jp_fetch, watcher_id))["interval"] == 30


async def test_checks_follow_the_interval_schedule(jp_fetch, jp_root_dir, hook):
    (jp_root_dir / "tick.txt").write_text("same")
    watcher = await start(jp_fetch, params={"path": "tick.txt"}, interval=5)
    assert watcher["interval"] == 5

    async def two_checks():
        current = await status(jp_fetch, watcher["watcher_id"])
        return current if current["checks"] >= 2 else None

    done = await wait_for(two_checks, timeout=12)
    assert done["notifications"] == 1
    assert done["next_check_at"] is not None


async def test_on_error_notifies_errors_and_recoveries(jp_fetch, jp_root_dir, hook):
    watcher = await start(jp_fetch, params={"path": "missing.txt"}, notify_when="on_error")
    wid = watcher["watcher_id"]
    await first_check(jp_fetch, wid)
    await check_now(jp_fetch, wid)
    (jp_root_dir / "missing.txt").write_text("here now")
    await check_now(jp_fetch, wid)
    await check_now(jp_fetch, wid)
    bodies = await asyncio.to_thread(hook.wait, 2)
    await asyncio.sleep(0.3)
    assert [b["structured_data"]["reason"] for b in hook.received] == ["error", "recovered"]
    assert "is not a file under the root" in bodies[0]["message"]
    assert bodies[0]["priority"] == "high"
    runs = await call(jp_fetch, "GET", f"api/recall/jobs/{wid}/runs")
    failed = [r for r in runs["runs"] if r["status"] == "failed"]
    assert failed
    assert failed[0]["error"].startswith("check failed: filesystem.read")


async def test_on_threshold_notifies_when_the_condition_turns_true(jp_fetch, jp_root_dir, hook):
    polled = jp_root_dir / "size.txt"
    polled.write_text("ab")
    watcher = await start(
        jp_fetch,
        params={"path": "size.txt"},
        notify_when="on_threshold",
        notify_config={"expression": "result.size >= 5"},
    )
    wid = watcher["watcher_id"]
    await first_check(jp_fetch, wid)
    polled.write_text("abcdef")
    await check_now(jp_fetch, wid)
    polled.write_text("abcdefgh")
    await check_now(jp_fetch, wid)
    (body,) = await asyncio.to_thread(hook.wait, 1)
    await asyncio.sleep(0.3)
    assert len(hook.received) == 1
    assert body["structured_data"]["reason"] == "threshold met"
    assert "Condition: result.size >= 5" in body["message"]


async def test_summary_sends_every_batch(jp_fetch, jp_root_dir, hook):
    (jp_root_dir / "s.txt").write_text("x")
    watcher = await start(
        jp_fetch, params={"path": "s.txt"}, notify_when="summary", notify_config={"batch_size": 2}
    )
    wid = watcher["watcher_id"]
    await first_check(jp_fetch, wid)
    await check_now(jp_fetch, wid)
    await check_now(jp_fetch, wid)
    (body,) = await asyncio.to_thread(hook.wait, 1)
    assert [item["check"] for item in body["structured_data"]["batch"]] == [1, 2]
    assert "Summary (2 checks)" in body["message"]


async def test_without_an_output_channel_notifications_go_to_the_session(jp_fetch, jp_root_dir):
    (jp_root_dir / "n.txt").write_text("x")
    watcher = await call(
        jp_fetch,
        "POST",
        "api/recall/watchers",
        {"tool": "filesystem.read", "params": {"path": "n.txt"}, "session": "w.ipynb"},
        expect=201,
    )
    await first_check(jp_fetch, watcher["watcher_id"])

    async def buffered():
        held = await call(jp_fetch, "GET", "api/recall/notifications", session="w.ipynb")
        return held["buffered"]

    (held,) = await wait_for(buffered)
    assert held["source"] == {
        "kind": "watcher",
        "job_id": watcher["watcher_id"],
        "run_id": held["source"]["run_id"],
    }
    listed = await call(jp_fetch, "GET", "api/recall/watchers", session="w.ipynb")
    assert [w["watcher_id"] for w in listed["watchers"]] == [watcher["watcher_id"]]


async def test_pause_resume_stop_and_history(jp_fetch, jp_root_dir):
    (jp_root_dir / "p.txt").write_text("x")
    watcher = await start(jp_fetch, params={"path": "p.txt"})
    wid = watcher["watcher_id"]
    await first_check(jp_fetch, wid)
    paused = await call(jp_fetch, "POST", f"api/recall/watchers/{wid}/pause")
    assert paused["status"] == "paused"
    assert paused["checks"] == 1
    listed = await call(jp_fetch, "GET", "api/recall/watchers")
    assert [w["status"] for w in listed["watchers"] if w["watcher_id"] == wid] == ["paused"]
    resumed = await call(jp_fetch, "POST", f"api/recall/watchers/{wid}/resume")
    assert resumed["status"] == "running"
    for _ in range(3):
        await check_now(jp_fetch, wid)
    two = await status(jp_fetch, wid, last_n="2")
    assert [h["check"] for h in two["history"]] == [4, 3]
    await call(jp_fetch, "DELETE", f"api/recall/watchers/{wid}", expect=204)
    gone = await call(jp_fetch, "GET", f"api/recall/watchers/{wid}", expect=404)
    assert gone["message"].startswith("watcher "), gone
    await call(jp_fetch, "GET", f"api/recall/jobs/{wid}", expect=404)


async def test_a_plain_job_is_not_a_watcher(jp_fetch):
    job = await call(
        jp_fetch,
        "POST",
        "api/recall/jobs",
        {"when": "in 1h", "action": {"type": "notification", "message": "x"}},
        expect=201,
    )
    error = await call(jp_fetch, "GET", f"api/recall/watchers/{job['id']}", expect=404)
    assert "watcher" in error["message"]


@pytest.mark.parametrize(
    ("body", "field", "text"),
    [
        ({"interval": 4}, "interval", "between 5 and 3600"),
        ({"interval": 3601}, "interval", "between 5 and 3600"),
        ({"interval": 7.5}, "interval", "whole number"),
        ({"tool": "nope"}, "tool", "module.action"),
        ({"tool": "mymod.fetch"}, "tool", "unknown tool 'mymod.fetch'"),
        ({"notify_when": "sometimes"}, "notify_when", "unknown strategy"),
        (
            {"notify_when": "on_threshold", "notify_config": {"expression": "size > 3"}},
            "notify_config.expression",
            "cannot parse 'size > 3'",
        ),
        ({"notify_config": {"batch_size": 3}}, "notify_config.batch_size", "not a setting"),
        ({"colour": "red"}, "colour", "unknown field"),
        ({"tool": "shell.run"}, "tool", "policy is 'approve'"),
        ({"tool": "http.post"}, "tool", "policy is 'block'"),
        ({"target": {"type": "headless"}}, "target.type", "on the server or in a notebook"),
    ],
)
async def test_bad_watchers_are_refused_naming_the_field(jp_fetch, body, field, text):
    full = {"tool": "filesystem.read", "params": {"path": "x"}, **body}
    error = await call(jp_fetch, "POST", "api/recall/watchers", full, expect=400)
    assert error["field"] == field
    assert text in error["message"]


async def test_unknown_tool_lists_the_server_tools(jp_fetch):
    error = await call(jp_fetch, "POST", "api/recall/watchers", {"tool": "a.b"}, expect=400)
    assert "filesystem.read" in error["accepted"]
    # How to watch a user tool, in the REST API's words, and the tool as a field of its own.
    assert "give target {'type': 'kernel', 'path': <notebook>}" in error["message"]
    assert (error["reason"], error["field"], error["unknown_tool"]) == (
        "UnknownServerTool",
        "tool",
        "a.b",
    )
    raised = error_from_response(400, error, url="u")
    assert isinstance(raised, UnknownServerTool)
    assert (raised.tool, raised.field, str(raised)) == ("a.b", "tool", error["message"])
    assert "filesystem.read" in raised.accepted


async def test_history_bounds(jp_fetch, jp_root_dir):
    (jp_root_dir / "h.txt").write_text("x")
    watcher = await start(jp_fetch, params={"path": "h.txt"})
    path = f"api/recall/watchers/{watcher['watcher_id']}"
    for last_n in ("0", "101", "x"):
        response = await call(jp_fetch, "GET", path, expect=400, last_n=last_n)
        assert response["field"] == "last_n"
