"""Fields of job bodies the server checks as the notifications endpoint and the job body do:
unknown fields refused by name, a notification action's priority and lengths, the options the
notifier reads. Against a real server (pytest-jupyter's ``jp_fetch``)."""

from __future__ import annotations

from tests.server.rest import call

JOBS = "api/recall/jobs"
NOTIFY = {"type": "notification", "message": "hello"}


def job(action: dict, **extra: object) -> dict:
    return {"when": "in 1h", "action": action, **extra}


async def test_an_unknown_field_of_an_action_is_refused_by_name(jp_fetch):
    body = job({"type": "code", "code": "1", "zzz": 1}, target={"type": "headless"})
    error = await call(jp_fetch, "POST", JOBS, body, expect=400)
    assert (error["field"], error["accepted"]) == ("action.zzz", ["type", "code"])
    created = await call(jp_fetch, "POST", JOBS, job(NOTIFY), expect=201)
    path = f"{JOBS}/{created['id']}"
    change = {"action": {**NOTIFY, "colour": "red"}}
    error = await call(jp_fetch, "PATCH", path, change, expect=400)
    assert error["field"] == "action.colour"
    assert "priority" in error["accepted"]
    batch = {"jobs": [job(NOTIFY), job({**NOTIFY, "zz": 1})]}
    error = await call(jp_fetch, "POST", JOBS, batch, expect=400)
    assert error["field"] == "jobs[1].action.zz"


async def test_an_unknown_field_of_a_target_is_refused_by_name(jp_fetch):
    """A field of another target type (a headless ``path``) used to be dropped without a word,
    so the job ran somewhere its author did not mean."""
    body = job(NOTIFY, target={"type": "server", "path": "nb.ipynb"})
    error = await call(jp_fetch, "POST", JOBS, body, expect=400)
    assert (error["field"], error["accepted"]) == ("target.path", ["type"])
    code = {"type": "code", "code": "1"}
    body = job(code, target={"type": "headless", "kernel": "python3"})
    error = await call(jp_fetch, "POST", JOBS, body, expect=400)
    assert (error["field"], error["accepted"]) == ("target.kernel", ["type", "kernel_name", "cwd"])
    created = await call(jp_fetch, "POST", JOBS, job(code, target={"type": "headless"}), expect=201)
    change = {"target": {"type": "kernel", "path": "a.ipynb", "kernel_name": "python3"}}
    error = await call(jp_fetch, "PATCH", f"{JOBS}/{created['id']}", change, expect=400)
    assert error["field"] == "target.kernel_name"
    unchanged = await call(jp_fetch, "GET", f"{JOBS}/{created['id']}")
    assert unchanged["target"] == {"type": "headless"}


async def test_an_unknown_field_of_a_parse_request_is_refused_by_name(jp_fetch):
    error = await call(jp_fetch, "POST", "api/recall/parse", {"when": "in 1h", "zz": 1}, expect=400)
    assert (error["field"], error["accepted"]) == ("zz", ["when", "tz", "check"])
    await call(jp_fetch, "POST", "api/recall/parse", {"when": "in 1h", "tz": "UTC", "check": True})


async def test_a_notification_action_is_checked_as_the_notifications_endpoint_checks(jp_fetch):
    sent = await call(
        jp_fetch,
        "POST",
        "api/recall/notifications",
        {"message": "x", "priority": "urgent"},
        expect=400,
    )
    bad = {**NOTIFY, "priority": "urgent"}
    error = await call(jp_fetch, "POST", JOBS, job(bad), expect=400)
    assert error["field"] == "action.priority"
    assert error["accepted"] == sent["accepted"] == ["low", "normal", "high", "critical"]
    assert error["message"].endswith(sent["message"].split(": ", 1)[1])
    for field, text in (("message", "m" * 10_001), ("title", "t" * 201)):
        error = await call(jp_fetch, "POST", JOBS, job({**NOTIFY, field: text}), expect=400)
        assert error["field"] == f"action.{field}"
    fits = {**NOTIFY, "message": "m" * 10_000, "title": "t" * 200, "priority": "critical"}
    created = await call(jp_fetch, "POST", JOBS, job(fits), expect=201)
    path = f"{JOBS}/{created['id']}"
    error = await call(jp_fetch, "PATCH", path, {"action": bad}, expect=400)
    assert error["field"] == "action.priority"
    error = await call(jp_fetch, "POST", JOBS, {"jobs": [job(NOTIFY), job(bad)]}, expect=400)
    assert error["field"] == "jobs[1].action.priority"


async def test_options_the_notifier_reads_must_have_their_type(jp_fetch):
    refused = [
        ("output_channel", 5),
        ("output_channel", ["hook"]),
        ("output_channel", ""),
        ("output_config", "zz"),
        ("output_config", 7),
    ]
    for key, value in refused:
        body = job(NOTIFY, options={key: value})
        error = await call(jp_fetch, "POST", JOBS, body, expect=400)
        assert error["field"] == f"options.{key}", (key, value)
    good = {"output_channel": "hook", "output_config": {"url": "u"}, "mine": [1]}
    created = await call(jp_fetch, "POST", JOBS, job(NOTIFY, options=good), expect=201)
    assert created["options"] == good
    path = f"{JOBS}/{created['id']}"
    error = await call(jp_fetch, "PATCH", path, {"options": {"output_config": 7}}, expect=400)
    assert error["field"] == "options.output_config"
    batch = {"jobs": [job(NOTIFY), job(NOTIFY, options={"output_channel": 5})]}
    error = await call(jp_fetch, "POST", JOBS, batch, expect=400)
    assert error["field"] == "jobs[1].options.output_channel"
    assert (await call(jp_fetch, "GET", path))["options"] == good
