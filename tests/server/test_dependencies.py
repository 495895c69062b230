"""Dependencies over REST on a real server (a Jupyter server process, real headless kernels):
a chain A -> B -> C fires in order; an upstream run that ended while the server went down fires
its dependent once at the next start; cycles, unknown upstreams and ``when`` with ``after`` are
400s naming the field."""

from __future__ import annotations

import json
import urllib.error
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from tests.server.live_server import LiveServer
from tests.server.rest import check_response

HEADLESS = {"type": "headless", "kernel_name": "python3"}
LATER = "every day at 09:00"


def code_job(name: str, code: str, **schedule: Any) -> dict[str, Any]:
    return {"name": name, "action": {"type": "code", "code": code}, "target": HEADLESS, **schedule}


def runs(server: LiveServer, job_id: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = server.request("GET", f"/api/recall/jobs/{job_id}/runs")["runs"]
    return sorted(found, key=lambda run: run["scheduled_for"])


def ended(server: LiveServer, job_id: str, count: int = 1) -> list[dict[str, Any]] | None:
    found = runs(server, job_id)
    done = [run for run in found if run["status"] != "running"]
    return done if len(done) >= count else None


def refused(server: LiveServer, method: str, path: str, body: Any) -> dict[str, Any]:
    with pytest.raises(urllib.error.HTTPError) as error:
        server.request(method, path, body)
    assert error.value.code == 400
    answer: dict[str, Any] = json.loads(error.value.read().decode())
    check_response(method, path, 400, answer)
    return answer


def test_a_chain_fires_in_order_in_real_kernels(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    server = LiveServer(root, tmp_path / "recall.sqlite").start()
    try:
        a = server.request("POST", "/api/recall/jobs", code_job("A", "print('A ran')", when=LATER))
        b = server.request(
            "POST",
            "/api/recall/jobs",
            code_job("B", "print('B ran')", after={"job": a["id"], "on": "succeeded"}),
        )
        c = server.request(
            "POST",
            "/api/recall/jobs",
            code_job("C", "print('C ran')", when=f"after {b['id']} finishes"),
        )
        assert b["after"] == {"job": a["id"], "on": "succeeded"}
        assert b["description"] == f"after {a['id']} succeeds"
        assert b["schedule_kind"] == "after"
        assert b["next_fire_at"] is None
        assert c["after"] == {"job": b["id"], "on": "finished"}
        server.request("POST", f"/api/recall/jobs/{a['id']}/trigger")
        (c_run,) = server.wait_for(lambda: ended(server, c["id"]), timeout=180)
        (a_run,) = runs(server, a["id"])
        (b_run,) = runs(server, b["id"])
        assert [a_run["status"], b_run["status"], c_run["status"]] == ["succeeded"] * 3
        assert "B ran" in b_run["output"]
        assert "C ran" in c_run["output"]
        assert (b_run["trigger"], c_run["trigger"]) == ("after", "after")
        assert b_run["scheduled_for"] == a_run["finished_at"]
        assert c_run["scheduled_for"] == b_run["finished_at"]
        assert a_run["finished_at"] <= b_run["started_at"]
        assert b_run["finished_at"] <= c_run["started_at"]

        # A cycle is refused by name, with its path; so is an upstream that is not there.
        cycle = refused(server, "PATCH", f"/api/recall/jobs/{a['id']}", {"after": {"job": c["id"]}})
        assert cycle["field"] == "after.job"
        assert f"{a['id']} -> {c['id']} -> {b['id']} -> {a['id']}" in cycle["message"]
        unknown = refused(
            server, "POST", "/api/recall/jobs", code_job("D", "1", after={"job": "0" * 12})
        )
        assert unknown["field"] == "after.job"
        both = refused(
            server,
            "POST",
            "/api/recall/jobs",
            code_job("D", "1", when="in 1h", after={"job": a["id"]}),
        )
        assert both["field"] == "after"
        bad_on = refused(
            server,
            "POST",
            "/api/recall/jobs",
            code_job("D", "1", after={"job": a["id"], "on": "started"}),
        )
        assert bad_on["field"] == "after.on"
        listed = server.request("GET", "/api/recall/jobs?schedule_kind=after")["jobs"]
        assert sorted(job["id"] for job in listed) == sorted([b["id"], c["id"]])
    finally:
        server.stop()


NOTE = {"type": "notification", "message": "after A"}


def test_an_upstream_run_ended_at_shutdown_fires_once_at_the_next_start(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    db = tmp_path / "recall.sqlite"
    server = LiveServer(root, db).start()
    try:
        slow = "import time\nprint('A started', flush=True)\ntime.sleep(120)"
        a = server.request("POST", "/api/recall/jobs", code_job("A", slow, when=LATER))
        b = server.request(
            "POST",
            "/api/recall/jobs",
            {"name": "B", "action": NOTE, "after": {"job": a["id"], "on": "finished"}},
        )
        server.request("POST", f"/api/recall/jobs/{a['id']}/trigger")
        server.wait_for(
            lambda: any("A started" in run["output"] for run in runs(server, a["id"])), timeout=120
        )
    finally:
        server.stop()  # A's run ends interrupted as the server shuts down
    for _ in range(2):  # the first start fires B; the second finds nothing left
        server = LiveServer(root, db, port=server.port).start()
        try:
            (a_run,) = runs(server, a["id"])
            assert a_run["status"] == "interrupted"
            (b_run,) = server.wait_for(partial(ended, server, b["id"]), timeout=60)
            assert b_run["status"] == "succeeded"
            assert b_run["scheduled_for"] == a_run["finished_at"]
            job = server.request("GET", f"/api/recall/jobs/{b['id']}")
            assert job["run_count"] == 1
        finally:
            server.stop()
