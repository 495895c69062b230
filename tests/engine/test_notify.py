"""Notifications: validation, the notifier's routing and fallback, and every channel type with
real receivers (an HTTP server on loopback for webhooks, aiosmtpd for e-mail)."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from datetime import datetime, timezone

import anyio
import pytest

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.model import Job, JobKind, Run, RunStatus, RunTrigger
from jupyter_recall.core.records import CodeAction, JobOptions, KernelTarget
from jupyter_recall.core.when import parse_when
from jupyter_recall.engine.channels import CHANNEL_TYPES, build_channels
from jupyter_recall.engine.notify import (
    MAX_MESSAGE,
    Notification,
    Notifier,
    build_notification,
    outcome_notification,
)
from tests.engine.receivers import free_port, http_receiver, smtp_receiver

pytestmark = pytest.mark.anyio

NOW = datetime(2030, 1, 1, 12, 0, tzinfo=timezone.utc)


@dataclass
class Sink:
    """The host side of the session and UI channels, as the server plays it: sessions that
    listen get notifications live, the others have them buffered."""

    listening: set[str] = field(default_factory=set)
    live: list[Notification] = field(default_factory=list)
    buffered: list[Notification] = field(default_factory=list)
    ui: list[Notification] = field(default_factory=list)

    async def to_session(self, notification: Notification) -> bool:
        if notification.session in self.listening:
            self.live.append(notification)
            return True
        self.buffered.append(notification)
        return False

    async def to_ui(self, notification: Notification) -> None:
        self.ui.append(notification)


def note(**fields) -> Notification:
    data = {"message": "deploy finished", "session": "work/a.ipynb", **fields}
    return build_notification(data, owner="alice", now=NOW)


def notifier(config: dict, sink: Sink | None = None) -> Notifier:
    sink = sink or Sink(listening={"work/a.ipynb"})
    return Notifier(build_channels(config, sink), sink)


# --- validation -----------------------------------------------------------------------------------


def test_a_notification_has_defaults_and_keeps_what_it_is_given():
    made = note(
        title="Deploy",
        priority="high",
        tags=["ci", "prod"],
        structured_data={"version": "2.3.1"},
        output_config={"to_address": "ops@example.org"},
        channel="mail",
    )
    assert (made.owner, made.channel, made.priority) == ("alice", "mail", "high")
    assert made.tags == ("ci", "prod")
    assert made.source == {"kind": "api"}
    assert Notification.from_json(json.loads(json.dumps(made.to_json()))) == made
    plain = note()
    assert (plain.channel, plain.priority, plain.title, plain.heading) == (
        "session",
        "normal",
        "",
        "deploy finished",
    )


@pytest.mark.parametrize(
    ("fields", "field_name", "text"),
    [
        ({"message": ""}, "message", "non-empty"),
        ({"message": None}, "message", "non-empty"),
        ({"message": "x" * (MAX_MESSAGE + 1)}, "message", "longer than 10000"),
        ({"priority": "urgent"}, "priority", "unknown priority"),
        ({"tags": "ci"}, "tags", "list of strings"),
        ({"tags": [""]}, "tags", "1 to 50"),
        ({"tags": ["t"] * 21}, "tags", "at most 20"),
        ({"structured_data": [1]}, "structured_data", "JSON object"),
        ({"output_config": "x"}, "output_config", "JSON object"),
        ({"channel": ""}, "channel", "channel name"),
        ({"session": 3}, "session", "notebook path"),
        ({"colour": "red"}, "colour", "unknown field"),
        ({"title": "t" * 201}, "title", "longer than 200"),
    ],
)
def test_bad_fields_are_named(fields, field_name, text):
    with pytest.raises(ValidationError) as caught:
        note(**fields)
    assert caught.value.field == field_name
    assert text in str(caught.value)


def test_unknown_priority_lists_the_priorities():
    with pytest.raises(ValidationError) as caught:
        note(priority="urgent")
    assert caught.value.accepted == ("low", "normal", "high", "critical")


@pytest.mark.parametrize(
    ("config", "field_name", "text"),
    [
        ({"x": {"type": "pigeon"}}, "notification_channels.x.type", "unknown channel type"),
        ({"x": {}}, "notification_channels.x.type", "unknown channel type"),
        ({"x": "log"}, "notification_channels.x", "must be an object"),
        ({"x": {"type": "log", "colour": 1}}, "notification_channels.x.colour", "unknown"),
        ({"x": {"type": "log", "level": "LOUD"}}, "notification_channels.x.level", "LOUD"),
        ({"x": {"type": "webhook"}}, "notification_channels.x.url", "non-empty string"),
        ({"x": {"type": "webhook", "url": "ftp://h/"}}, "notification_channels.x.url", "http(s)"),
        (
            {"x": {"type": "webhook", "url": "http://h/", "timeout": 0}},
            "notification_channels.x.timeout",
            "(0, 300]",
        ),
        (
            {"x": {"type": "webhook", "url": "http://h/", "retries": 11}},
            "notification_channels.x.retries",
            "from 0 to 10",
        ),
        (
            {"x": {"type": "webhook", "url": "http://h/", "retries": True}},
            "notification_channels.x.retries",
            "whole number",
        ),
        (
            {"x": {"type": "email", "host": "h", "from": "me", "to": ["a@b.c"]}},
            "notification_channels.x.from",
            "e-mail address",
        ),
        (
            {"x": {"type": "email", "host": "h", "from": "a@b.c", "to": []}},
            "notification_channels.x.to",
            "address or a list",
        ),
        (
            {"x": {"type": "email", "host": "h", "from": "a@b.c", "to": "a@b.c", "port": 0}},
            "notification_channels.x.port",
            "TCP port",
        ),
    ],
)
def test_bad_channel_config_names_the_channel_and_setting(config, field_name, text):
    with pytest.raises(ValidationError) as caught:
        build_channels(config, Sink())
    assert caught.value.field == field_name
    assert text in str(caught.value)


def test_channel_types_are_listed_when_unknown():
    with pytest.raises(ValidationError) as caught:
        build_channels({"x": {"type": "pigeon"}}, Sink())
    assert caught.value.accepted == CHANNEL_TYPES == ("log", "webhook", "email", "session", "ui")


# --- routing and fallback -------------------------------------------------------------------------


async def test_session_is_the_default_and_is_live_when_the_kernel_listens():
    sink = Sink(listening={"work/a.ipynb"})
    delivery = await notifier({}, sink).send(note())
    assert (delivery.delivered_to, delivery.buffered, delivery.fallback_reason) == (
        "session",
        False,
        None,
    )
    assert [n.message for n in sink.live] == ["deploy finished"]


async def test_session_notifications_are_buffered_while_nobody_listens():
    sink = Sink()
    delivery = await notifier({}, sink).send(note())
    assert delivery.buffered
    assert sink.buffered == [delivery.notification]


async def test_without_a_session_the_session_channel_reaches_the_ui():
    sink = Sink()
    delivery = await notifier({}, sink).send(note(session=None))
    assert delivery.delivered_to == "ui"
    assert len(sink.ui) == 1


async def test_llm_notification_is_the_session():
    sink = Sink(listening={"work/a.ipynb"})
    delivery = await notifier({}, sink).send(note(channel="llm_notification"))
    assert (delivery.delivered_to, delivery.fallback_reason) == ("llm_notification", None)
    assert [n.channel for n in sink.live] == ["llm_notification"]


async def test_ui_channel():
    sink = Sink()
    delivery = await notifier({}, sink).send(note(channel="ui"))
    assert delivery.delivered_to == "ui"
    assert [n.channel for n in sink.ui] == ["ui"]


async def test_unknown_channel_falls_back_to_the_session_with_the_reason():
    sink = Sink(listening={"work/a.ipynb"})
    delivery = await notifier({"audit": {"type": "log"}}, sink).send(note(channel="slack"))
    assert delivery.delivered_to == "session"
    assert delivery.fallback_reason == (
        "unknown channel 'slack' (configured: audit, llm_notification, session, ui)"
    )
    assert sink.live[0].fallback_reason == delivery.fallback_reason
    assert sink.live[0].channel == "slack"


async def test_the_log_of_a_fallback_names_where_it_went(caplog):
    sink = Sink(listening={"work/a.ipynb"})
    send = notifier({}, sink).send
    with caplog.at_level(logging.WARNING, logger="jupyter_recall.notifications"):
        to_ui = await send(note(channel="slack", session=None))
        to_session = await send(note(channel="slack"))
        held = await send(note(channel="slack", session="work/b.ipynb"))
    logged = [r.getMessage() for r in caplog.records if "unknown channel 'slack'" in r.message]
    assert [delivery.delivered_to for delivery in (to_ui, to_session, held)] == [
        "ui",
        "session",
        "session",
    ]
    assert [line.split("; ", 1)[1] for line in logged] == [
        "delivered to ui instead",
        "delivered to session instead",
        "delivered to session instead (held until its kernel listens)",
    ]


async def test_log_channel_writes_one_json_record(caplog):
    config = {"audit": {"type": "log", "logger": "recall.audit", "level": "WARNING"}}
    with caplog.at_level(logging.INFO, logger="recall.audit"):
        delivery = await notifier(config).send(note(channel="audit", tags=["x"]))
    assert delivery.delivered_to == "audit"
    (record,) = [r for r in caplog.records if r.name == "recall.audit"]
    assert record.levelno == logging.WARNING
    logged = json.loads(record.getMessage())
    assert (logged["message"], logged["tags"], logged["channel"]) == (
        "deploy finished",
        ["x"],
        "audit",
    )


async def test_log_channel_text_format(caplog):
    config = {"audit": {"type": "log", "format": "text"}}
    with caplog.at_level(logging.INFO, logger="jupyter_recall.notifications"):
        await notifier(config).send(note(channel="audit", title="Deploy", priority="low"))
    assert "[low] Deploy: deploy finished" in caplog.text


# --- webhook --------------------------------------------------------------------------------------


async def test_webhook_posts_the_notification_as_json():
    with http_receiver() as hook:
        config = {"ops": {"type": "webhook", "url": hook.url, "headers": {"X-Team": "ops"}}}
        delivery = await notifier(config).send(
            note(channel="ops", title="Deploy", structured_data={"v": 2})
        )
        (body,) = hook.wait()
    assert delivery.delivered_to == "ops"
    assert delivery.fallback_reason is None
    assert body["message"] == "deploy finished"
    assert body["title"] == "Deploy"
    assert body["structured_data"] == {"v": 2}
    assert body["id"] == delivery.notification.id
    assert hook.headers[0]["Content-Type"] == "application/json"
    assert hook.headers[0]["X-Team"] == "ops"


async def test_a_failing_webhook_falls_back_to_the_session():
    sink = Sink(listening={"work/a.ipynb"})
    with http_receiver() as hook:
        hook.status = 500
        config = {"ops": {"type": "webhook", "url": hook.url, "retry_delay": 0.01}}
        delivery = await notifier(config, sink).send(note(channel="ops"))
        hook.wait(3)
    assert delivery.delivered_to == "session"
    assert delivery.fallback_reason is not None
    assert "channel 'ops' (webhook) failed: POST" in delivery.fallback_reason
    assert "answered 500" in delivery.fallback_reason
    assert "(after 3 attempts)" in delivery.fallback_reason
    assert sink.live[0].fallback_reason == delivery.fallback_reason


async def test_a_webhook_busy_for_a_moment_gets_the_notification_on_a_later_attempt():
    with http_receiver() as hook:
        hook.first_answers = [(503, {}), (429, {"Retry-After": "1"})]
        config = {"ops": {"type": "webhook", "url": hook.url, "retry_delay": 0.01}}
        started = anyio.current_time()
        delivery = await notifier(config).send(note(channel="ops"))
        waited = anyio.current_time() - started
        bodies = hook.wait(3)
    assert (delivery.delivered_to, delivery.fallback_reason) == ("ops", None)
    # The same notification each time, so that a receiver can drop a repeat by its id.
    assert len({body["id"] for body in bodies}) == 1
    assert len(bodies) == 3
    assert waited >= 1, "the receiver's Retry-After is kept"


async def test_a_webhook_refusing_the_request_is_not_asked_again():
    with http_receiver() as hook:
        hook.status = 400
        config = {"ops": {"type": "webhook", "url": hook.url, "retry_delay": 0.01}}
        delivery = await notifier(config).send(note(channel="ops"))
        hook.wait(1)
        await anyio.sleep(0.2)
    assert len(hook.received) == 1
    assert delivery.delivered_to == "session"
    assert (delivery.fallback_reason or "").endswith("answered 400 Bad Request")


async def test_an_unreachable_webhook_falls_back_to_the_session():
    url = f"http://127.0.0.1:{free_port()}/hook"
    config = {
        "ops": {"type": "webhook", "url": url, "timeout": 2, "retries": 1, "retry_delay": 0.01}
    }
    delivery = await notifier(config).send(note(channel="ops"))
    assert delivery.delivered_to == "session"
    assert "refused" in (delivery.fallback_reason or "").lower()
    assert "(after 2 attempts)" in (delivery.fallback_reason or "")


# --- e-mail ---------------------------------------------------------------------------------------


def mail_config(port: int, **extra) -> dict:
    return {
        "mail": {
            "type": "email",
            "host": "127.0.0.1",
            "port": port,
            "from": "recall@example.org",
            "to": ["team@example.org"],
            **extra,
        }
    }


async def test_email_reaches_a_real_smtp_server():
    with smtp_receiver() as mailbox:
        delivery = await notifier(mail_config(mailbox.port)).send(
            note(
                channel="mail",
                title="Deploy\ncomplete",
                priority="high",
                tags=["prod"],
                structured_data={"version": "2.3.1"},
            )
        )
        (mail,) = mailbox.wait()
    assert delivery.delivered_to == "mail"
    assert mail.mail_from == "recall@example.org"
    assert mail.rcpt_tos == ["team@example.org"]
    assert mail.message["Subject"] == "Deploy complete"
    assert mail.message["X-Priority"] == "1"
    assert mail.message["X-Recall-Notification"] == delivery.notification.id
    body = mail.message.get_payload(decode=True).decode()
    assert "deploy finished" in body
    assert "Tags: prod" in body
    assert '"version": "2.3.1"' in body


async def test_email_recipient_per_delivery():
    with smtp_receiver() as mailbox:
        await notifier(mail_config(mailbox.port)).send(
            note(channel="mail", output_config={"to_address": "ops@example.org"})
        )
        (mail,) = mailbox.wait()
    assert mail.rcpt_tos == ["ops@example.org"]
    assert mail.message["To"] == "ops@example.org"
    assert mail.message["X-Priority"] is None


async def test_email_with_a_bad_recipient_falls_back_naming_it():
    with smtp_receiver() as mailbox:
        delivery = await notifier(mail_config(mailbox.port)).send(
            note(channel="mail", output_config={"to_address": "nobody"})
        )
    assert delivery.delivered_to == "session"
    assert "output_config.to_address" in (delivery.fallback_reason or "")
    assert mailbox.received == []


async def test_unreachable_smtp_falls_back():
    delivery = await notifier(mail_config(free_port(), timeout=2)).send(note(channel="mail"))
    assert delivery.delivered_to == "session"
    assert "channel 'mail' (email) failed: SMTP 127.0.0.1" in (delivery.fallback_reason or "")


# --- job outcomes ---------------------------------------------------------------------------------


def test_outcome_notification_of_a_failed_run():
    spec = parse_when("every 5m", now=NOW, tz="UTC")
    job = Job(
        id="j1",
        owner="alice",
        name="nightly",
        kind=JobKind.JOB,
        when="every 5m",
        schedule=spec,
        action=CodeAction("1/0"),
        target=KernelTarget(path="a.ipynb"),
        created_at=NOW,
        updated_at=NOW,
        session="a.ipynb",
        options=JobOptions.from_json(
            {"output_channel": "ops", "output_config": {"to_address": "x@y.z"}}
        ),
    )
    run = Run(
        id="r1",
        job_id="j1",
        owner="alice",
        scheduled_for=NOW,
        trigger=RunTrigger.SCHEDULE,
        status=RunStatus.FAILED,
        created_at=NOW,
        output="x" * 3000,
        error="ZeroDivisionError: division by zero",
    )
    made = outcome_notification(job, run, channel="ops", now=NOW)
    assert (made.channel, made.session, made.priority, made.title) == (
        "ops",
        "a.ipynb",
        "high",
        "nightly: failed",
    )
    lines = made.message.splitlines()
    assert lines[0] == "Job 'nightly' (j1): run r1 failed"
    assert lines[1] == "Error: ZeroDivisionError: division by zero"
    assert len(lines[2]) == 2001
    assert made.output_config == {"to_address": "x@y.z"}
    assert made.structured_data["status"] == "failed"
    assert made.source == {"kind": "job", "job_id": "j1", "run_id": "r1"}
