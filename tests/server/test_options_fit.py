"""Kernel options on a job that runs in no notebook's live kernel are refused, naming the
option: kept, they would silently do nothing (``exclusive`` waits for that kernel to be idle,
``on_missing_kernel`` says what to do when it is not running)."""

from __future__ import annotations

import pytest

from tests.server.rest import call

CODE = {"type": "code", "code": "print(1)"}
NOTE = {"type": "notification", "message": "hi"}
LIVE = {"type": "kernel", "path": "live.ipynb"}
HEADLESS = {"type": "headless", "kernel_name": "python3"}
SERVER = {"type": "server"}


def job(action: dict, target: dict, options: dict) -> dict:
    return {"when": "in 1h", "action": action, "target": target, "options": options}


@pytest.mark.parametrize(
    ("action", "target", "options", "field"),
    [
        (CODE, HEADLESS, {"exclusive": True}, "options.exclusive"),
        (CODE, HEADLESS, {"on_missing_kernel": "start"}, "options.on_missing_kernel"),
        (NOTE, {"type": "server"}, {"on_missing_kernel": "skip"}, "options.on_missing_kernel"),
    ],
    ids=["exclusive-headless", "missing-kernel-headless", "missing-kernel-server"],
)
async def test_kernel_options_off_a_live_kernel_are_refused(
    jp_fetch, action, target, options, field
):
    error = await call(
        jp_fetch, "POST", "api/recall/jobs", job(action, target, options), expect=400
    )
    assert error["field"] == field
    assert f"not on a {target['type']!r} target" in error["message"]
    assert (await call(jp_fetch, "GET", "api/recall/jobs"))["jobs"] == []


async def test_kernel_options_on_a_live_kernel_and_their_defaults_elsewhere_are_kept(jp_fetch):
    live = {"exclusive": True, "on_missing_kernel": "start"}
    created = await call(jp_fetch, "POST", "api/recall/jobs", job(CODE, LIVE, live), expect=201)
    assert created["options"] == live
    defaults = {"exclusive": False, "on_missing_kernel": "fail"}
    body = job(CODE, HEADLESS, defaults)
    assert (await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201))[
        "options"
    ] == defaults


async def test_in_a_batch_the_error_names_the_job(jp_fetch):
    jobs = [job(CODE, LIVE, {"exclusive": True}), job(CODE, HEADLESS, {"exclusive": True})]
    error = await call(jp_fetch, "POST", "api/recall/jobs", {"jobs": jobs}, expect=400)
    assert error["field"] == "jobs[1].options.exclusive"
    assert (await call(jp_fetch, "GET", "api/recall/jobs"))["jobs"] == []


async def test_moving_an_exclusive_job_off_its_kernel_needs_its_options_changed_too(jp_fetch):
    created = await call(
        jp_fetch, "POST", "api/recall/jobs", job(CODE, LIVE, {"exclusive": True}), expect=201
    )
    path = f"api/recall/jobs/{created['id']}"
    error = await call(jp_fetch, "PATCH", path, {"target": HEADLESS}, expect=400)
    assert error["field"] == "options.exclusive"
    assert (await call(jp_fetch, "GET", path))["target"] == LIVE
    # options merge (RFC 7386): null removes the key.
    moved = await call(
        jp_fetch, "PATCH", path, {"target": HEADLESS, "options": {"exclusive": None}}
    )
    assert moved["target"] == HEADLESS
    assert moved["options"] == {}


async def test_an_option_key_that_looks_misspelt_is_kept_with_a_warning(jp_fetch):
    options = {"output_chanel": "ops", "team": "data"}
    created = await call(
        jp_fetch, "POST", "api/recall/jobs", job(NOTE, SERVER, options), expect=201
    )
    assert created["options"] == options  # kept: other layers keep their own keys there
    assert created["warnings"] == [
        "warning: options.output_chanel is kept but nothing reads it: did you mean "
        "options.output_channel?"
    ]
    plain = await call(
        jp_fetch, "POST", "api/recall/jobs", job(NOTE, SERVER, {"team": "x"}), expect=201
    )
    assert "warnings" not in plain
