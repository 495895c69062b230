"""`delete` (asks on a terminal, --yes, refused without it when stdin is no terminal), `stop`
of a running run, ids that cannot be ids refused before any request, `runs --job` of a job
that is not there, and which server was asked when a job is not found."""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import urllib.error

import pytest

from tests.cli.conftest import JUPYTER, CliServer, cli_env, jupyter_recall
from tests.cli.test_bad_input import one_error_line

NOTE = {"when": "every day at 09:00", "action": {"type": "notification", "message": "del"}}


def new_job(server: CliServer, name: str = "") -> str:
    body = {**NOTE, **({"name": name} if name else {})}
    return str(server.request("POST", "/api/recall/jobs", body)["id"])


def exists(server: CliServer, job_id: str) -> bool:
    try:
        server.request("GET", f"/api/recall/jobs/{job_id}")
    except urllib.error.HTTPError as error:
        error.close()
        code = error.code
    else:
        return True
    assert code == 404
    return False


def test_delete_with_yes(cli, server):
    first, second = new_job(server, "gone"), new_job(server)
    done = cli("delete", first, second, "--yes")
    assert done.code == 0, done.err
    assert done.out.splitlines() == [f"deleted job {first} 'gone'", f"deleted job {second} 'del'"]
    assert not exists(server, first)
    assert not exists(server, second)
    again = cli("delete", first, "-y")
    assert again.code == 1
    assert one_error_line(again.err).startswith(f"jupyter recall delete: error: {first}: job ")


def test_delete_without_yes_and_no_terminal_is_refused(cli, server):
    job = new_job(server)
    done = cli("delete", job, stdin="y\n")
    assert done.code == 2
    assert "give --yes to delete without asking" in one_error_line(done.err)
    assert exists(server, job)


def on_a_terminal(server: CliServer, *args: str, answer: bytes) -> tuple[int, str, str]:
    """`jupyter recall ARGS` with a terminal as stdin, answering ``answer`` to its question."""
    primary, secondary = pty.openpty()
    try:
        with subprocess.Popen(
            [JUPYTER, "recall", *args],
            stdin=secondary,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=cli_env(server.runtime),
        ) as child:
            os.write(primary, answer)
            out, err = child.communicate(timeout=60)
    finally:
        os.close(primary)
        os.close(secondary)
    return child.returncode, out.decode(), err.decode()


@pytest.mark.parametrize(("answer", "deleted"), [(b"n\n", False), (b"yes\n", True), (b"\n", False)])
def test_delete_asks_on_a_terminal(server, answer, deleted):
    job = new_job(server, "asked")
    code, out, err = on_a_terminal(server, "delete", job, answer=answer)
    assert code == 0, err
    assert f"delete job {job} 'asked'" in err
    assert "[y/N]" in err
    assert exists(server, job) is not deleted
    assert (f"deleted job {job}" in out) is deleted
    assert (f"kept job {job}" in err) is not deleted


def test_stop_a_running_run(cli, server):
    code = "import time\nprint('started', flush=True)\ntime.sleep(300)\n"
    body = {
        "when": "in 1h",
        "action": {"type": "code", "code": code},
        "target": {"type": "headless"},
    }
    job = server.request("POST", "/api/recall/jobs", body)
    run = server.request("POST", f"/api/recall/jobs/{job['id']}/trigger")

    def started():
        now = server.request("GET", f"/api/recall/runs/{run['id']}")
        return "started" in (now["output"] or "") and now

    server.wait_for(started, timeout=90, interval=0.2)
    done = cli("stop", run["id"])
    assert done.code == 0, done.err
    assert done.out.strip() == f"run {run['id']} of job {job['id']}: cancelled"
    assert server.request("GET", f"/api/recall/runs/{run['id']}")["status"] == "cancelled"
    ended = cli("stop", run["id"], "nosuchrun")
    assert ended.code == 1
    lines = ended.err.splitlines()
    assert lines[0].startswith(f"jupyter recall stop: error: {run['id']}: run ")
    assert "already ended" in lines[0]
    assert lines[1].startswith("jupyter recall stop: error: nosuchrun: run 'nosuchrun' not found")


def test_an_id_that_cannot_be_one_is_not_found_before_any_request(app):
    result = app("resume", "a/b", "x?y")
    assert result.code == 1
    assert result.err.splitlines() == [
        f"jupyter recall resume: error: {ident}: job {ident!r} not found (not a job id: ids "
        "are letters, digits, '-' and '_', up to 64)"
        for ident in ("a/b", "x?y")
    ]
    assert "route" not in result.err
    assert app("logs", "../x").err.startswith("jupyter recall logs: error: run '../x' not found")


def test_runs_of_a_job_that_is_not_there(app, server):
    result = app("runs", "--job", "nope")
    assert result.code == 1
    assert one_error_line(result.err) == "jupyter recall runs: error: job 'nope' not found"
    job = new_job(server)
    assert app("runs", "--job", job).code == 0


def test_not_found_names_the_server_asked_among_several(server, tmp_path):
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    (real,) = server.runtime.glob("jpserver-*.json")
    shutil.copy(real, runtime / real.name)
    # Another live process's file: two servers run (both this one, as it happens).
    other = json.loads(real.read_text())
    (runtime / f"jpserver-{os.getpid()}.json").write_text(json.dumps({**other, "pid": os.getpid()}))
    done = jupyter_recall("show", "nosuchjob", runtime=runtime)
    assert done.code == 1
    line = one_error_line(done.err)
    expected = "jupyter recall show: error: job 'nosuchjob' not found (asked the "
    assert line.startswith(expected), line
    assert f"server at {server.url.rstrip('/')}/" in line
    assert "2 Jupyter servers are running: --url asks another)" in line
    alone = jupyter_recall("show", "nosuchjob", runtime=server.runtime)
    assert one_error_line(alone.err) == "jupyter recall show: error: job 'nosuchjob' not found"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("delete", "counts", "--yes"), "delete: error: counts: job 'counts' not found"),
        (("show", "counts"), "show: error: job 'counts' not found"),
        (("pause", "counts"), "pause: error: counts: job 'counts' not found"),
        (("logs", "prune"), "logs: error: run 'prune' not found"),
        (("stop", "prune"), "stop: error: prune: run 'prune' not found"),
    ],
)
def test_a_route_word_where_an_id_goes_is_not_found(app, args, said):
    # /api/recall/jobs/counts and /api/recall/runs/prune are routes: sent as an id, they
    # answered the counts or 405 Method Not Allowed.
    result = app(*args)
    assert result.code == 1, (result.out, result.err)
    assert one_error_line(result.err) == f"jupyter recall {said}"
