"""`jupyter recall logs RUN --follow`: stored output first, then live output, each line once."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

from tests.cli.conftest import JUPYTER, cli_env
from tests.server.live_server import TOKEN, LiveServer

LINES = 6


def ticking(go: Path) -> str:
    """Prints a first line, waits for the test's go-ahead, then prints a line every 0.3 s."""
    return (
        "import pathlib, time\n"
        "print('tick 0', flush=True)\n"
        "deadline = time.monotonic() + 60\n"
        f"while not pathlib.Path({str(go)!r}).exists() and time.monotonic() < deadline:\n"
        "    time.sleep(0.05)\n"
        f"for i in range(1, {LINES}):\n"
        "    print(f'tick {i}', flush=True)\n"
        "    time.sleep(0.3)\n"
    )


def test_follow_streams_a_headless_run_live(cli, server, tmp_path):
    go = tmp_path / "go"
    added = cli("add", "now", ticking(go), "--headless", "--name", "ticker", "--json")
    assert added.code == 0, added.err
    job_id = added.json()["id"]

    def started_run():
        runs = server.job_runs(job_id)
        return runs and "tick 0" in runs[0]["output"] and runs[0]

    # The run's first line is already stored when following starts: printed once, first.
    run = server.wait_for(started_run, timeout=60, interval=0.05)
    assert run["status"] == "running"
    follow = subprocess.Popen(
        [JUPYTER, "recall", "logs", run["id"], "--follow"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(server.runtime),
    )
    assert follow.stdout is not None
    assert follow.stderr is not None
    try:
        first = follow.stdout.readline()
        released = time.monotonic()
        go.touch()
        arrivals = [(time.monotonic(), line) for line in follow.stdout]
        code = follow.wait(30)
        err = follow.stderr.read()
    finally:
        follow.stdout.close()
        follow.stderr.close()
        if follow.poll() is None:
            follow.kill()
            follow.wait()

    assert code == 0, err
    lines = [first] + [line for _, line in arrivals]
    assert lines == [f"tick {i}\n" for i in range(LINES)]
    # Live: the later lines came one by one as the run printed them, after the go-ahead.
    assert arrivals[0][0] > released
    assert arrivals[-1][0] - arrivals[0][0] > 0.9
    assert f"run {run['id']} succeeded" in err
    final = server.request("GET", f"/api/recall/runs/{run['id']}")
    assert final["status"] == "succeeded"
    assert final["output"] == "".join(lines)


def test_follow_as_json_lines(app, server):
    job = server.request(
        "POST",
        "/api/recall/jobs",
        {"when": "in 1h", "action": {"type": "notification", "message": "json please"}},
    )
    run = server.request("POST", f"/api/recall/jobs/{job['id']}/trigger")
    server.wait_for(
        lambda: server.request("GET", f"/api/recall/runs/{run['id']}")["status"] != "running"
    )
    result = app("logs", run["id"], "--follow", "--json")
    assert result.code == 0, result.err
    lines = [json.loads(line) for line in result.out.splitlines()]
    assert lines[0]["type"] == "output"
    assert "json please" in lines[0]["text"]
    assert lines[-1]["type"] == "finished"
    assert lines[-1]["run"]["status"] == "succeeded"


def test_follow_waits_for_a_server_that_restarts(tmp_path):
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    root = tmp_path / "root"
    root.mkdir()
    env = {"JUPYTER_RUNTIME_DIR": str(runtime)}
    first = LiveServer(root, tmp_path / "recall.sqlite", env=env)
    second = LiveServer(root, tmp_path / "recall.sqlite", port=first.port, env=env)
    first.start()
    follow = None
    try:
        code = "import time\nprint('started', flush=True)\ntime.sleep(300)\n"
        body = {
            "when": "now",
            "action": {"type": "code", "code": code},
            "target": {"type": "headless"},
        }
        job = first.request("POST", "/api/recall/jobs", body)

        def started_run():
            runs = first.request("GET", f"/api/recall/jobs/{job['id']}/runs")["runs"]
            return runs and "started" in runs[0]["output"] and runs[0]

        run = first.wait_for(started_run, timeout=60, interval=0.1)
        follow = subprocess.Popen(
            [
                JUPYTER,
                "recall",
                "logs",
                run["id"],
                "--follow",
                "--url",
                first.url,
                "--token",
                TOKEN,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=cli_env(runtime),
        )
        assert follow.stdout is not None
        assert follow.stdout.readline() == "started\n"
        # The server dies: the command keeps asking instead of giving up.
        first.stop(signal.SIGKILL)
        time.sleep(3)
        assert follow.poll() is None
        # The same server again: it interrupts its predecessor's run, and the command ends.
        second.start()
        _, err = follow.communicate(timeout=60)
    finally:
        if follow is not None and follow.poll() is None:
            follow.kill()
            follow.wait()
        for server in (first, second):
            if server.process is not None:
                server.stop(signal.SIGKILL)
    assert follow.returncode == 1, err
    assert f"run {run['id']} interrupted" in err
    assert "Traceback" not in err
