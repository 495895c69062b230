"""Pruned runs still count, across a restart of a real server: after `POST /runs/prune` has
deleted every run of a job that reached its max_runs and of a job still firing, a restarted
server fires neither an occurrence already fired nor more than max_runs."""

from __future__ import annotations

from tests.server.live_server import LiveServer

EVERY = {"type": "notification", "message": "tick"}


def runs_of(server: LiveServer, job_id: str) -> list[dict]:
    return list(server.request("GET", f"/api/recall/jobs/{job_id}/runs")["runs"])


def test_pruned_occurrences_never_fire_again_after_a_restart(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    db = tmp_path / "recall.sqlite"
    server = LiveServer(root, db).start()
    try:
        policies = {"keep_runs": 0}
        bounded = server.request(
            "POST",
            "/api/recall/jobs",
            {"when": "every 2 seconds", "action": EVERY, "policies": {**policies, "max_runs": 2}},
        )
        steady = server.request(
            "POST",
            "/api/recall/jobs",
            {"when": "every 2 seconds", "action": EVERY, "policies": policies},
        )
        server.wait_for(
            lambda: (
                server.request("GET", f"/api/recall/jobs/{bounded['id']}")["status"] == "completed"
            ),
            timeout=60,
        )
        fired = {run["scheduled_for"] for run in runs_of(server, steady["id"])}
        assert fired
        done = server.request("POST", "/api/recall/runs/prune", {})
        assert done["jobs"][bounded["id"]] == 2
        assert runs_of(server, bounded["id"]) == []
    finally:
        server.stop()

    server = LiveServer(root, db, port=server.port).start()
    try:
        later = server.wait_for(
            lambda: [r for r in runs_of(server, steady["id"]) if r["status"] != "running"],
            timeout=60,
        )
        # The steady job goes on from its next occurrence: nothing it fired before comes again.
        assert not fired & {run["scheduled_for"] for run in later}
        job = server.request("GET", f"/api/recall/jobs/{bounded['id']}")
        assert (job["status"], job["run_count"]) == ("completed", 2)
        assert runs_of(server, bounded["id"]) == []
    finally:
        server.stop()
