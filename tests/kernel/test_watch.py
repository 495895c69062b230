"""Watchers and notifications from a real kernel under a real server: the Python API, user
tools checked in the kernel, the %watch magic, the agent tools, and notifications that reach the
kernel's queue live or, after a disconnection, from the server's buffer."""

from __future__ import annotations

import json
import re

import pytest

from tests.kernel.conftest import wait_until

READ_QUEUE = "print(json.dumps(jupyter_recall.notifications.wait(timeout=20, count={count})))"


def queued(nb, count: int = 1) -> list[dict]:
    return list(nb.json(READ_QUEUE.format(count=count), timeout=40))


def trigger(server, watcher_id: str) -> None:
    """One more check now: a manual run of the watcher's job."""
    before = server.request("GET", f"/api/recall/watchers/{watcher_id}")["checks"]
    server.request("POST", f"/api/recall/jobs/{watcher_id}/trigger")
    wait_until(
        lambda: server.request("GET", f"/api/recall/watchers/{watcher_id}")["checks"] > before
    )


def test_watch_start_notifies_this_kernel_on_changes(nb, server):
    (server.root / "watched.txt").write_text("one")
    started = nb.json(
        "w = jupyter_recall.watch_start('filesystem.read', {'path': 'watched.txt'}, "
        "interval=3600, label='watched file')\nprint(json.dumps(w.to_dict()))"
    )
    assert started["tool_name"] == "filesystem.read"
    assert started["session"] == nb.path
    assert started["target"] == {"type": "server"}
    (baseline,) = queued(nb)
    assert baseline["type"] == "watcher"
    assert baseline["watcher_id"] == started["watcher_id"]
    assert baseline["structured_data"]["reason"] == "baseline"
    assert baseline["message"].startswith(
        f'[WATCHER UPDATE] watcher_id={started["watcher_id"]}, label="watched file"'
    )
    trigger(server, started["watcher_id"])
    (server.root / "watched.txt").write_text("two")
    trigger(server, started["watcher_id"])
    (changed,) = queued(nb)
    assert changed["structured_data"]["reason"] == "changed"
    assert changed["structured_data"]["result"]["data"]["content"] == "two"
    assert nb.json("print(json.dumps(jupyter_recall.notifications.drain()))") == []
    status = nb.json(
        f"s = jupyter_recall.watch_status({started['watcher_id']!r}, last_n=3)\n"
        "print(json.dumps(s.to_dict()))"
    )
    assert (status["checks"], status["notifications"]) == (3, 2)
    assert [h["reason"] for h in status["history"]] == ["changed", "unchanged", "baseline"]
    history = nb.json(
        f"print(json.dumps(jupyter_recall.watch_history({started['watcher_id']!r}, 2)))"
    )
    assert [h["check"] for h in history] == [3, 2]
    listed = nb.json("print(json.dumps([w.id for w in jupyter_recall.watch_list()]))")
    assert listed == [started["watcher_id"]]
    paused = nb.json(
        f"print(json.dumps(jupyter_recall.watch_pause({started['watcher_id']!r}).to_dict()))"
    )
    assert paused["status"] == "paused"
    resumed = nb.json(
        f"print(json.dumps(jupyter_recall.watch_resume({started['watcher_id']!r}).to_dict()))"
    )
    assert resumed["status"] == "running"
    nb.ok(f"jupyter_recall.watch_stop({started['watcher_id']!r})")
    assert nb.json("print(json.dumps(jupyter_recall.watch_list()))") == []


def test_a_user_tool_is_checked_in_its_kernel(nb, server):
    nb.ok(
        "level = {'value': 1}\n"
        "@jupyter_recall.tool('probe.level')\n"
        "def probe_level():\n"
        "    return {'level': level['value']}\n"
    )
    started = nb.json(
        "w = jupyter_recall.watch_start('probe.level', interval=3600, "
        "notify_when='on_threshold', notify_config={'expression': 'result.level >= 3'})\n"
        "print(json.dumps(w.to_dict()))"
    )
    assert started["target"] == {"type": "kernel", "path": nb.path}
    wid = started["watcher_id"]
    wait_until(lambda: server.request("GET", f"/api/recall/watchers/{wid}")["checks"] >= 1)
    nb.ok("level['value'] = 5")
    trigger(server, wid)
    (met,) = queued(nb)
    assert met["structured_data"]["reason"] == "threshold met"
    assert met["structured_data"]["result"] == {"success": True, "data": {"level": 5}}
    nb.ok("jupyter_recall.tools.default_registry().unregister('probe.level')")
    trigger(server, wid)
    last = server.request("GET", f"/api/recall/watchers/{wid}?last_n=1")["last_result"]
    assert last["success"] is False
    assert "unknown tool 'probe.level'" in last["result"]["error"]


def test_tools_that_need_approval_cannot_be_watched(nb):
    nb.ok(
        "@jupyter_recall.tool('probe.careful')\n"
        "def careful():\n"
        "    return 1\n"
        "jupyter_recall.set_tool_policy('probe.careful', 'approve')"
    )
    result = nb.run("jupyter_recall.watch_start('probe.careful')")
    assert result.error is not None
    assert "probe.careful cannot be watched: its policy is 'approve'" in result.error
    nb.ok("jupyter_recall.set_tool_policy('probe.careful', None)")


def test_send_notification_to_the_session_and_a_fallback(nb):
    sent = nb.json(
        "print(json.dumps(jupyter_recall.send_notification(None, 'hello', title='Hi', tags=['t'])))"
    )
    assert sent["delivered_to"] == "session"
    assert sent["buffered"] is False
    fallback = nb.json(
        "print(json.dumps(jupyter_recall.send_notification('pager', 'wake up', "
        "priority='critical')))"
    )
    assert fallback["delivered_to"] == "session"
    assert fallback["fallback_reason"].startswith("unknown channel 'pager'")
    first, second = queued(nb, count=2)
    assert (first["type"], first["message"], first["title"], first["tags"]) == (
        "notification",
        "hello",
        "Hi",
        ["t"],
    )
    assert second["fallback_reason"] == fallback["fallback_reason"]
    assert second["priority"] == "critical"


def test_notifications_sent_while_disconnected_arrive_on_reconnect(nb, server):
    nb.ok("jupyter_recall.notifications.stop()")
    delivery = server.request(
        "POST", "/api/recall/notifications", {"message": "while away", "session": nb.path}
    )
    assert delivery["buffered"] is True
    nb.ok("jupyter_recall.notifications.start()")
    (item,) = queued(nb)
    assert item["message"] == "while away"
    held = server.request("GET", f"/api/recall/notifications?session={nb.path}")
    assert held["buffered"] == []


def test_watch_magic(nb, server):
    (server.root / "magic.txt").write_text("m")
    started = nb.ok("%watch filesystem.read path=magic.txt --every 3600 --label 'magic file'")
    assert started.stdout.startswith("watcher ")
    wid = started.stdout.split()[1].rstrip(":")
    assert "checking filesystem.read every 3600s" in started.stdout
    wait_until(lambda: server.request("GET", f"/api/recall/watchers/{wid}")["checks"] >= 1)
    listed = nb.ok("%watch list")
    text = listed.displays[0]["text/plain"]
    assert wid in text
    assert "magic file" in text
    status = nb.ok(f"%watch status {wid} --last 5")
    assert f"watcher {wid} 'magic file': filesystem.read" in status.stdout
    checks = status.displays[0]["text/plain"]
    # The check's value (the file's content) as a person reads it, not the tool's raw JSON.
    assert re.search(r" m +baseline", checks), checks
    assert '{"' not in checks
    assert "paused" in nb.ok(f"%watch pause {wid}").stdout
    assert "running" in nb.ok(f"%watch resume {wid}").stdout
    assert "stopped watcher" in nb.ok(f"%watch stop {wid}").stdout
    threshold = nb.ok("%watch filesystem.read path=magic.txt --expression 'result.size > 3'")
    twid = threshold.stdout.split()[1].rstrip(":")
    assert server.request("GET", f"/api/recall/watchers/{twid}")["notify_when"] == "on_threshold"
    # The server's refusals name the option typed, not the field it fills.
    bad = nb.ok("%watch filesystem.read path=magic.txt --every 2")
    assert "--every: must be between 5 and 3600 seconds, got 2" in bad.stderr
    bare = nb.ok("%watch filesystem.read path=magic.txt --notify on_threshold")
    assert bare.stderr.startswith("--expression: "), bare.stderr
    stray = nb.ok("%watch filesystem.read path=magic.txt --expression 'x' --notify on_change")
    assert stray.stderr.startswith("--expression: not a setting of the 'on_change'"), stray.stderr
    unknown = nb.ok("%watch filesystem.read --colour red")
    assert "--colour: unknown option" in unknown.stderr
    usage = nb.ok("%watch")
    assert "usage:" in usage.stdout


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"name": "filesystem.read", "interval": 1}, "interval"),
        ({"name": "filesystem.read", "notify_when": "never"}, "notify_when"),
        (
            {"name": "filesystem.read", "notify_when": "on_threshold",
             "notify_config": {"expression": "import os"}},
            "notify_config.expression",
        ),
        ({"name": "nomod.nothing"}, "name"),
    ],
)  # fmt: skip
def test_agent_tool_errors_name_the_argument(nb, arguments, field):
    result = nb.json(
        f"print(json.dumps(jupyter_recall.agent.dispatch('watch_start', {json.dumps(arguments)})))"
    )
    assert result["ok"] is False
    assert result["field"] == field


def test_agent_tools(nb, server):
    (server.root / "agent.txt").write_text("a")
    call = "print(json.dumps(jupyter_recall.agent.dispatch({tool!r}, {arguments})))"

    def dispatch(tool: str, /, **arguments) -> dict:
        return dict(nb.json(call.format(tool=tool, arguments=json.dumps(arguments))))

    started = dispatch(
        "watch_start", name="filesystem.read", params={"path": "agent.txt"}, interval=3600
    )
    assert started["ok"] is True
    wid = started["watcher_id"]
    assert "Watcher" in started["hint"]
    (baseline,) = queued(nb)
    assert baseline["type"] == "watcher"
    listed = dispatch("watch_list")
    assert (listed["total"], listed["running"]) == (1, 1)
    status = dispatch("watch_status", watcher_id=wid)
    assert status["checks"] == 1
    assert status["last_result"]["reason"] == "baseline"
    history = dispatch("watch_history", watcher_id=wid, last_n=5)
    assert [h["check"] for h in history["history"]] == [1]
    assert dispatch("watch_pause", watcher_id=wid)["status"] == "paused"
    assert dispatch("watch_resume", watcher_id=wid)["status"] == "running"
    assert dispatch("watch_stop", watcher_id=wid)["status"] == "stopped"
    missing = dispatch("watch_status", watcher_id=wid)
    assert (missing["ok"], missing["field"]) == (False, "watcher_id")
    sent = dispatch("send_notification", channel="ui", message="toast", priority="high")
    assert (sent["ok"], sent["delivered_to"]) == (True, "ui")
    fallback = dispatch("send_notification", channel="nowhere", message="m")
    assert fallback["fallback_reason"].startswith("unknown channel 'nowhere'")
    (item,) = queued(nb)
    assert item["message"] == "m"


def test_watch_magic_shows_the_watchers_live_card(nb, server):
    (server.root / "card.txt").write_text("c")
    started = nb.ok("%watch filesystem.read path=card.txt --every 3600")
    wid = started.stdout.split()[1].rstrip(":")
    assert any("application/vnd.jupyter.widget-view+json" in d for d in started.displays)
    count = nb.json(
        "import json\nfrom jupyter_recall.kernel import widgets\n"
        f"print(json.dumps(len(widgets.cards_for({wid!r}))))"
    )
    assert count == 1
