"""Jobs through the REST API executing in live and fresh kernels of a real server."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from tests.server.rest import call
from tests.server.user_notebook import UserNotebook

NB = "work/analysis.ipynb"


@pytest.fixture
def user(jp_serverapp, jp_create_notebook, jp_asyncio_loop):
    jp_create_notebook(NB)
    session = jp_asyncio_loop.run_until_complete(
        jp_serverapp.session_manager.create_session(
            path=NB, name=NB, type="notebook", kernel_name="python3"
        )
    )
    notebook = UserNotebook(jp_serverapp, session)
    jp_asyncio_loop.run_until_complete(notebook.start())
    yield notebook
    notebook.close()


async def finished(jp_fetch, run_id, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = await call(jp_fetch, "GET", f"api/recall/runs/{run_id}")
        if run["status"] != "running":
            return run
        await asyncio.sleep(0.1)
    raise AssertionError(f"run {run_id} still running after {timeout}s")


async def first_run(jp_fetch, job_id, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        runs = (await call(jp_fetch, "GET", f"api/recall/jobs/{job_id}/runs"))["runs"]
        if runs:
            return runs[-1]
        await asyncio.sleep(0.05)
    raise AssertionError(f"job {job_id} did not fire in {timeout}s")


async def test_job_in_2s_runs_in_the_live_kernel_while_a_cell_sleeps(jp_fetch, user):
    assert (await user.run("x = 41"))["content"]["status"] == "ok"
    body = {
        "when": "in 2s",
        "action": {"type": "code", "code": "print(x + 1)"},
        "target": {"type": "kernel", "path": NB},
    }
    job = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201)
    sleep_id = user.send("import time; time.sleep(10)")
    sleep_sent = time.monotonic()

    run = await finished(jp_fetch, (await first_run(jp_fetch, job["id"]))["id"])

    assert run["status"] == "succeeded", run
    assert run["output"] == "42\n"
    assert time.monotonic() - sleep_sent < 8, "the run waited for the user's sleeping cell"
    status = await user.reply(sleep_id, timeout=30)
    assert status["content"]["status"] == "ok", "the user's cell ran to its end, undisturbed"
    assert time.monotonic() - sleep_sent >= 9.5


async def test_a_notebook_path_written_another_way_finds_the_notebooks_kernel(jp_fetch, user):
    """``./work//analysis.ipynb`` is the notebook of the session ``work/analysis.ipynb``: the
    path is stored in the sessions' form, so the job runs there (it used to fail at every fire
    with "no running kernel for notebook './work//analysis.ipynb'")."""
    assert (await user.run("x = 1"))["content"]["status"] == "ok"
    body = {
        "when": "now",
        "action": {"type": "code", "code": "print(x + 1)"},
        "target": {"type": "kernel", "path": "./work//analysis.ipynb"},
        "options": {"on_missing_kernel": "fail"},
    }
    job = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201)
    assert job["target"] == {"type": "kernel", "path": NB}
    run = await finished(jp_fetch, (await first_run(jp_fetch, job["id"]))["id"])
    assert (run["status"], run["output"]) == ("succeeded", "2\n"), run
    recall = {
        "when": "in 1h",
        "kind": "recall",
        "action": {"type": "instruction", "instruction": "look again"},
        "target": {"type": "kernel", "path": "work/./analysis.ipynb"},
    }
    pending = await call(jp_fetch, "POST", "api/recall/jobs", recall, expect=201)
    assert pending["session"] == NB
    # Both are the notebook's (a job in its kernel belongs to it), however its path is written.
    params = {"path": "./work/analysis.ipynb"}
    listed = json.loads((await jp_fetch("api", "recall", "jobs", params=params)).body)
    assert sorted(found["id"] for found in listed["jobs"]) == sorted([job["id"], pending["id"]])
    assert job["session"] == NB
    for field, target in (
        ("target.path", {"type": "kernel", "path": "../../etc/passwd.ipynb"}),
        ("target.cwd", {"type": "headless", "cwd": "work/../.."}),
    ):
        refused = {**body, "target": target, "options": {}}
        error = await call(jp_fetch, "POST", "api/recall/jobs", refused, expect=400)
        assert error["field"] == field
        assert "under the server's root directory" in error["message"]


async def test_headless_job_runs_in_a_fresh_kernel(jp_fetch, jp_serverapp):
    kernels_before = set(jp_serverapp.kernel_manager.list_kernel_ids())
    body = {
        "when": "now",
        "action": {"type": "code", "code": "import os; print('fresh', 'x' in globals())"},
        "target": {"type": "headless", "kernel_name": "python3"},
    }
    job = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201)
    run = await finished(jp_fetch, (await first_run(jp_fetch, job["id"]))["id"], timeout=60)
    assert run["status"] == "succeeded", run
    assert run["output"] == "fresh False\n"
    assert set(jp_serverapp.kernel_manager.list_kernel_ids()) == kernels_before


async def test_failing_code_fails_the_run_and_recurring_job_keeps_schedule(jp_fetch, user):
    body = {
        "when": "every 1h",
        "action": {"type": "code", "code": "1 / 0"},
        "target": {"type": "kernel", "path": NB},
    }
    job = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201)
    started = await call(jp_fetch, "POST", f"api/recall/jobs/{job['id']}/trigger", expect=201)
    run = await finished(jp_fetch, started["id"])
    assert run["status"] == "failed"
    assert "ZeroDivisionError" in run["error"]
    after = await call(jp_fetch, "GET", f"api/recall/jobs/{job['id']}")
    assert after["status"] == "active"
    assert after["next_fire_at"] == job["next_fire_at"]
    assert after["failure_count"] == 1


async def test_stop_a_running_run(jp_fetch, user):
    body = {
        "when": "now",
        "action": {
            "type": "code",
            "code": "import time\nprint('go', flush=True)\nfor _ in range(600): time.sleep(0.1)",
        },
        "target": {"type": "kernel", "path": NB},
    }
    job = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201)
    run = await first_run(jp_fetch, job["id"])
    for _ in range(100):
        run = await call(jp_fetch, "GET", f"api/recall/runs/{run['id']}")
        if "go" in run["output"]:
            break
        await asyncio.sleep(0.1)
    stopped = await call(jp_fetch, "POST", f"api/recall/runs/{run['id']}/stop")
    assert stopped["status"] == "cancelled"
    final = await finished(jp_fetch, run["id"])
    assert final["status"] == "cancelled"
    assert (await user.run("print('kernel still usable')"))["content"]["status"] == "ok"


async def test_missing_kernel_policy_fail_names_the_path(jp_fetch):
    body = {
        "when": "now",
        "action": {"type": "code", "code": "print(1)"},
        "target": {"type": "kernel", "path": "nowhere/gone.ipynb"},
    }
    job = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201)
    run = await finished(jp_fetch, (await first_run(jp_fetch, job["id"]))["id"])
    assert run["status"] == "failed"
    assert "nowhere/gone.ipynb" in run["error"]


async def test_deleting_a_notebook_session_cancels_its_pending_recall(jp_fetch):
    sessions = []
    for path in ("a.ipynb", "b.ipynb"):
        body = {"path": path, "name": path, "type": "notebook", "kernel": {"name": "python3"}}
        response = await jp_fetch("api", "sessions", method="POST", body=json.dumps(body))
        sessions.append(json.loads(response.body))
    recalls = []
    for session in sessions:
        body = {
            "when": "in 1h",
            "kind": "recall",
            "action": {"type": "instruction", "instruction": "check the log"},
            "target": {"type": "kernel", "path": session["path"]},
        }
        recalls.append(await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201))
    await jp_fetch("api", "sessions", sessions[0]["id"], method="DELETE")
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        gone = await call(jp_fetch, "GET", f"api/recall/jobs/{recalls[0]['id']}")
        if gone["status"] == "cancelled":
            break
        await asyncio.sleep(0.1)
    assert gone["status"] == "cancelled"
    kept = await call(jp_fetch, "GET", f"api/recall/jobs/{recalls[1]['id']}")
    assert kept["status"] == "active"
    assert kept["pending"] is True
