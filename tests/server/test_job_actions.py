"""One rule for what a job's state allows (``core/actions.py``): every job document carries it as
``allowed_actions``, and the REST API refuses (409) exactly the actions it leaves out, for every
state a job can be in, through a real server."""

from __future__ import annotations

import asyncio

from tests.server.rest import call

NOTIFY = {"type": "notification", "message": "hello"}
NOWHERE = {"type": "kernel", "path": "nowhere/gone.ipynb"}
ACTIONS = ("cancel", "edit", "pause", "resume", "run_now", "skip")

EXPECTED = {
    "active recurring": ["cancel", "edit", "pause", "run_now", "skip"],
    "active one-shot": ["cancel", "edit", "pause", "run_now"],
    "paused recurring": ["cancel", "edit", "resume", "run_now", "skip"],
    "paused one-shot": ["cancel", "edit", "resume", "run_now"],
    "completed": ["run_now"],
    "failed": ["run_now"],
    "cancelled": [],
    "declared by an owner": ["pause", "run_now", "skip"],
}
"""Written out by hand: the rule as users see it."""

COPIES = len(ACTIONS)


async def _create(jp_fetch, when: str, **extra) -> dict:
    return await call(
        jp_fetch, "POST", "api/recall/jobs", {"when": when, "action": NOTIFY, **extra}, expect=201
    )


async def _settled(jp_fetch, job_id: str, status: str) -> dict:
    deadline = asyncio.get_running_loop().time() + 60
    while True:
        job = await call(jp_fetch, "GET", f"api/recall/jobs/{job_id}")
        if job["status"] == status:
            return job
        assert asyncio.get_running_loop().time() < deadline, f"{job_id} never {status}: {job}"
        await asyncio.sleep(0.1)


async def _paused(jp_fetch, when: str) -> dict:
    job = await _create(jp_fetch, when)
    return await call(jp_fetch, "POST", f"api/recall/jobs/{job['id']}/pause")


async def _ended(jp_fetch, status: str) -> dict:
    # A one-shot for a notebook that has no kernel fails at once (on_missing_kernel: fail).
    body = {"when": "now", "action": {"type": "code", "code": "1"}, "target": NOWHERE}
    if status == "completed":
        body = {"when": "now", "action": NOTIFY}
    job = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201)
    return await _settled(jp_fetch, job["id"], status)


async def _cancelled(jp_fetch) -> dict:
    job = await _create(jp_fetch, "every 1h")
    return await call(jp_fetch, "POST", f"api/recall/jobs/{job['id']}/cancel")


async def _declared(jp_fetch, index: int) -> dict:
    body = {"jobs": [{"key": f"k{index}", "when": "every 1h", "action": NOTIFY}]}
    answer = await call(jp_fetch, "PUT", f"api/recall/owners/owner{index}/jobs", body)
    (job,) = answer["created"]
    return job


def _maker(jp_fetch, state: str, index: int):
    makers = {
        "active recurring": lambda: _create(jp_fetch, "every 1h"),
        "active one-shot": lambda: _create(jp_fetch, "in 1h"),
        "paused recurring": lambda: _paused(jp_fetch, "every 1h"),
        "paused one-shot": lambda: _paused(jp_fetch, "in 1h"),
        "completed": lambda: _ended(jp_fetch, "completed"),
        "failed": lambda: _ended(jp_fetch, "failed"),
        "cancelled": lambda: _cancelled(jp_fetch),
        "declared by an owner": lambda: _declared(jp_fetch, index),
    }
    return makers[state]()


async def _attempt(jp_fetch, job_id: str, action: str, allowed: bool) -> dict:
    """The action over REST; the status asserted is 2xx when allowed, else 409."""
    path = f"api/recall/jobs/{job_id}"
    if action == "edit":
        return await call(
            jp_fetch, "PATCH", path, {"name": "renamed"}, expect=200 if allowed else 409
        )
    verb = "trigger" if action == "run_now" else action
    ok = 201 if action == "run_now" else 200
    return await call(jp_fetch, "POST", f"{path}/{verb}", expect=ok if allowed else 409)


async def test_the_rest_api_refuses_exactly_what_allowed_actions_leaves_out(jp_fetch):
    for state, expected in EXPECTED.items():
        jobs = [await _maker(jp_fetch, state, index) for index in range(COPIES)]
        for job, action in zip(jobs, ACTIONS, strict=True):
            assert job["allowed_actions"] == expected, (state, job)
            answer = await _attempt(jp_fetch, job["id"], action, action in expected)
            if action not in expected:
                assert job["id"] in answer["message"], (state, action, answer)


async def test_a_refused_repeat_says_why(jp_fetch):
    job = await _paused(jp_fetch, "every 1h")
    again = await call(jp_fetch, "POST", f"api/recall/jobs/{job['id']}/pause", expect=409)
    assert again["message"] == f"job {job['id']} is already paused"
    done = await _ended(jp_fetch, "completed")
    edit = await call(
        jp_fetch, "PATCH", f"api/recall/jobs/{done['id']}", {"when": "in 1h"}, expect=409
    )
    assert edit["message"] == f"job {done['id']} is completed: it cannot be edited"
