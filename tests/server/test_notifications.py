"""Notifications through a real server: channels from the config, the session buffer, the live
session delivery on the event stream, job outcomes and notification actions."""

from __future__ import annotations

import asyncio

import pytest
from tornado.httpclient import AsyncHTTPClient, HTTPRequest
from traitlets import TraitError

from jupyter_recall.server.app import RecallApp
from tests.engine.receivers import http_receiver, smtp_receiver
from tests.server.rest import call
from tests.server.test_events import SSEReader, open_stream


@pytest.fixture
def hook():
    with http_receiver() as receiver:
        yield receiver


@pytest.fixture
def mailbox():
    with smtp_receiver() as receiver:
        yield receiver


@pytest.fixture
def recall_config(recall_config, hook, mailbox):
    recall_config["notification_channels"] = {
        "ops": {"type": "webhook", "url": hook.url},
        "mail": {
            "type": "email",
            "host": mailbox.host,
            "port": mailbox.port,
            "from": "recall@example.org",
            "to": ["team@example.org"],
        },
        "audit": {"type": "log"},
    }
    return recall_config


async def send(jp_fetch, body, expect=201):
    return await call(jp_fetch, "POST", "api/recall/notifications", body, expect=expect)


async def test_webhook_channel_from_the_server_config(jp_fetch, hook):
    delivery = await send(jp_fetch, {"channel": "ops", "message": "deployed", "tags": ["ci"]})
    assert delivery["delivered_to"] == "ops"
    (body,) = await asyncio.to_thread(hook.wait)
    assert (body["message"], body["tags"], body["id"]) == (
        "deployed",
        ["ci"],
        delivery["notification"]["id"],
    )


async def test_email_channel_from_the_server_config(jp_fetch, mailbox):
    await send(
        jp_fetch,
        {
            "channel": "mail",
            "message": "deployed",
            "title": "Deploy",
            "output_config": {"to_address": "ops@example.org"},
        },
    )
    (mail,) = await asyncio.to_thread(mailbox.wait)
    assert mail.rcpt_tos == ["ops@example.org"]
    assert mail.message["Subject"] == "Deploy"


async def test_channels_are_listed(jp_fetch):
    listed = await call(jp_fetch, "GET", "api/recall/notifications")
    assert {(c["name"], c["type"]) for c in listed["channels"]} == {
        ("ops", "webhook"),
        ("mail", "email"),
        ("audit", "log"),
        ("session", "session"),
        ("llm_notification", "session"),
        ("ui", "ui"),
    }


async def test_unknown_channel_falls_back_to_a_buffered_session(jp_fetch):
    delivery = await send(jp_fetch, {"channel": "slack", "message": "m1", "session": "a.ipynb"})
    assert delivery["delivered_to"] == "session"
    assert delivery["buffered"] is True
    assert delivery["fallback_reason"].startswith("unknown channel 'slack'")
    await send(jp_fetch, {"message": "m2", "session": "a.ipynb"})
    await send(jp_fetch, {"message": "other", "session": "b.ipynb"})
    held = await call(jp_fetch, "GET", "api/recall/notifications", session="a.ipynb")
    assert [n["message"] for n in held["buffered"]] == ["m1", "m2"]
    assert held["buffered"][0]["fallback_reason"] == delivery["fallback_reason"]
    taken = await call(jp_fetch, "POST", "api/recall/notifications/take", {"session": "a.ipynb"})
    assert [n["message"] for n in taken["notifications"]] == ["m1", "m2"]
    again = await call(jp_fetch, "POST", "api/recall/notifications/take", {"session": "a.ipynb"})
    assert again["notifications"] == []
    everything = await call(jp_fetch, "GET", "api/recall/notifications")
    assert [n["message"] for n in everything["buffered"]] == ["other"]


def open_session_stream(port, base_url, headers, reader, session):
    """The stream a kernel of ``session`` opens."""
    url = f"http://localhost:{port}{base_url}api/recall/events?session={session}"
    request = HTTPRequest(url, headers=headers, streaming_callback=reader.feed, request_timeout=60)
    return asyncio.ensure_future(AsyncHTTPClient().fetch(request, raise_error=False))


async def test_a_listening_session_gets_it_live_on_the_stream(
    jp_fetch, jp_http_port, jp_base_url, jp_auth_header
):
    lab, kernel = SSEReader(), SSEReader()
    streams = [
        open_stream(jp_http_port, jp_base_url, jp_auth_header, lab),
        open_session_stream(jp_http_port, jp_base_url, jp_auth_header, kernel, "live.ipynb"),
    ]
    try:
        for reader in (lab, kernel):
            await reader.wait_for(lambda r: any(e == "open" for e, _ in r.events))
        delivery = await send(jp_fetch, {"message": "now", "session": "live.ipynb"})
        assert delivery["buffered"] is False
        await kernel.wait_for(lambda r: any(e == "notification" for e, _ in r.events))
        (document,) = [d for e, d in kernel.events if e == "notification"]
        assert document["notification"]["message"] == "now"
        assert document["notification"]["delivered_to"] == "session"
        assert document["notification"]["session"] == "live.ipynb"
        ui = await send(jp_fetch, {"message": "toast", "channel": "ui"})
        assert ui["delivered_to"] == "ui"
        await lab.wait_for(
            lambda r: any(
                (d.get("notification") or {}).get("message") == "toast" for _, d in r.events
            )
        )
        held = await call(jp_fetch, "GET", "api/recall/notifications", session="live.ipynb")
        assert held["buffered"] == []
    finally:
        for stream in streams:
            stream.cancel()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"message": ""}, "message"),
        ({"message": "x", "priority": "urgent"}, "priority"),
        ({"message": "x", "colour": "red"}, "colour"),
        ({"message": "x", "tags": "ci"}, "tags"),
    ],
)
async def test_bad_notifications_are_refused_naming_the_field(jp_fetch, body, field):
    error = await send(jp_fetch, body, expect=400)
    assert error["field"] == field


async def test_take_needs_a_session(jp_fetch):
    error = await call(jp_fetch, "POST", "api/recall/notifications/take", {}, expect=400)
    assert error["field"] == "session"
    body = {"session": "a.ipynb", "sesion": "b.ipynb"}
    typo = await call(jp_fetch, "POST", "api/recall/notifications/take", body, expect=400)
    assert typo["field"] == "sesion"


async def wait_for(predicate, timeout=10.0):
    deadline = asyncio.get_running_loop().time() + timeout
    while not (value := await predicate()):
        assert asyncio.get_running_loop().time() < deadline, "condition not met"
        await asyncio.sleep(0.05)
    return value


async def test_job_outcomes_go_to_the_output_channel(jp_fetch, hook, jp_root_dir):
    (jp_root_dir / "data.txt").write_text("hello")
    job = await call(
        jp_fetch,
        "POST",
        "api/recall/jobs",
        {
            "when": "now",
            "name": "read data",
            "action": {"type": "tool", "name": "filesystem.read", "params": {"path": "data.txt"}},
            "options": {"output_channel": "ops"},
        },
        expect=201,
    )
    (body,) = await asyncio.to_thread(hook.wait)
    assert body["title"] == "read data: succeeded"
    assert body["structured_data"]["job_id"] == job["id"]
    assert '"content": "hello"' in body["message"]
    assert body["source"]["kind"] == "job"


async def test_an_occurrence_retried_sends_one_outcome_its_last(jp_fetch, hook, jp_root_dir):
    job = await call(
        jp_fetch,
        "POST",
        "api/recall/jobs",
        {
            "when": "now",
            "name": "read later",
            "action": {"type": "tool", "name": "filesystem.read", "params": {"path": "later.txt"}},
            "options": {"output_channel": "ops"},
            "policies": {"retries": {"max": 1, "backoff": 1}},
        },
        expect=201,
    )

    async def pending():
        runs = (await call(jp_fetch, "GET", f"api/recall/jobs/{job['id']}/runs"))["runs"]
        return runs and runs[0]["retry_at"]

    await wait_for(pending)
    (jp_root_dir / "later.txt").write_text("there now")
    (body,) = await asyncio.to_thread(hook.wait)
    assert body["title"] == "read later: succeeded"
    runs = (await call(jp_fetch, "GET", f"api/recall/jobs/{job['id']}/runs"))["runs"]
    assert sorted(run["attempt"] for run in runs) == [1, 2]
    # The failed first attempt sent nothing (one POST in all).
    await asyncio.sleep(0.5)
    assert len(hook.received) == 1


async def test_notification_actions_go_through_the_channels(jp_fetch, hook):
    job = await call(
        jp_fetch,
        "POST",
        "api/recall/jobs",
        {"when": "now", "action": {"type": "notification", "message": "tick", "channel": "ops"}},
        expect=201,
    )
    (body,) = await asyncio.to_thread(hook.wait)
    assert body["message"] == "tick"

    async def finished():
        runs = (await call(jp_fetch, "GET", f"api/recall/jobs/{job['id']}/runs"))["runs"]
        return [r for r in runs if r["status"] == "succeeded"]

    (run,) = await wait_for(finished)
    full = await call(jp_fetch, "GET", f"api/recall/runs/{run['id']}")
    assert "tick" in full["output"]
    assert "sent to ops" in full["output"]


def test_bad_channel_config_stops_the_server_naming_the_setting():
    with pytest.raises(TraitError, match=r"notification_channels\.ops\.url"):
        RecallApp(notification_channels={"ops": {"type": "webhook", "url": "ftp://x"}})
