"""`jupyter recall list` reads the server's listing pages: search, sort and --limit."""

from __future__ import annotations

from tests.cli.conftest import CliServer

NOTIFY = {"type": "notification", "message": "paged"}


def _jobs(server: CliServer, token: str, count: int) -> list[dict]:
    body = {
        "jobs": [
            {"when": f"in {count - n}h", "name": f"{token} {n}", "action": NOTIFY}
            for n in range(count)
        ]
    }
    return list(server.request("POST", "/api/recall/jobs", body)["jobs"])


def test_list_limit_search_and_sort_are_the_servers(app, server):
    made = _jobs(server, "pagedcli", 5)
    first = app("list", "--search", "PAGEDCLI", "--limit", "2", "--json")
    assert first.code == 0
    # One batch, one created_at: newest first, then by id (descending too).
    newest = sorted((job["created_at"], job["id"]) for job in made)[::-1][:2]
    assert [job["id"] for job in first.json()["jobs"]] == [ident for _, ident in newest]
    assert "--limit=0 lists all" in first.err
    every = app("list", "--search", "pagedcli", "--limit", "0", "--sort", "name", "--json")
    assert [job["name"] for job in every.json()["jobs"]] == [f"pagedcli {n}" for n in range(5)]
    assert every.err == ""
    soonest = app(
        "list", "--search", "pagedcli", "--sort", "next_fire_at", "--limit", "1", "--json"
    )
    assert [job["id"] for job in soonest.json()["jobs"]] == [made[-1]["id"]]


def test_list_refuses_an_unknown_sort_naming_it(app):
    bad = app("list", "--sort", "owner")
    assert bad.code == 2
    assert "sort" in bad.err
    assert "next_fire_at" in bad.err


def test_a_limit_equal_to_what_matches_says_nothing_more(app, server):
    _jobs(server, "exactlimit", 3)
    exact = app("list", "--search", "exactlimit", "--limit", "3", "--json")
    assert exact.code == 0
    assert len(exact.json()["jobs"]) == 3
    assert exact.err == ""  # the server's last page had no next_cursor
    fewer = app("list", "--search", "exactlimit", "--limit", "2", "--json")
    assert "(the first 2 jobs: --limit=0 lists all)" in fewer.err
    job_id = _jobs(server, "exactruns", 1)[0]["id"]
    for _ in range(2):
        server.request("POST", f"/api/recall/jobs/{job_id}/trigger")
    runs = app("runs", "--job", job_id, "--limit", "2")
    assert runs.code == 0, runs.err
    assert runs.err == ""
    assert "(the newest 1 runs" in app("runs", "--job", job_id, "--limit", "1").err
