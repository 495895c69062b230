"""Dependencies from a notebook, in a real kernel under a real server: ``%schedule after <id>
succeeds: ...``, ``schedule(..., after=)`` and the ``schedule_after`` agent tool create jobs
that run in this kernel when their upstream's run ends; bad values are refused by name."""

from __future__ import annotations

import json
from typing import Any

from tests.kernel.conftest import Kernel, KernelServer
from tests.kernel.test_widgets import card_state, wait_card


def created_id(nb: Kernel, code: str) -> str:
    return str(nb.json(code)["id"])


def upstream(nb: Kernel) -> str:
    return created_id(
        nb,
        "job = jupyter_recall.schedule('every day at 09:00', notification='build')\n"
        "print(json.dumps({'id': job.id}))",
    )


def test_the_magic_the_api_and_the_agent_tool_fire_after_the_upstream(
    nb: Kernel, server: KernelServer
) -> None:
    first = upstream(nb)
    shown = nb.ok(f"%schedule --name by-magic after {first} succeeds: print('magic ran')")
    assert f"after {first} succeeds" in shown.displays[0]["text/plain"]
    api_id = created_id(
        nb,
        f"job = jupyter_recall.schedule(code=\"print('api ran')\", after='{first}:finished')\n"
        "print(json.dumps({'id': job.id, 'after': job['after']}))",
    )
    dispatched = nb.json(
        "print(json.dumps(jupyter_recall.agent.dispatch('schedule_after', "
        + repr(json.dumps({"after_job": api_id, "prompt": "api step done", "label": "tool"}))
        + ")))"
    )
    assert dispatched["ok"] is True, dispatched
    assert dispatched["after"] == {"job": api_id, "on": "succeeded"}
    by_magic = next(job for job in server.jobs() if job["name"] == "by-magic")
    assert by_magic["after"] == {"job": first, "on": "succeeded"}
    assert server.job(api_id)["after"] == {"job": first, "on": "finished"}

    server.request("POST", f"/api/recall/jobs/{first}/trigger")
    (magic_run,) = server.finished_runs(by_magic["id"], timeout=60)
    (api_run,) = server.finished_runs(api_id, timeout=60)
    (tool_run,) = server.finished_runs(dispatched["job_id"], timeout=60)
    assert "magic ran" in magic_run["output"]
    assert "api ran" in api_run["output"]
    assert [run["status"] for run in (magic_run, api_run, tool_run)] == ["succeeded"] * 3
    assert tool_run["scheduled_for"] == api_run["finished_at"]


def test_bad_dependencies_are_refused_by_name(nb: Kernel) -> None:
    first = upstream(nb)
    failed: dict[str, Any] = nb.json(
        "try:\n"
        f"    jupyter_recall.schedule('in 1h', code='1', after='{first}')\n"
        "except Exception as exc:\n"
        "    print(json.dumps({'field': exc.field}))"
    )
    assert failed == {"field": "after"}
    unknown = nb.json(
        "print(json.dumps(jupyter_recall.agent.dispatch('schedule_after', "
        '\'{"after_job": "000000000000", "prompt": "x"}\')))'
    )
    assert unknown["ok"] is False
    assert unknown["field"] == "after_job"
    bad_on = nb.run(f"%schedule after {first} starts: print(1)")
    assert "after <job id> succeeds" in bad_on.text


def test_the_card_shows_the_upstream_and_the_run_it_fired(nb: Kernel, server: KernelServer) -> None:
    first = upstream(nb)
    out = nb.ok(f"%schedule --name card-after after {first} finishes: print('from the card')")
    (shown,) = out.displays
    assert "fires after its upstream's runs" in shown["text/plain"]
    job = next(job for job in server.jobs() if job["name"] == "card-after")
    state = card_state(nb, job["id"])
    assert 'class="jupyter-recall-schedule jupyter-recall-upstream"' in state["header"]
    assert f'data-upstream-id="{first}"' in state["header"]
    assert f"after job <b>{first}</b> finishes" in state["header"]
    server.request("POST", f"/api/recall/jobs/{first}/trigger")
    done = wait_card(nb, job["id"], lambda s: 'data-status="succeeded"' in s["run"], timeout=60)
    assert done["output"] == "from the card\n"
