"""Every subcommand against a real server, through the real `jupyter recall` command (and the
application in-process where a subprocess would only add start-up time)."""

from __future__ import annotations

import re
import time
from datetime import datetime, timedelta, timezone

import pytest

from jupyter_recall.cli.render import local_instant, run_status
from tests.cli.conftest import CliServer

NOTE = {"when": "every day at 09:00", "action": {"type": "notification", "message": "stand up"}}


def new_job(server: CliServer, **fields: object) -> dict:
    return dict(server.request("POST", "/api/recall/jobs", {**NOTE, **fields}))


def test_add_then_list_and_show_as_tables_and_json(cli, server):
    added = cli("add", "in 1h", "print('hi')", "--name", "greeting", "--json")
    assert added.code == 0, added.err
    job = added.json()
    assert (job["name"], job["action"], job["target"]) == (
        "greeting",
        {"type": "code", "code": "print('hi')"},
        {"type": "headless"},  # the server's default kernel spec
    )
    assert server.request("GET", f"/api/recall/jobs/{job['id']}")["status"] == "active"

    listed = cli("list", "--json")
    assert listed.code == 0, listed.err
    assert job["id"] in [j["id"] for j in listed.json()["jobs"]]

    table = cli("list")
    header, rule, *rows = table.out.splitlines()
    assert header.split() == ["id", "name", "schedule", "status", "next", "fire", "last"]
    assert set(rule.replace(" ", "")) == {"-"}
    row = next(line for line in rows if line.startswith(job["id"]))
    assert "greeting" in row
    assert "once at" in row  # the schedule in words
    assert " active " in row
    # Columns line up: every cell starts where its header does.
    assert row.index("greeting") == header.index("name")
    assert row.index("active") == header.index("status")

    shown = cli("show", job["id"])
    assert shown.code == 0, shown.err
    assert f"id         {job['id']}" in shown.out
    # No kernel spec named: the server chooses its default when it runs (not a guessed name).
    assert "target     headless (default kernel spec)" in shown.out
    assert "action     code: print('hi')" in shown.out
    # The schedule in words carries its zone once; instants in this machine's zone + a hint.
    assert "(UTC) (UTC)" not in shown.out
    assert re.search(r"^schedule\s+once at \S+ \S+ \(UTC\)$", shown.out, re.M), shown.out
    assert re.search(r"^time zone\s+UTC$", shown.out, re.M), shown.out
    at = r"(\d{4}-\d\d-\d\d \d\d:\d\d|\d\d:\d\d:\d\d) \S+"  # the date unless it is today
    assert re.search(rf"^next fire\s+{at} \(in 59 min\)$", shown.out, re.M), shown.out
    assert re.search(rf"^created\s+{at} \((\d+ s ago|now)\)$", shown.out, re.M), shown.out
    assert cli("show", job["id"], "--json").json() == server.request(
        "GET", f"/api/recall/jobs/{job['id']}"
    )


def test_add_targets(app, server):
    notify = app("add", "in 2h", "--notify", "stretch", "--json")
    assert notify.code == 0, notify.err
    assert notify.json()["action"] == {"type": "notification", "message": "stretch"}
    assert notify.json()["target"] == {"type": "server"}

    notebook = app("add", "every monday at 08:00", "refresh()", "--notebook", "a/b.ipynb", "--json")
    assert notebook.json()["target"] == {"type": "kernel", "path": "a/b.ipynb"}
    assert notebook.json()["description"] == "every Monday at 08:00 (UTC)"

    zoned = app("add", "every day at 09:00", "x = 1", "--headless", "--tz", "Asia/Tokyo", "--json")
    assert zoned.json()["tz"] == "Asia/Tokyo"
    assert zoned.json()["next_fire_at"].endswith("T00:00:00+00:00")


def test_add_kernel_policy(app):
    started = app(
        "add", "in 1h", "x = 1", "--notebook", "n.ipynb", "--on-missing-kernel", "start", "--json"
    )
    assert started.code == 0, started.err
    assert started.json()["options"] == {"on_missing_kernel": "start"}
    bad = app("add", "in 1h", "x", "--notebook", "n.ipynb", "--on-missing-kernel", "wait")
    assert bad.code == 2
    assert "options.on_missing_kernel: unknown policy 'wait'" in bad.err
    assert "start, skip, fail" in bad.err


def test_add_time_limit(app):
    limited = app("add", "in 1h", "x = 1", "--timeout", "90", "--json")
    assert limited.code == 0, limited.err
    assert limited.json()["policies"]["timeout"] == 90
    bad = app("add", "in 1h", "x = 1", "--timeout", "0")
    assert bad.code == 2
    assert "policies.timeout" in bad.err
    assert "above 0" in bad.err


def test_add_retries(app):
    retried = app("add", "in 1h", "x = 1", "--retries", "2", "--retry-backoff", "5", "--json")
    assert retried.code == 0, retried.err
    assert retried.json()["policies"]["retries"] == {
        "max": 2,
        "backoff": 5.0,
        "factor": 2.0,
        "jitter": 0.0,
        "on": ["failed", "timed_out", "interrupted"],
    }
    too_many = app("add", "in 1h", "x = 1", "--retries", "1000")
    assert too_many.code == 2
    assert "policies.retries.max" in too_many.err
    alone = app("add", "in 1h", "x = 1", "--retry-backoff", "5")
    assert alone.code == 2
    assert "--retry-backoff needs --retries" in alone.err
    # No wait before a retry, as REST's {"backoff": 0} and the %schedule magic.
    at_once = app("add", "in 1h", "x = 1", "--retries", "1", "--retry-backoff", "0", "--json")
    assert at_once.code == 0, at_once.err
    assert at_once.json()["policies"]["retries"]["backoff"] == 0
    negative = app("add", "in 1h", "x = 1", "--retries", "1", "--retry-backoff=-1")
    assert negative.code == 2
    assert "policies.retries.backoff" in negative.err


def test_a_run_shows_its_attempt_and_pending_retry():
    at = "2030-01-01T12:00:00+00:00"
    assert run_status({"status": "failed", "attempt": 1, "retry_at": None}) == "failed"
    assert run_status({"status": "succeeded", "attempt": 3, "retry_at": None}) == (
        "succeeded (attempt 3)"
    )
    assert run_status({"status": "failed", "attempt": 2, "retry_at": at}) == (
        f"failed (attempt 2), retry at {local_instant(at)}"
    )


def test_help_shows_usage_and_options(cli):
    shown = cli("add", "--help")
    assert shown.code == 0
    assert shown.out.startswith("Usage: jupyter recall add WHEN ACTION | WHEN --notify MESSAGE")
    for option in ("--notebook", "--notify", "--headless", "--name", "--tz", "--url", "--json"):
        assert f"\n{option}" in shown.out


def test_add_reads_code_from_stdin(cli):
    added = cli("add", "in 1h", "-", "--json", stdin="import os\nprint(os.getpid())\n")
    assert added.code == 0, added.err
    assert added.json()["action"]["code"] == "import os\nprint(os.getpid())\n"


def test_unparseable_when_names_the_field_and_the_accepted_forms(cli):
    bad = cli("add", "every blue moon", "print(1)")
    assert bad.code == 2
    assert bad.out == ""
    assert "when: cannot parse 'every blue moon'" in bad.err
    assert "Accepted forms:" in bad.err
    assert "'every day at 09:00'" in bad.err


def test_bad_zone_and_bad_filter_name_the_field_and_the_accepted_values(app):
    zone = app("add", "in 1h", "x", "--tz", "Mars/Olympus")
    assert zone.code == 2
    assert "tz: unknown time zone: 'Mars/Olympus'" in zone.err
    assert "Europe/Paris" in zone.err
    status = app("list", "--status", "sleeping")
    assert status.code == 2
    assert "status: unknown value 'sleeping'" in status.err
    assert "active, paused, completed, failed, cancelled" in status.err


def test_usage_errors(app):
    missing = app("add", "in 1h")
    assert missing.code == 2
    assert "usage: jupyter recall add WHEN ACTION | WHEN --notify MESSAGE" in missing.err
    both = app("add", "in 1h", "print(1)", "--notify", "hello")
    assert both.code == 2
    assert "--notify" in both.err
    targets = app("add", "in 1h", "x", "--headless", "--notebook", "a.ipynb")
    assert targets.code == 2
    assert "--notebook and --headless" in targets.err
    assert app("show").code == 2
    assert app("logs").code == 2


def test_no_subcommand_lists_them(cli):
    bare = cli()
    assert bare.code == 2
    assert "list, show, add, cancel, pause, resume, skip, trigger, delete, stop, runs" in bare.err


def test_list_filters(app, server):
    recall_path = "filters.ipynb"
    active = new_job(server, name="filter-active", target={"type": "server"})
    paused = new_job(server, name="filter-paused")
    server.request("POST", f"/api/recall/jobs/{paused['id']}/pause")
    ended = new_job(server, name="filter-ended")
    server.request("POST", f"/api/recall/jobs/{ended['id']}/cancel")
    recall = new_job(
        server,
        kind="recall",
        action={"type": "instruction", "instruction": "look again"},
        target={"type": "kernel", "path": recall_path},
    )

    def ids(*args: str) -> set[str]:
        result = app("list", "--json", *args)
        assert result.code == 0, result.err
        return {job["id"] for job in result.json()["jobs"]}

    default = ids()
    assert {active["id"], paused["id"], recall["id"]} <= default
    assert ended["id"] not in default
    assert ended["id"] in ids("--all")
    assert ids("--status", "cancelled") >= {ended["id"]}
    assert active["id"] not in ids("--status", "cancelled")
    assert ids("--status", "paused,cancelled") >= {paused["id"], ended["id"]}
    assert ids("--kind", "recall") == {recall["id"]}
    in_kernel = new_job(
        server, action={"type": "code", "code": "1"}, target={"type": "kernel", "path": recall_path}
    )
    assert ids("--path", recall_path) == {recall["id"], in_kernel["id"]}
    assert ids("--path", recall_path, "--kind", "job") == {in_kernel["id"]}
    table = app("list", "--all", "--kind", "recall")
    rows = table.out.splitlines()[2:]
    assert [row.split()[0] for row in rows] == [recall["id"]]
    assert app("list", "--path", "no-such.ipynb").out == "no jobs\n"


def test_a_one_shot_passed_while_paused_is_told_this_commands_catch_up(app, server):
    job = new_job(server, name="late", when="in 1s")
    assert app("pause", job["id"]).code == 0
    time.sleep(1.5)
    refused = app("resume", job["id"])
    assert refused.code != 0
    # The server's words are REST's: this command says its own flag.
    assert f"(jupyter recall resume --catch-up {job['id']})" in refused.err
    assert "catch_up=true" not in refused.err
    resumed = app("resume", "--catch-up", job["id"], "--json")
    assert resumed.code == 0, resumed.err
    assert resumed.json()["status"] == "active"


def test_job_actions(app, server):
    job = new_job(server, name="actions")
    paused = app("pause", job["id"])
    assert paused.code == 0, paused.err
    assert paused.out.startswith(f"job {job['id']} 'actions': paused, every day at 09:00 (UTC)")
    assert server.request("GET", f"/api/recall/jobs/{job['id']}")["status"] == "paused"

    resumed = app("resume", job["id"], "--json")
    assert resumed.json()["status"] == "active"

    before = server.request("GET", f"/api/recall/jobs/{job['id']}")["next_fire_at"]
    skipped = app("skip", job["id"], "--json")
    after = skipped.json()["next_fire_at"]
    assert datetime.fromisoformat(after) - datetime.fromisoformat(before) == timedelta(days=1)

    triggered = app("trigger", job["id"])
    assert triggered.code == 0, triggered.err
    run_id = triggered.out.split()[1]
    assert f"jupyter recall logs {run_id} --follow" in triggered.out
    assert server.request("GET", f"/api/recall/runs/{run_id}")["job_id"] == job["id"]

    cancelled = app("cancel", job["id"], "--json")
    assert cancelled.json()["status"] == "cancelled"
    assert cancelled.json()["next_fire_at"] is None


def test_actions_on_several_jobs_and_their_errors(app, server):
    first, second = new_job(server), new_job(server)
    both = app("pause", first["id"], second["id"])
    assert both.code == 0, both.err
    assert len(both.out.splitlines()) == 2
    missing = app("pause", "000000000000")
    assert missing.code == 1
    assert "job '000000000000' not found" in missing.err
    once = new_job(server, when="in 3h")
    clash = app("skip", once["id"])
    assert clash.code == 1
    assert "runs only once" in clash.err


def wait_finished(server: CliServer, run_id: str) -> dict:
    return server.wait_for(
        lambda: (
            (run := server.request("GET", f"/api/recall/runs/{run_id}"))["status"] != "running"
            and run
        )
    )


def test_runs_and_logs(app, server):
    job = new_job(server, name="logged", action={"type": "notification", "message": "ping 42"})
    run = server.request("POST", f"/api/recall/jobs/{job['id']}/trigger")
    finished = wait_finished(server, run["id"])
    assert "ping 42" in finished["output"]

    runs = app("runs", "--since", "10m", "--json")
    assert run["id"] in [r["id"] for r in runs.json()["runs"]]
    future = (datetime.now(timezone.utc) + timedelta(hours=1)).isoformat()
    later = app("runs", "--since", future, "--json").json()["runs"]
    assert run["id"] not in [r["id"] for r in later]
    only = app("runs", "--job", job["id"], "--json").json()["runs"]
    assert [r["id"] for r in only] == [run["id"]]

    table = app("runs", "--job", job["id"])
    header, _, row = table.out.splitlines()
    assert header.split()[:4] == ["run", "job", "status", "trigger"]
    assert row.split()[:5] == [run["id"], job["id"], "logged", "succeeded", "manual"]

    logs = app("logs", run["id"])
    assert logs.code == 0
    assert logs.out == finished["output"]
    assert app("logs", run["id"], "--json").json() == finished

    followed = app("logs", run["id"], "--follow")
    assert followed.code == 0
    assert followed.out == finished["output"]
    assert f"run {run['id']} succeeded" in followed.err

    assert app("logs", "000000000000").code == 1


def test_runs_limit_keeps_the_newest(app, server):
    job = new_job(server, name="often", action={"type": "notification", "message": "again"})
    ids = []
    for _ in range(3):
        run = server.request("POST", f"/api/recall/jobs/{job['id']}/trigger")
        wait_finished(server, run["id"])
        ids.append(run["id"])
    newest = app("runs", "--job", job["id"], "--limit", "2", "--json").json()["runs"]
    assert [r["id"] for r in newest] == ids[:0:-1]
    every = app("runs", "--job", job["id"], "--limit", "0", "--json").json()["runs"]
    assert [r["id"] for r in every] == ids[::-1]


def test_runs_since_refuses_nonsense(app):
    bad = app("runs", "--since", "last tuesday")
    assert bad.code == 2
    assert "since: not an instant or a duration: 'last tuesday'" in bad.err


def test_follow_of_a_failed_run_exits_1(app, server):
    job = new_job(
        server,
        action={"type": "code", "code": "print(1)"},
        target={"type": "kernel", "path": "nobody-runs-this.ipynb"},
        options={"on_missing_kernel": "fail"},
    )
    run = server.request("POST", f"/api/recall/jobs/{job['id']}/trigger")
    wait_finished(server, run["id"])
    followed = app("logs", run["id"], "--follow")
    assert followed.code == 1
    assert f"run {run['id']} failed" in followed.err


def test_parse_through_the_server(cli):
    parsed = cli("parse", "every", "weekday", "at", "08:30", "--tz", "Europe/Paris", "--json")
    assert parsed.code == 0, parsed.err
    result = parsed.json()
    assert (result["kind"], result["canonical"]) == ("cron", "30 8 * * 1-5")
    assert result["offline"] is False
    times = [datetime.fromisoformat(t) for t in result["next_fire_times"]]
    assert len(times) == 5
    assert all(t.weekday() < 5 for t in times)
    table = cli("parse", "every weekday at 08:30", "--tz", "Europe/Paris")
    assert "canonical  30 8 * * 1-5" in table.out
    assert "in words   every weekday at 08:30 (Europe/Paris)" in table.out
    # CET or CEST, in the schedule's zone (seconds shown on the day of now), with the hint.
    assert len(re.findall(r" 08:30(?::00)? CES?T \(in \d", table.out)) == 5, table.out
    assert table.err == ""


@pytest.mark.parametrize("flag", ["--offline", None])
def test_parse_without_a_server(tmp_path, flag):
    from tests.cli.conftest import jupyter_recall

    args = ["parse", "every 15 minutes", "--json", "--tz", "UTC"] + ([flag] if flag else [])
    parsed = jupyter_recall(*args, runtime=tmp_path)
    assert parsed.code == 0, parsed.err
    result = parsed.json()
    assert (result["canonical"], result["offline"]) == ("every 15m", True)
    assert len(result["next_fire_times"]) == 5
    if flag is None:
        assert "no Jupyter server with jupyter_recall is reachable" in parsed.err
        assert "parsed here, in the zone UTC" in parsed.err
    bad = jupyter_recall("parse", "every blue moon", "--offline", runtime=tmp_path)
    assert bad.code == 2
    assert "Accepted forms:" in bad.err
