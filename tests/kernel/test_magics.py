"""Each magic in a real kernel started by a real server, checked against the server's state."""

from __future__ import annotations

import pytest

from tests.kernel.conftest import wait_until


def only_job(server, **query):
    jobs = server.jobs(**query)
    assert len(jobs) == 1, jobs
    return jobs[0]


def test_load_ext_finds_the_server_without_configuration(nb, server):
    out = nb.ok("%schedule info")
    assert f"at {server.url}/" in out.stdout
    assert "runtime file" in out.stdout
    assert f"jpserver-{server.process.pid}.json" in out.stdout
    assert f"kernel {nb.kernel_id}, notebook {nb.path}, session {nb.path}" in out.stdout
    # JPY_SESSION_NAME is set by jupyter_server; we ask /api/sessions for the API path anyway.
    assert nb.json("import os, json; print(json.dumps(os.environ.get('JPY_SESSION_NAME')))")


def test_schedule_code_in_this_kernel(nb, server):
    out = nb.ok("%schedule in 1s: print('hello from', __session__); later = 42")
    job = only_job(server)
    # The live card says it all (no printed line repeats it); its text fallback names the job.
    (card,) = out.displays
    assert out.stdout == ""
    assert card["text/plain"].startswith(f"job {job['id']} ")
    assert job["target"] == {"type": "kernel", "path": nb.path}
    assert job["session"] == nb.path
    assert job["schedule_kind"] == "once"
    (run,) = server.finished_runs(job["id"])
    assert run["status"] == "succeeded"
    assert "hello from" in run["output"]
    # It ran in this very kernel: its variable is here.
    assert nb.json("print(json.dumps(later))") == 42


def test_cell_magic_body_is_the_code(nb, server):
    nb.ok("%%schedule every monday at 09:00\nx = {'a': 1}\nprint(x['a'])\n")
    job = only_job(server)
    assert job["action"] == {"type": "code", "code": "x = {'a': 1}\nprint(x['a'])\n"}
    assert job["canonical"] == "0 9 * * 1"
    assert job["schedule_kind"] == "cron"


def test_options(nb, server):
    nb.ok(
        "%schedule --headless --name 'nightly report' --max-runs 3 --tz Europe/Paris "
        "--timeout 30 every day at 09:00: print(1)"
    )
    job = only_job(server)
    assert job["target"] == {"type": "headless"}  # the server's default kernel spec
    assert job["name"] == "nightly report"
    assert job["policies"]["max_runs"] == 3
    assert job["policies"]["timeout"] == 30
    assert job["tz"] == "Europe/Paris"
    server.delete_all_jobs()
    nb.ok("%schedule --retries 2 --retry-backoff 5 in 1h: print(1)")
    assert only_job(server)["policies"]["retries"] == {
        "max": 2,
        "backoff": 5.0,
        "factor": 2.0,
        "jitter": 0.0,
        "on": ["failed", "timed_out", "interrupted"],
    }
    server.delete_all_jobs()
    # No wait before a retry, as REST's {"backoff": 0}.
    nb.ok("%schedule --retries 1 --retry-backoff 0 in 1h: print(1)")
    assert only_job(server)["policies"]["retries"]["backoff"] == 0
    server.delete_all_jobs()
    nb.ok("%schedule --exclusive --on-missing-kernel skip in 1h: print(2)")
    job = only_job(server)
    assert job["options"] == {"exclusive": True, "on_missing_kernel": "skip"}
    assert job["target"]["type"] == "kernel"
    server.delete_all_jobs()
    nb.ok("%schedule --kernel-name python3 in 1h: print(3)")
    assert only_job(server)["target"] == {"type": "headless", "kernel_name": "python3"}


def test_manage_by_id(nb, server):
    nb.ok("%schedule every 1h: print('tick')")
    job = only_job(server)
    ident = job["id"]

    out = nb.ok(f"%schedule pause {ident}")
    assert f"paused job {ident}: paused" in out.stdout
    assert server.job(ident)["status"] == "paused"

    out = nb.ok(f"%schedule resume {ident}")
    assert server.job(ident)["status"] == "active"

    before = server.job(ident)["next_fire_at"]
    out = nb.ok(f"%schedule skip {ident}")
    assert server.job(ident)["next_fire_at"] > before
    assert any(run["status"] == "skipped" for run in server.runs(ident))

    out = nb.ok(f"%schedule run {ident}")
    assert f"of job {ident} started" in out.stdout
    runs = wait_until(
        lambda: [
            r for r in server.runs(ident) if r["trigger"] == "manual" and r["status"] == "succeeded"
        ]
    )
    assert "tick" in runs[0]["output"]
    assert server.job(ident)["next_fire_at"] > before  # run-now does not move the schedule

    out = nb.ok(f"%schedule status {ident}")
    assert out.stdout.startswith(f"job {ident} ")
    assert "schedule: every hour [every 1h]" in out.stdout
    assert "| tick" in out.stdout

    out = nb.ok(f"%schedule cancel {ident}")
    assert f"cancelled job {ident}: cancelled, no run ahead" in out.stdout
    assert server.job(ident)["status"] == "cancelled"
    assert len(server.runs(ident)) == 2  # the history stays

    out = nb.ok(f"%schedule delete {ident}")
    assert f"deleted job {ident}" in out.stdout
    assert server.jobs() == []


def test_list_and_jobs_show_this_notebooks_jobs(nb, server):
    nb.ok("%schedule in 1h: print('mine')")
    mine = only_job(server)
    other = server.request(
        "POST",
        "/api/recall/jobs",
        {
            "when": "in 1h",
            "action": {"type": "notification", "message": "x"},
            "session": "other.ipynb",
        },
    )
    for magic in ("%jobs", "%schedule list"):
        out = nb.ok(magic)
        (bundle,) = out.displays
        assert mine["id"] in bundle["text/plain"]
        assert other["id"] not in bundle["text/plain"]
        assert "<table" in bundle["text/html"]
        assert f"<td>{mine['id']}</td>" in bundle["text/html"]
    out = nb.ok("%jobs --all")
    assert other["id"] in out.displays[0]["text/plain"]


def test_parse_error_shows_accepted_forms_and_schedules_nothing(nb, server):
    out = nb.ok("%schedule in thirty blorps: print(1)")
    assert "cannot parse 'in thirty blorps'" in out.stderr
    assert "Accepted forms:" in out.stderr
    assert "every day at 09:00" in out.stderr
    assert "Traceback" not in out.text
    assert server.jobs() == []


@pytest.mark.parametrize(
    ("magic", "words"),
    [
        ("%schedule in 5m print(1)", "missing ': ' after the time"),
        ("%schedule --bogus in 5m: print(1)", "--bogus: unknown option"),
        ("%schedule --tz Mars/Olympus in 5m: print(1)", "tz"),
        ("%schedule --retry-backoff 5 in 5m: print(1)", "--retry-backoff: needs --retries N"),
        ("%schedule --retries 500 in 5m: print(1)", "policies.retries.max"),
        # The server's bound (ten years), as for REST.
        (
            "%schedule --retries 1 --retry-backoff 400000000 in 5m: print(1)",
            "policies.retries.backoff",
        ),
        ("%schedule cancel", "needs a job id"),
        ("%schedule cancel 000000000000", "job '000000000000' not found"),
        ("%schedule status no/such", "not a job id"),
        # The server's route words beside an id are never ids it gave (client/ids.RESERVED).
        ("%schedule status counts", "job 'counts' not found"),
        ("%schedule delete counts", "job 'counts' not found"),
        ("%recall status counts", "job 'counts' not found"),
        ("%recall --headless in 5m: check", "unknown option"),
        ("%jobs everything", "accepted: --all"),
        # Unclosed quotes are named, in every magic.
        ("%schedule --name 'nightly in 1h: print(1)", "quote: unclosed ' in \"'nightly in 1h"),
        ('%recall --name "x in 1h: go', "quote: unclosed \" in '\"x in 1h: go'"),
        ("%watch filesystem.read path='a b", "quote: unclosed ' in \"'a b\""),
        ("%parallel filesystem.read path='a b", "No closing quotation"),
        # A watcher that is not found is called a watcher.
        ("%watch status nope", "watcher 'nope' not found"),
        ("%watch stop no/such", "watcher_id: not a watcher id: 'no/such'"),
    ],
)
def test_domain_errors_are_messages_not_tracebacks(nb, server, magic, words):
    out = nb.ok(magic)
    assert words in out.stderr
    assert "Traceback" not in out.text
    assert server.jobs() == []


def test_usage(nb):
    usage = nb.ok("%schedule").stdout
    assert "%schedule [options] <when>: <code>" in usage
    for flag in ("--timeout", "--retries", "--retry-backoff", "--pause-after-failures"):
        assert f"  {flag} " in usage, flag
    assert "--keep-runs N" in usage
    assert "--keep-runs-for AGE" in usage
    assert "no pending recall in session" in nb.ok("%recall").stdout
    # %schedule? (and %%recall?) show the magic's docstring: its usage, options included.
    shown = nb.json(
        "print(json.dumps([get_ipython().object_inspect_text(name)"
        " for name in ('%schedule', '%%recall', '%watch')]))"
    )
    assert "--keep-runs-for AGE" in shown[0], shown[0]
    assert "%%recall [options] <when>" in shown[1], shown[1]
    assert "--every SECONDS" in shown[2], shown[2]


def test_a_paused_job_says_it_does_not_fire(nb, server):
    nb.ok("%schedule every 1h: print('tick')")
    ident = only_job(server)["id"]
    paused = nb.ok(f"%schedule pause {ident}").stdout.strip()
    assert paused == f"paused job {ident}: paused, nothing fires until resumed"
    status = nb.ok(f"%schedule status {ident}").stdout
    assert "  status:   paused: does not fire" in status
    assert "next run" not in status
    (table,) = nb.ok("%schedule list").displays
    assert "paused: does not fire" in table["text/plain"]


def test_recall_once_and_the_one_pending_rule(nb, server):
    out = nb.ok("%recall in 30m: Read /tmp/build.log and report errors")
    recall = only_job(server, kind="recall")
    assert out.stdout == ""
    assert out.displays[0]["text/plain"].startswith(f"recall {recall['id']} ")
    assert recall["action"] == {
        "type": "instruction",
        "instruction": "Read /tmp/build.log and report errors",
    }
    assert recall["session"] == nb.path
    assert recall["target"] == {"type": "kernel", "path": nb.path}

    second = nb.ok("%recall in 1h: something else")
    assert f"already has a pending recall {recall['id']}" in second.stderr
    assert f"%recall cancel {recall['id']}" in second.stderr
    assert "manage_recall" not in second.stderr  # the agent's tool, not this surface's
    assert "Traceback" not in second.text
    assert len(server.jobs(kind="recall")) == 1

    shown = nb.ok("%recall").stdout
    assert f"pending recall {recall['id']}" in shown
    assert "Read /tmp/build.log" in shown
    listed = nb.ok("%recall list").displays[0]["text/plain"]
    assert recall["id"] in listed

    assert f"cancelled recall {recall['id']}" in nb.ok("%recall cancel").stdout
    cancelled = server.job(recall["id"])
    assert (cancelled["status"], cancelled["pending"]) == ("cancelled", False)
    assert "no pending recall" in nb.ok("%recall cancel").stderr
    # Cancelled, it no longer blocks a new one.
    nb.ok("%recall in 1h: the next one")
    assert len(server.jobs(kind="recall", status="active")) == 1


def test_recurring_recall_skip_and_cell_form(nb, server):
    nb.ok(
        "%%recall --name poller every 1h\n"
        "Poll https://example.org/status;\nif it changed, summarise.\n"
    )
    recall = only_job(server, kind="recall")
    assert recall["name"] == "poller"
    assert recall["action"]["instruction"].startswith("Poll https://example.org/status;")
    assert recall["schedule_kind"] == "interval"
    out = nb.ok("%recall skip")
    assert f"skipped the next occurrence of recall {recall['id']}" in out.stdout
    assert server.job(recall["id"])["next_fire_at"] > recall["next_fire_at"]
    out = nb.ok("%recall status")
    assert f"job {recall['id']}" in out.stdout
    # A one-shot cannot be skipped: the server says to cancel it instead.
    server.delete_all_jobs()
    nb.ok("%recall in 1h: later")
    assert "cancel it instead" in nb.ok("%recall skip").stderr


def test_lifecycle_options(nb, server):
    nb.ok(
        "%schedule --pause-after-failures 3 --keep-runs 10 --keep-runs-for 7d "
        "every day at 09:00: print(1)"
    )
    policies = only_job(server)["policies"]
    assert (policies["pause_after_failures"], policies["keep_runs"]) == (3, 10)
    assert policies["keep_runs_for"] == 7 * 86400
    server.delete_all_jobs()
    refused = nb.ok("%schedule --keep-runs-for 2months every day at 09:00: print(1)")
    # Named as typed, not as the field it fills.
    assert refused.stderr.startswith("--keep-runs-for: months and years have no fixed length")
    assert "Traceback" not in refused.text
    assert server.jobs() == []
