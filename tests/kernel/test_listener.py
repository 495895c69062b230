"""The notification listener against a real server: re-sync on connect and after a drop, no
duplicates, only this session's runs, and a clean stop even while the server is unreachable."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

from jupyter_recall.kernel.connection import notifications
from jupyter_recall.kernel.connection.client import Client, ServerInfo
from tests.kernel.conftest import wait_until
from tests.server.live_server import TOKEN, free_port

SESSION = "listener.ipynb"


def notification_job(server, message: str, session: str = SESSION) -> dict:
    body = {"when": "now", "action": {"type": "notification", "message": message}}
    return dict(server.request("POST", "/api/recall/jobs", {**body, "session": session}))


def collected(job_id: str) -> list[dict]:
    return [item for item in seen if item.get("job_id") == job_id]


seen: list[dict] = []


def test_resync_reconnect_no_duplicates(server):
    notifications.drain()
    seen.clear()
    notifications.on_notification(seen.append)
    client = Client(ServerInfo(server.url + "/", TOKEN, "test"))
    try:
        before = datetime.now(timezone.utc) - timedelta(seconds=1)
        early = notification_job(server, "finished before the listener")
        server.finished_runs(early["id"])
        elsewhere = notification_job(server, "not ours", session="other.ipynb")
        server.finished_runs(elsewhere["id"])

        listener = notifications.Listener(client, SESSION, since=before)
        listener.start()
        wait_until(lambda: collected(early["id"]))
        assert listener.connected.wait(10)
        assert "finished before the listener" in collected(early["id"])[0]["output"]

        live = notification_job(server, "while connected")
        wait_until(lambda: collected(live["id"]))

        listener.reconnect()
        during = notification_job(server, "around a drop")
        wait_until(lambda: collected(during["id"]))
        assert listener.connected.wait(10)
        # One more after the reconnection proves the stream is live again.
        after = notification_job(server, "after the drop")
        wait_until(lambda: collected(after["id"]))
        time.sleep(0.5)

        for job in (early, live, during, after):
            assert len(collected(job["id"])) == 1, collected(job["id"])
        assert collected(elsewhere["id"]) == []
        assert {item["type"] for item in seen} == {"run.finished"}
        listener.stop()
        assert not listener.thread.is_alive()
    finally:
        notifications.remove_callback(seen.append)
        notifications.drain()
        server.delete_all_jobs()


def test_a_retried_failure_says_its_attempt_and_when_the_next_one_comes(server):
    """One occurrence tried three times gives three "failed" notifications: each says which
    attempt it was, and those with a retry to come say when (the run's ``retry_at``)."""
    notifications.drain()
    seen.clear()
    notifications.on_notification(seen.append)
    client = Client(ServerInfo(server.url + "/", TOKEN, "test"))
    listener = notifications.Listener(client, SESSION, since=datetime.now(timezone.utc))
    try:
        listener.start()
        assert listener.connected.wait(10)
        body = {
            "when": "now",
            "action": {"type": "tool", "name": "filesystem.read", "params": {"path": "nope"}},
            "session": SESSION,
            "policies": {"retries": {"max": 2, "backoff": 0.2}},
        }
        job = server.request("POST", "/api/recall/jobs", body)
        wait_until(lambda: len(collected(job["id"])) == 3, timeout=30)
        told = sorted(collected(job["id"]), key=lambda item: item["attempt"])
        assert [(item["status"], item["attempt"]) for item in told] == [
            ("failed", 1),
            ("failed", 2),
            ("failed", 3),
        ]
        for item in told[:2]:
            assert item["retry_at"] is not None, item
            retry_at = datetime.fromisoformat(item["retry_at"])
            assert retry_at >= datetime.fromisoformat(item["finished_at"]), item
        assert told[2]["retry_at"] is None
    finally:
        listener.stop()
        notifications.remove_callback(seen.append)
        notifications.drain()
        server.delete_all_jobs()


def test_stop_while_the_server_is_unreachable():
    client = Client(ServerInfo(f"http://127.0.0.1:{free_port()}/", "", "test"), timeout=1)
    listener = notifications.Listener(client, SESSION, since=datetime.now(timezone.utc))
    listener.start()
    time.sleep(0.3)
    started = time.monotonic()
    listener.stop()
    assert not listener.thread.is_alive()
    assert time.monotonic() - started < 2


def test_wait_refuses_a_timeout_it_could_not_keep(nb):
    """NaN never elapses (a wait forever), a string failed inside threading: both, and more
    than an hour, are refused in one line naming ``timeout``, as ``background_wait`` does."""
    for given, shown in (("float('nan')", "nan"), ("'x'", "'x'"), ("10**10", "10000000000")):
        out = nb.run(f"jupyter_recall.notifications.wait(timeout={given})", timeout=10)
        assert out.error is not None
        assert "ValidationError" in out.error
        assert "timeout: must be" in out.error
        assert shown in out.error
    assert nb.json("print(json.dumps(jupyter_recall.notifications.wait(timeout=0)))") == []
