"""The Python API in a real kernel: schedule/recall/jobs/job, the Job handle, domain errors."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.server.live_server import free_port

ERRORS = """
def error_of(call):
    try:
        call()
    except jupyter_recall.RecallError as error:
        return {"type": type(error).__name__, "message": str(error),
                "field": getattr(error, "field", None),
                "accepted": list(getattr(error, "accepted", ()))}
    return None
"""


def test_schedule_and_the_job_handle(nb, server):
    info = nb.json(
        "job = jupyter_recall.schedule('every 1h', \"print('api')\", name='api job', max_runs=5,"
        " timeout=30, retries=2)\n"
        "print(json.dumps([job.id, job.name, job['status'], job.policies['max_runs'],"
        " isinstance(job, jupyter_recall.Job), sorted(dict(job))[:3], job.policies['timeout'],"
        " job.policies['retries']['max']]))"
    )
    ident, name, status, max_runs, is_job, keys, limit, retries = info
    assert (name, status, max_runs, is_job, limit, retries) == ("api job", "active", 5, True, 30, 2)
    assert keys == sorted(server.job(ident))[:3]
    assert server.job(ident)["target"] == {"type": "kernel", "path": nb.path}

    assert nb.json("print(json.dumps(job.pause().status))") == "paused"
    assert nb.json("print(json.dumps(job.resume().status))") == "active"
    before = server.job(ident)["next_fire_at"]
    assert nb.json("print(json.dumps(job.skip().next_fire_at))") > before
    run = nb.json("print(json.dumps(job.run_now()))")
    assert run["trigger"] == "manual"
    server.wait_for(lambda: any(r["output"] == "api\n" for r in server.runs(ident)))
    runs = nb.json("print(json.dumps(job.runs()))")
    assert {r["status"] for r in runs} >= {"skipped", "succeeded"}
    assert nb.json("print(json.dumps(job.refresh().last_run_id))") == run["id"]
    assert nb.json("print(json.dumps([j.id for j in jupyter_recall.jobs()]))") == [ident]
    assert nb.json(f"print(json.dumps(jupyter_recall.job({ident!r}).name))") == "api job"
    assert nb.json("print(json.dumps(job.cancel().status))") == "cancelled"
    nb.ok("job.delete()")
    assert server.jobs() == []


def test_cancelling_an_ended_job_leaves_it_as_it_is(nb, server):
    nb.ok("done = jupyter_recall.schedule('now', 'print(1)')")
    server.finished_runs(nb.json("print(json.dumps(done.id))"))
    server.wait_for(lambda: server.jobs()[0]["status"] == "completed")
    assert nb.json("print(json.dumps(done.cancel().status))") == "completed"


def test_other_actions_and_targets(nb, server):
    nb.ok(
        "jupyter_recall.schedule('in 1h', tool='http.get', params={'url': 'https://example.org'})\n"
        "jupyter_recall.schedule('in 1h', notification='stand-up', title='Reminder')\n"
        "jupyter_recall.schedule('in 1h', 'print(1)', target='headless', exclusive=False)\n"
        "jupyter_recall.schedule('in 1h', notebook='report.ipynb', target='headless')\n"
        "import datetime\n"
        "end = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=3)\n"
        "jupyter_recall.schedule('every day at 09:00', instruction='daily review', end_at=end)\n"
    )
    jobs = {job["action"]["type"]: job for job in server.jobs()}
    assert jobs["tool"]["target"] == {"type": "server"}
    assert jobs["tool"]["action"]["params"] == {"url": "https://example.org"}
    assert jobs["notification"]["action"]["title"] == "Reminder"
    # No kernel spec named: the server's default for code, the notebook's own for a notebook,
    # chosen when it runs.
    assert jobs["code"]["target"] == {"type": "headless"}
    assert jobs["notebook"]["target"] == {"type": "headless"}
    assert jobs["instruction"]["kind"] == "job"
    assert jobs["instruction"]["policies"]["end_at"] is not None
    assert {job["session"] for job in server.jobs()} == {nb.path}


@pytest.mark.parametrize(
    ("call", "field", "words"),
    [
        (
            "schedule('in 1h', 'x', title='T')",
            "title",
            "only with notification=...; this job's action is code=...",
        ),
        ("schedule('in 1h', 'x', params={'a': 1})", "params", "only with tool=..."),
        ("schedule('in 1h', 'x', parameters={'a': 1})", "parameters", "only with notebook=..."),
        ("schedule('in 1h', tool='http.get', title='T')", "title", "action is tool=..."),
        (
            "schedule('in 1h', 'x', target='kernel', kernel_name='python3')",
            "kernel_name",
            "only with target='headless' (a fresh kernel of that spec), not 'kernel'",
        ),
        (
            "schedule('in 1h', 'x', target={'type': 'headless'}, kernel_name='python3')",
            "kernel_name",
            "put it in the target dict",
        ),
        ("recall('in 1h', 'do', target='gpu')", "target", "unknown target 'gpu'"),
    ],
)
def test_an_argument_that_would_be_dropped_is_refused_by_name(nb, server, call, field, words):
    nb.ok(ERRORS)
    error = nb.json(f"print(json.dumps(error_of(lambda: jupyter_recall.{call})))")
    assert (error["type"], error["field"]) == ("ValidationError", field), error
    assert words in error["message"]
    assert server.jobs() == []


def test_a_recall_takes_its_target_by_name_as_schedule_does(nb, server):
    nb.ok("jupyter_recall.recall('in 1h', 'check', target='kernel')")
    (recall,) = server.jobs(kind="recall")
    assert recall["target"]["type"] == "kernel"


def test_the_status_of_a_job_reads_only_its_latest_runs(nb, server):
    # %schedule status and the agent's schedule_status show five runs: they ask for five, not
    # every run with its output.
    nb.ok(
        "from jupyter_recall.kernel.connection import client as _c\n"
        "_asked = []\n"
        "_request = _c.Client.request\n"
        "def _recording(self, method, path, **given):\n"
        "    _asked.append((method, path, dict(given.get('query') or {})))\n"
        "    return _request(self, method, path, **given)\n"
        "_c.Client.request = _recording\n"
        "job = jupyter_recall.schedule('in 1h', 'x')"
    )
    try:
        nb.ok("%schedule status {job.id}")
        nb.ok("jupyter_recall.agent.dispatch('schedule_status', {'job_id': job.id})")
        asked = nb.json("print(json.dumps([q for m, p, q in _asked if p.endswith('/runs')]))")
    finally:
        nb.ok("_c.Client.request = _request")
    assert asked == [{"limit": "5"}, {"limit": "5"}]


def test_domain_errors_keep_field_and_accepted(nb, server):
    nb.ok(ERRORS)
    parse = nb.json("print(json.dumps(error_of(lambda: jupyter_recall.schedule('whenever', 'x'))))")
    assert parse["type"] == "ParseError"
    assert parse["field"] == "when"
    assert any("every day at 09:00" in form for form in parse["accepted"])
    assert "Accepted forms:" in parse["message"]

    bad = nb.json(
        "print(json.dumps(error_of(lambda: jupyter_recall.schedule('in 5m', 'x', overlap='x'))))"
    )
    assert (bad["type"], bad["field"]) == ("ValidationError", "policies.overlap")
    assert bad["accepted"] == ["skip", "buffer_one", "allow"]

    unknown_policy = nb.json(
        "print(json.dumps(error_of(lambda: jupyter_recall.schedule('in 5m', 'x', colour=1))))"
    )
    assert unknown_policy["field"] == "policies.colour"

    two = nb.json("print(json.dumps(error_of(lambda: jupyter_recall.schedule('in 5m'))))")
    assert (two["field"], two["type"]) == ("action", "ValidationError")
    assert "give exactly one of code, instruction, tool, notification, notebook" in two["message"]

    target = nb.json(
        "print(json.dumps(error_of(lambda: jupyter_recall.schedule('in 5m', 'x', target='gpu'))))"
    )
    assert target["accepted"] == ["kernel", "headless", "server"]

    missing = nb.json("print(json.dumps(error_of(lambda: jupyter_recall.job('000000000000'))))")
    assert missing == {
        "type": "NotFoundError",
        "message": "job '000000000000' not found",
        "field": None,
        "accepted": [],
    }
    # A route word of the server where an id goes (/api/recall/jobs/counts) is no job either.
    reserved = nb.json("print(json.dumps(error_of(lambda: jupyter_recall.job('counts'))))")
    assert reserved == {**missing, "message": "job 'counts' not found"}
    nb.ok("first = jupyter_recall.recall('in 1h', 'check')")
    clash = nb.json("print(json.dumps(error_of(lambda: jupyter_recall.recall('in 2h', 'again'))))")
    assert clash["type"] == "PendingRecallExists"  # a ConflictError
    assert "already has a pending recall" in clash["message"]
    pending = server.jobs(kind="recall")[0]["id"]
    assert f"(jupyter_recall.job({pending!r}).cancel())" in clash["message"]
    assert nb.json(
        "try:\n    jupyter_recall.recall('in 2h', 'again')\n"
        "except jupyter_recall.ConflictError as e:\n"
        "    print(json.dumps([e.session, e.recall_id]))"
    ) == [nb.path, pending]
    assert server.jobs(kind="recall")[0]["action"]["instruction"] == "check"


def test_values_that_are_no_json_are_named(nb, server):
    # They raised a bare "TypeError: Object of type set is not JSON serializable".
    nb.ok(ERRORS)
    calls = (
        "jupyter_recall.schedule('in 1h', b'x')",
        "jupyter_recall.schedule('in 1h', tool='http.get', params={'url': {1, 2}})",
        "jupyter_recall.schedule('in 1h', 'x', options={'x': object()})",
        "jupyter_recall.schedule('in 1h', 'x', name=b'x')",
    )
    errors = nb.json(
        "print(json.dumps([error_of(lambda: eval(call)) for call in " + repr(list(calls)) + "]))"
    )
    json_kinds = "must be JSON (strings, numbers, booleans, null, lists and objects)"
    assert [(error["type"], error["field"], error["message"]) for error in errors] == [
        ("ValidationError", "code", "code: must be a string, got bytes"),
        ("ValidationError", "params.url", f"params.url: {json_kinds}, got set"),
        ("ValidationError", "options.x", f"options.x: {json_kinds}, got object"),
        ("ValidationError", "name", f"name: {json_kinds}, got bytes"),
    ]
    assert server.jobs() == []


def test_text_no_query_can_hold_is_named_by_its_argument(nb, server):
    # A NUL went to the server, whose refusal named its own query field ("q").
    nb.ok(ERRORS)
    calls = (
        "jupyter_recall.jobs(search='a\\x00b')",
        "jupyter_recall.jobs(session='nb\\x00.ipynb')",
        "__import__('jupyter_recall.kernel.jobs.api').kernel.jobs.api"
        ".pending_recall('nb\\x00.ipynb')",
        "jupyter_recall.jobs(all=True, search='\\ud800')",
    )
    errors = nb.json(
        "print(json.dumps([error_of(lambda: eval(call)) for call in " + repr(list(calls)) + "]))"
    )
    assert [(error["type"], error["field"]) for error in errors] == [
        ("ValidationError", "search"),
        ("ValidationError", "session"),
        ("ValidationError", "session"),
        ("ValidationError", "search"),
    ]
    assert "NUL" in errors[0]["message"]


def _ipython(script: str, tmp_path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "session.ipy"
    path.write_text(script)
    return subprocess.run(
        [sys.executable, "-m", "IPython", "--no-banner", "--quick", str(path)],
        capture_output=True,
        text=True,
        env={**env, "IPYTHONDIR": str(tmp_path)},
        timeout=60,
        check=False,
    )


def test_load_ext_without_a_server_fails_saying_why(tmp_path):
    env = {**os.environ, "JUPYTER_RECALL_URL": f"http://127.0.0.1:{free_port()}/"}
    # %load_ext fails its cell in one line (a notebook run by nbconvert stops there) ...
    out = _ipython("%load_ext jupyter_recall\nprint('not reached')\n", tmp_path, env)
    assert out.returncode != 0
    assert out.stderr.startswith(
        "UsageError: jupyter_recall: cannot reach the Jupyter server at http://127.0.0.1:"
    ), out.stderr
    assert "$JUPYTER_RECALL_URL" in out.stderr
    assert "not reached" not in out.stdout
    # ... and the magics stay registered, repeating the reason.
    script = (
        "try:\n    get_ipython().run_line_magic('load_ext', 'jupyter_recall')\n"
        "except Exception as error:\n    print('load:', type(error).__name__)\n"
        "%schedule in 5m: print(1)\n%jobs\n"
    )
    out = _ipython(script, tmp_path, env)
    assert "load: UsageError" in out.stdout
    lines = [line for line in out.stderr.splitlines() if "cannot reach the Jupyter server" in line]
    assert len(lines) == 2, out.stderr
    assert "Traceback" not in out.stderr + out.stdout
