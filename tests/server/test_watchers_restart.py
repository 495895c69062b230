"""A watcher survives a server restart: it goes on polling from its persisted state and notifies
exactly on the changes of the file it polls, one of them made while the server was down."""

from __future__ import annotations

import pytest

from tests.server.live_server import LiveServer

SESSION = "watch.ipynb"


def status(server: LiveServer, watcher_id: str) -> dict:
    return dict(server.request("GET", f"/api/recall/watchers/{watcher_id}?last_n=100"))


def reached(server: LiveServer, watcher_id: str, key: str, count: int):
    def check():
        current = status(server, watcher_id)
        return current if current[key] >= count else None

    return check


@pytest.mark.slow
def test_a_watcher_notifies_on_each_change_across_a_restart(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    db = tmp_path / "recall.sqlite"
    polled = root / "state.txt"
    polled.write_text("v1")
    server = LiveServer(root, db).start()
    try:
        watcher = server.request(
            "POST",
            "/api/recall/watchers",
            {
                "tool": "filesystem.read",
                "params": {"path": "state.txt"},
                "interval": 5,
                "label": "state file",
                "session": SESSION,
            },
        )
        wid = watcher["watcher_id"]
        # The baseline, then a scheduled check that finds nothing new.
        server.wait_for(reached(server, wid, "checks", 2), timeout=15)
        polled.write_text("v2")
        server.wait_for(reached(server, wid, "notifications", 2), timeout=15)
    finally:
        server.stop()

    polled.write_text("v3")
    server = LiveServer(root, db, port=server.port).start()
    try:
        after = server.wait_for(reached(server, wid, "notifications", 3), timeout=15)
        assert after["status"] == "running"
        server.wait_for(reached(server, wid, "checks", after["checks"] + 1), timeout=15)
        final = status(server, wid)
        taken = server.request("POST", "/api/recall/notifications/take", {"session": SESSION})
    finally:
        server.stop()

    notes = taken["notifications"]
    contents = [n["structured_data"]["result"]["data"]["content"] for n in notes]
    assert contents == ["v1", "v2", "v3"]
    assert [n["structured_data"]["reason"] for n in notes] == ["baseline", "changed", "changed"]
    assert final["notifications"] == 3
    checks = [entry["check"] for entry in final["history"]]
    assert checks == list(range(final["checks"], 0, -1)), "the history goes on across the restart"
    assert [e["reason"] for e in final["history"] if e["notified"]] == [
        "changed",
        "changed",
        "baseline",
    ]
