"""``jupyter recall add --after ID[:on]``: a job fired by another job's outcome, against a real
server; bad values are refused naming the field."""

from __future__ import annotations

from tests.cli.conftest import CliServer

UPSTREAM = {"when": "every day at 09:00", "action": {"type": "notification", "message": "build"}}


def upstream(server: CliServer) -> str:
    return str(server.request("POST", "/api/recall/jobs", UPSTREAM)["id"])


def test_add_after_another_job(app, server):
    first = upstream(server)
    added = app("add", "--after", first, "print('publish')", "--json")
    assert added.code == 0, added.err
    job = added.json()
    assert job["after"] == {"job": first, "on": "succeeded"}
    assert job["description"] == f"after {first} succeeds"
    assert job["next_fire_at"] is None

    notify = app("add", "--after", f"{first}:failed", "--notify", "the build failed", "--json")
    assert notify.code == 0, notify.err
    assert notify.json()["after"] == {"job": first, "on": "failed"}
    assert notify.json()["when"] == f"after {first} fails"

    listed = app("list")
    assert listed.code == 0, listed.err
    row = next(line for line in listed.out.splitlines() if line.startswith(job["id"]))
    assert f"after {first} succeeds" in row


def test_bad_after_values_name_the_field(app, server):
    first = upstream(server)
    soon = app("add", "--after", f"{first}:soon", "x = 1")
    assert soon.code == 2
    assert "after.on" in soon.err
    assert "succeeded, failed, finished" in soon.err
    unknown = app("add", "--after", "000000000000", "x = 1")
    assert unknown.code == 2
    assert "after.job" in unknown.err
    both = app("add", "in 1h", "x = 1", "--after", first)
    assert both.code == 2
