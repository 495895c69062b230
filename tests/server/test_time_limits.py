"""policies.timeout on a real server: runs in live and fresh kernels stopped at their limit."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import nbformat
import pytest

from tests.server import test_live_jobs
from tests.server.rest import call
from tests.server.test_live_jobs import NB, finished, first_run

SLOW = "import time\nprint('go', flush=True)\ntime.sleep(60)"


user = test_live_jobs.user
"""A user's notebook session with its kernel (the fixture of the live-job tests)."""


def processes_running(argument: str) -> list[str]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if argument in cmdline.read_bytes().decode(errors="replace"):
                found.append(cmdline.parent.name)
        except OSError:
            continue  # the process ended while we looked
    return found


def seconds_between(run: dict) -> float:
    started = time.mktime(time.strptime(run["started_at"][:19], "%Y-%m-%dT%H:%M:%S"))
    ended = time.mktime(time.strptime(run["finished_at"][:19], "%Y-%m-%dT%H:%M:%S"))
    return ended - started


async def test_a_sleeping_live_kernel_run_times_out_and_the_kernel_stays_usable(jp_fetch, user):
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
    assert (await user.run("print('the user too')"))["content"]["status"] == "ok"


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


def write_slow_notebook(root_dir: str, name: str) -> str:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("print('first')"), nbformat.v4.new_code_cell(SLOW)]
    nbformat.write(nb, Path(root_dir) / name)
    return name


async def test_a_notebook_run_past_its_limit_ends_timed_out(jp_fetch, jp_serverapp):
    body = {
        "when": "now",
        "action": {
            "type": "notebook",
            "path": write_slow_notebook(jp_serverapp.root_dir, "s.ipynb"),
        },
        "target": {"type": "headless", "kernel_name": "python3"},
        "policies": {"timeout": 5, "retries": {"max": 1, "on": ["timed_out"], "backoff": 3600}},
    }
    job = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201)
    run = await finished(jp_fetch, (await first_run(jp_fetch, job["id"]))["id"], timeout=90)

    # nbclient reads the limit's cancellation as "Kernel died": the run still ends timed out.
    assert run["status"] == "timed_out", run
    assert "limit of 5 s" in run["error"], run
    # The cell cut short still gives the run what it printed.
    assert "first\ngo\n" in run["output"], run
    # retries.on ["timed_out"] plans the retry.
    assert run["retry_at"] is not None, run


async def test_a_stopped_notebook_run_ends_cancelled(jp_fetch, jp_serverapp):
    body = {
        "when": "now",
        "action": {
            "type": "notebook",
            "path": write_slow_notebook(jp_serverapp.root_dir, "t.ipynb"),
        },
        "target": {"type": "headless", "kernel_name": "python3"},
        "policies": {"timeout": 120},  # not the module's default of 1 s
    }
    job = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201)
    run = await first_run(jp_fetch, job["id"])
    for _ in range(600):  # the first cell's output is in: the second one runs
        if "first" in (await call(jp_fetch, "GET", f"api/recall/runs/{run['id']}"))["output"]:
            break
        await asyncio.sleep(0.1)
    await asyncio.sleep(1)
    await call(jp_fetch, "POST", f"api/recall/runs/{run['id']}/stop")
    final = await finished(jp_fetch, run["id"], timeout=60)
    assert final["status"] == "cancelled", final
    # Said as for code in a fresh kernel; the copy with the partial outputs is still kept.
    assert final["output"].endswith(
        "[recall] run stopped: its headless kernel is shut down\n"
        "[recall] executed copy: t.recall-" + run["id"] + ".ipynb\n"
    ), final


@pytest.fixture
def recall_config(recall_config):
    # The server's default limit is short here: every job of this module that sets none has it.
    # shell.run asks for approval by default, which a server-side job cannot get.
    return {**recall_config, "default_timeout": 1.0, "tool_policies": {"shell.run": "auto"}}


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


async def test_a_tool_call_past_its_limit_is_cancelled_with_its_process(jp_fetch):
    marker = "61.4321"
    body = {
        "when": "now",
        "action": {"type": "tool", "name": "shell.run", "params": {"command": f"sleep {marker}"}},
        "target": {"type": "server"},
        "policies": {"timeout": 2},
    }
    job = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201)
    started = await first_run(jp_fetch, job["id"])
    while not processes_running(marker) and started["status"] == "running":
        await asyncio.sleep(0.05)
        started = await call(jp_fetch, "GET", f"api/recall/runs/{started['id']}")
    assert started["status"] == "running", "the tool's process was seen while the run went on"
    run = await finished(jp_fetch, started["id"], timeout=60)

    assert run["status"] == "timed_out", run
    assert seconds_between(run) < 12, run
    deadline = time.monotonic() + 30
    while processes_running(marker) and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    assert processes_running(marker) == [], "the tool's process outlived its cancelled run"
