"""policies.timeout on a real server: runs in live and fresh kernels stopped at their limit."""

from __future__ import annotations

import time

import pytest

from tests.server.rest import call
from tests.server.test_live_jobs import NB, finished, first_run
from tests.server.user_notebook import UserNotebook

SLOW = "import time\nprint('go', flush=True)\ntime.sleep(60)"


@pytest.fixture
def notebook(jp_serverapp, jp_create_notebook, jp_asyncio_loop):
    jp_create_notebook(NB)
    session = jp_asyncio_loop.run_until_complete(
        jp_serverapp.session_manager.create_session(
            path=NB, name=NB, type="notebook", kernel_name="python3"
        )
    )
    user = UserNotebook(jp_serverapp, session)
    jp_asyncio_loop.run_until_complete(user.start())
    yield user
    user.close()


def seconds_between(run: dict) -> float:
    started = time.mktime(time.strptime(run["started_at"][:19], "%Y-%m-%dT%H:%M:%S"))
    ended = time.mktime(time.strptime(run["finished_at"][:19], "%Y-%m-%dT%H:%M:%S"))
    return ended - started


async def test_a_sleeping_live_kernel_run_times_out_and_the_kernel_stays_usable(jp_fetch, notebook):
    body = {
        "when": "now",
        "action": {"type": "code", "code": SLOW},
        "target": {"type": "kernel", "path": NB},
        "policies": {"timeout": 1},
    }
    job = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201)
    assert job["policies"]["timeout"] == 1
    run = await finished(jp_fetch, (await first_run(jp_fetch, job["id"]))["id"], timeout=60)

    assert run["status"] == "timed_out", run
    assert "limit of 1 s" in run["error"]
    assert "go" in run["output"]
    # One second of limit, then the stop (interrupt and a short grace for trailing output):
    # generous on a loaded machine, far below the 60 s the code would have slept.
    assert seconds_between(run) < 12, run
    assert (await call(jp_fetch, "GET", f"api/recall/jobs/{job['id']}"))["failure_count"] == 1

    after = {
        "when": "now",
        "action": {"type": "code", "code": "print('kernel still usable')"},
        "target": {"type": "kernel", "path": NB},
    }
    next_job = await call(jp_fetch, "POST", "api/recall/jobs", after, expect=201)
    next_run = await finished(jp_fetch, (await first_run(jp_fetch, next_job["id"]))["id"])
    assert next_run["status"] == "succeeded", next_run
    assert next_run["output"] == "kernel still usable\n"
    assert (await notebook.run("print('the user too')"))["content"]["status"] == "ok"


async def test_a_fresh_kernel_run_times_out_and_its_kernel_is_shut_down(jp_fetch, jp_serverapp):
    kernels_before = set(jp_serverapp.kernel_manager.list_kernel_ids())
    body = {
        "when": "now",
        "action": {"type": "code", "code": SLOW},
        "target": {"type": "headless", "kernel_name": "python3"},
        "policies": {"timeout": 5},
    }
    job = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201)
    run = await finished(jp_fetch, (await first_run(jp_fetch, job["id"]))["id"], timeout=90)

    assert run["status"] == "timed_out", run
    assert seconds_between(run) < 20, run
    assert set(jp_serverapp.kernel_manager.list_kernel_ids()) == kernels_before


@pytest.fixture
def recall_config(recall_config):
    return {**recall_config, "default_timeout": 1.0}


async def test_the_server_default_limits_jobs_that_set_none(jp_fetch):
    body = {
        "when": "now",
        "action": {"type": "code", "code": SLOW},
        "target": {"type": "headless", "kernel_name": "python3"},
    }
    job = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201)
    assert job["policies"]["timeout"] is None
    run = await finished(jp_fetch, (await first_run(jp_fetch, job["id"]))["id"], timeout=90)
    assert run["status"] == "timed_out", run
    assert "limit of 1 s" in run["error"]
