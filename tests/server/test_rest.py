"""The REST API against a real Jupyter server with the extension loaded."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from jupyter_recall.client.remote import error_from_response
from jupyter_recall.core.errors import ConflictError, PendingRecallExists
from jupyter_recall.server.handlers import UnknownRouteHandler, route_table
from tests.server.rest import call, openapi


async def wait_for_run(jp_fetch, job_id, *, trigger="schedule", timeout=15.0):
    """The first finished run of the job fired by ``trigger``."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        runs = (await call(jp_fetch, "GET", f"api/recall/jobs/{job_id}/runs"))["runs"]
        done = [r for r in runs if r["status"] not in ("running", "skipped")]
        done = [r for r in done if r["trigger"] == trigger]
        if done:
            return done[-1]
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"no finished run for {job_id} in {timeout}s: {runs}")
        await asyncio.sleep(0.1)


NOTIFY = {"type": "notification", "message": "hello from the server"}


async def test_info_names_extension_and_user(jp_fetch):
    info = await call(jp_fetch, "GET", "api/recall/info")
    assert info["name"] == "jupyter_recall"
    assert info["default_tz"] == "UTC"
    assert info["user"]


async def test_server_notification_job_fires_and_records_output(jp_fetch):
    job = await call(
        jp_fetch, "POST", "api/recall/jobs", {"when": "in 1s", "action": NOTIFY}, expect=201
    )
    assert job["status"] == "active"
    assert job["schedule_kind"] == "once"
    assert job["next_fire_at"] is not None
    assert job["canonical"]
    run = await wait_for_run(jp_fetch, job["id"])
    assert run["status"] == "succeeded", run
    assert "hello from the server" in run["output"]
    assert run["trigger"] == "schedule"
    finished = await call(jp_fetch, "GET", f"api/recall/jobs/{job['id']}")
    assert finished["status"] == "completed"
    assert finished["run_count"] == 1
    one = await call(jp_fetch, "GET", f"api/recall/runs/{run['id']}")
    assert one["output"] == run["output"]


async def test_list_filters(jp_fetch):
    await call(jp_fetch, "POST", "api/recall/jobs", {"when": "in 1h", "action": NOTIFY}, expect=201)
    recurring = await call(
        jp_fetch,
        "POST",
        "api/recall/jobs",
        {"when": "every day at 09:00", "action": NOTIFY},
        expect=201,
    )
    await call(jp_fetch, "POST", f"api/recall/jobs/{recurring['id']}/pause")
    paused = await call(jp_fetch, "GET", "api/recall/jobs", status="paused")
    assert [j["id"] for j in paused["jobs"]] == [recurring["id"]]
    both = await call(jp_fetch, "GET", "api/recall/jobs", status="active,paused")
    assert len(both["jobs"]) == 2
    crons = await call(jp_fetch, "GET", "api/recall/jobs", schedule_kind="cron")
    assert [j["id"] for j in crons["jobs"]] == [recurring["id"]]


async def test_batch_create(jp_fetch):
    body = {"jobs": [{"when": f"in {i + 1}h", "action": NOTIFY} for i in range(3)]}
    created = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201)
    assert len(created["jobs"]) == 3


async def test_pause_resume_skip_trigger(jp_fetch):
    job = await call(
        jp_fetch, "POST", "api/recall/jobs", {"when": "every 1h", "action": NOTIFY}, expect=201
    )
    first = job["next_fire_at"]
    paused = await call(jp_fetch, "POST", f"api/recall/jobs/{job['id']}/pause")
    assert paused["status"] == "paused"
    resumed = await call(jp_fetch, "POST", f"api/recall/jobs/{job['id']}/resume")
    assert resumed["status"] == "active"
    skipped = await call(jp_fetch, "POST", f"api/recall/jobs/{job['id']}/skip")
    assert skipped["next_fire_at"] > first
    run = await call(jp_fetch, "POST", f"api/recall/jobs/{job['id']}/trigger", expect=201)
    assert run["trigger"] == "manual"
    done = await wait_for_run(jp_fetch, job["id"], trigger="manual")
    assert done["id"] == run["id"]
    assert done["status"] == "succeeded"
    assert "hello from the server" in done["output"]
    after = await call(jp_fetch, "GET", f"api/recall/jobs/{job['id']}")
    assert after["next_fire_at"] == skipped["next_fire_at"], "run-now must not move the schedule"


async def test_patch_and_delete(jp_fetch):
    job = await call(
        jp_fetch, "POST", "api/recall/jobs", {"when": "in 1h", "action": NOTIFY}, expect=201
    )
    patched = await call(
        jp_fetch,
        "PATCH",
        f"api/recall/jobs/{job['id']}",
        {"when": "every monday at 10:00", "name": "weekly"},
    )
    assert patched["schedule_kind"] == "cron"
    assert patched["name"] == "weekly"
    await call(jp_fetch, "DELETE", f"api/recall/jobs/{job['id']}", expect=204)
    await call(jp_fetch, "GET", f"api/recall/jobs/{job['id']}", expect=404)


async def test_parse_preview(jp_fetch):
    parsed = await call(
        jp_fetch, "POST", "api/recall/parse", {"when": "every day at 09:00", "tz": "Europe/Paris"}
    )
    assert parsed["kind"] == "cron"
    assert len(parsed["next_fire_times"]) == 5
    error = await call(jp_fetch, "POST", "api/recall/parse", {"when": "next blue moon"}, expect=400)
    assert error["field"] == "when"
    assert "next blue moon" in error["message"]
    assert "every day" in error["message"], "the error lists the accepted forms"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"action": NOTIFY}, "when"),
        ({"when": "in 1h"}, "action"),
        ({"when": "tomorrow at 25:00", "action": NOTIFY}, "when"),
        ({"when": "in 1h", "action": {"type": "sql"}}, "action.type"),
        ({"when": "in 1h", "action": NOTIFY, "target": {"type": "moon"}}, "target.type"),
        ({"when": "in 1h", "action": {"type": "code", "code": "1"}}, "target.type"),
        ({"when": "in 1h", "action": NOTIFY, "colour": "red"}, "colour"),
        ({"when": "in 1h", "action": NOTIFY, "tz": "Mars/Olympus"}, "tz"),
        ({"when": "in 1h", "action": NOTIFY, "policies": {"overlap": "queue"}}, "policies.overlap"),
        ({"when": "in 1h", "action": NOTIFY, "kind": "recall"}, "action.type"),
    ],
)
async def test_bad_input_is_400_naming_the_field(jp_fetch, body, field):
    error = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=400)
    assert error["field"] == field, error
    assert field.split(".")[-1] in error["message"]


async def test_not_json_is_400(jp_fetch):
    response = await jp_fetch(
        "api", "recall", "jobs", method="POST", body="{not json", raise_error=False
    )
    assert response.code == 400
    assert json.loads(response.body)["field"] == "body"


async def test_resuming_a_one_shot_passed_while_paused_is_409_saying_catch_up_true(jp_fetch):
    body = {"when": "in 1s", "action": NOTIFY}
    job = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201)
    await call(jp_fetch, "POST", f"api/recall/jobs/{job['id']}/pause")
    await asyncio.sleep(1.5)
    error = await call(jp_fetch, "POST", f"api/recall/jobs/{job['id']}/resume", expect=409)
    assert error["reason"] == "PassedWhilePaused"
    assert error["passed_while_paused"] == {"job_id": job["id"], "at": job["next_fire_at"]}
    # REST words it in its own terms; each client words it from the fields in its own.
    assert "resume it with catch-up (catch_up=true) to run it now" in error["message"]
    # A misspelt option is refused naming it, not resumed without catch-up.
    typo = await call(
        jp_fetch, "POST", f"api/recall/jobs/{job['id']}/resume", {"catchup": True}, expect=400
    )
    assert (typo["field"], typo["accepted"]) == ("catchup", ["catch_up"])
    resumed = await call(
        jp_fetch, "POST", f"api/recall/jobs/{job['id']}/resume", {"catch_up": True}
    )
    assert resumed["status"] == "active"
    assert (await wait_for_run(jp_fetch, job["id"]))["status"] == "succeeded"


async def test_unknown_ids_are_404(jp_fetch):
    await call(jp_fetch, "GET", "api/recall/jobs/000000000000", expect=404)
    await call(jp_fetch, "POST", "api/recall/jobs/000000000000/pause", expect=404)
    await call(jp_fetch, "GET", "api/recall/runs/000000000000", expect=404)


async def test_one_pending_recall_per_session_is_409(jp_fetch):
    recall = {
        "when": "in 1h",
        "kind": "recall",
        "action": {"type": "instruction", "instruction": "check the build log"},
        "target": {"type": "kernel", "path": "work/agent.ipynb"},
    }
    first = await call(jp_fetch, "POST", "api/recall/jobs", recall, expect=201)
    assert first["session"] == "work/agent.ipynb"
    error = await call(jp_fetch, "POST", "api/recall/jobs", recall, expect=409)
    assert first["id"] in error["message"]
    assert "cancel" in error["message"]
    # The fields each client words its own refusal from, without reading the message.
    assert error["reason"] == "PendingRecallExists"
    assert error["pending_recall"] == {"session": "work/agent.ipynb", "recall_id": first["id"]}
    assert not re.search(r"%recall|manage_recall", error["message"]), error
    # The client re-raises the same subclass with its fields and the server's message.
    raised = error_from_response(409, error, url="u")
    assert isinstance(raised, PendingRecallExists)
    assert isinstance(raised, ConflictError)
    assert (raised.session, raised.recall_id) == ("work/agent.ipynb", first["id"])
    assert str(raised) == error["message"]
    assert str(raised.hinted("how")) == f"{error['message']} (how)"


async def test_a_job_in_a_notebooks_kernel_belongs_to_that_notebook(jp_fetch):
    code = {"type": "code", "code": "print(1)"}
    body = {"when": "in 1h", "action": code, "target": {"type": "kernel", "path": "./w//nb.ipynb"}}
    job = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201)
    assert job["session"] == "w/nb.ipynb", "as the notebook's own sessions write its path"
    # (``call`` takes its query as keywords, and its own ``path`` is the route.)
    response = await jp_fetch("api", "recall", "jobs", params={"path": "w/nb.ipynb"})
    listed = json.loads(response.body)
    assert [listed_job["id"] for listed_job in listed["jobs"]] == [job["id"]]
    # A session given is kept, written as sessions write it (one pending recall per notebook
    # however its path is typed); a kernel given by id makes no session for a job.
    typed = {**body, "session": "./w//nb.ipynb"}
    assert (await call(jp_fetch, "POST", "api/recall/jobs", typed, expect=201))["session"] == (
        "w/nb.ipynb"
    )
    given = await call(
        jp_fetch, "POST", "api/recall/jobs", {**body, "session": "a.ipynb"}, expect=201
    )
    assert given["session"] == "a.ipynb"
    by_id = {**body, "target": {"type": "kernel", "kernel_id": "k1"}}
    assert (await call(jp_fetch, "POST", "api/recall/jobs", by_id, expect=201))["session"] is None


async def test_skip_of_one_shot_is_409(jp_fetch):
    job = await call(
        jp_fetch, "POST", "api/recall/jobs", {"when": "in 1h", "action": NOTIFY}, expect=201
    )
    error = await call(jp_fetch, "POST", f"api/recall/jobs/{job['id']}/skip", expect=409)
    assert "cancel" in error["message"]


async def test_runs_since(jp_fetch):
    job = await call(
        jp_fetch, "POST", "api/recall/jobs", {"when": "every 1h", "action": NOTIFY}, expect=201
    )
    await call(jp_fetch, "POST", f"api/recall/jobs/{job['id']}/trigger", expect=201)
    run = await wait_for_run(jp_fetch, job["id"], trigger="manual")
    recent = await call(jp_fetch, "GET", "api/recall/runs", since=run["created_at"])
    assert run["id"] in [r["id"] for r in recent["runs"]]
    later = await call(jp_fetch, "GET", "api/recall/runs", since="2999-01-01T00:00:00+00:00")
    assert later["runs"] == []
    error = await call(jp_fetch, "GET", "api/recall/runs", since="yesterday", expect=400)
    assert error["field"] == "since"


async def test_runs_keep_the_newest_n_with_limit(jp_fetch):
    job = await call(
        jp_fetch, "POST", "api/recall/jobs", {"when": "every 1h", "action": NOTIFY}, expect=201
    )
    path = f"api/recall/jobs/{job['id']}/runs"
    for count in (1, 2, 3):
        await call(jp_fetch, "POST", f"api/recall/jobs/{job['id']}/trigger", expect=201)
        deadline = asyncio.get_running_loop().time() + 15
        while len((await call(jp_fetch, "GET", path))["runs"]) < count:
            assert asyncio.get_running_loop().time() < deadline, f"run {count} never recorded"
            await asyncio.sleep(0.05)
    every = (await call(jp_fetch, "GET", path))["runs"]
    assert len(every) == 3
    newest = (await call(jp_fetch, "GET", path, limit="2"))["runs"]
    assert [r["id"] for r in newest] == [r["id"] for r in every[:2]]
    across = await call(jp_fetch, "GET", "api/recall/runs", job_id=job["id"], limit="1")
    assert [r["id"] for r in across["runs"]] == [every[0]["id"]]
    for bad in ("0", "-3", "ten", "10001", "\u00b9", "\u0663", "1" * 400):
        error = await call(jp_fetch, "GET", path, limit=bad, expect=400)
        assert error["field"] == "limit"
        assert repr(bad) in error["message"]


def _concrete(pattern: str) -> str:
    return re.sub(
        r"\(\?P<(\w+)>[^)]*\)", lambda m: "abc123" if m[1] != "action" else "pause", pattern
    )


def _methods(handler) -> list[str]:
    return [m for m in ("get", "post", "put", "patch", "delete") if m in vars(handler)]


async def test_every_route_refuses_requests_without_credentials(jp_fetch):
    for pattern, handler in route_table():
        for method in _methods(handler):
            path = _concrete(pattern)
            kwargs = {
                "method": method.upper(),
                "raise_error": False,
                "headers": {"Authorization": ""},
            }
            if method in ("post", "put", "patch"):
                kwargs["body"] = "{}"
            response = await jp_fetch(*path.strip("/").split("/"), **kwargs)
            assert response.code == 403, f"{method.upper()} {path} answered {response.code}"


def test_openapi_documents_exactly_the_routes():
    documented = {
        (path, method)
        for path, item in openapi()["paths"].items()
        for method in item
        if method in ("get", "post", "put", "patch", "delete")
    }
    served = set()
    for pattern, handler in route_table():
        if handler is UnknownRouteHandler:
            continue  # the JSON 404 of every other path, not a route of its own
        template = re.sub(r"\(\?P<(\w+)>[^)]*\)", r"{\1}", pattern)
        for method in _methods(handler):
            if "{action}" in template:
                served |= {
                    (template.replace("{action}", a), method)
                    for a in ("pause", "resume", "skip", "trigger", "cancel")
                }
            else:
                served.add((template, method))
    assert served == documented
