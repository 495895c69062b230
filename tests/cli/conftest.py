"""A real `jupyter server` with the extension, and the real `jupyter recall` command.

The server writes its `jpserver-<pid>.json` into a runtime directory of its own; the command finds
it there exactly as it finds JupyterLab's, with no URL or token given. Most tests share one server
(package scope); each builds its own jobs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from jupyter_core.application import NoStart
from traitlets.config.application import Application

from jupyter_recall.cli import JupyterRecallApp, clear_instances
from jupyter_recall.client.remote import TOKEN_VARIABLE, URL_VARIABLE
from tests.server.live_server import LiveServer

BIN = Path(sys.executable).parent
JUPYTER = str(BIN / "jupyter")


class CliServer(LiveServer):
    runtime: Path

    def job_runs(self, job_id: str) -> list[dict[str, Any]]:
        return list(self.request("GET", f"/api/recall/jobs/{job_id}/runs")["runs"])


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


def cli_env(runtime: Path, **extra: str) -> dict[str, str]:
    """The environment of a user's shell: no recall variables unless given, our runtime dir."""
    env = {k: v for k, v in os.environ.items() if k not in (URL_VARIABLE, TOKEN_VARIABLE)}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["JUPYTER_RUNTIME_DIR"] = str(runtime)
    env.update(extra)
    return env


def jupyter_recall(*args: str, runtime: Path, stdin: str | None = None, **env: str) -> Result:
    """`jupyter recall ARGS...` as a user types it: jupyter finds `jupyter-recall` on PATH."""
    done = subprocess.run(
        [JUPYTER, "recall", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=cli_env(runtime, **env),
        timeout=60,
        check=False,
    )
    return Result(done.returncode, done.stdout, done.stderr)


@pytest.fixture(scope="package")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CliServer]:
    base = tmp_path_factory.mktemp("recall-cli")
    root = base / "root"
    root.mkdir()
    runtime = base / "runtime"
    runtime.mkdir()
    # Only the prunes the tests ask for: a background sweep (every minute by default) could
    # delete runs between a test's `prune --dry-run` and its `prune`.
    live = CliServer(
        root,
        base / "recall.sqlite",
        env={"JUPYTER_RUNTIME_DIR": str(runtime)},
        args=("--RecallApp.prune_interval=3600",),
    )
    live.runtime = runtime
    live.start()
    yield live
    live.stop()


@pytest.fixture
def cli(server: CliServer):
    """Run `jupyter recall ...` in a subprocess against the shared server."""

    def run(*args: str, stdin: str | None = None, **env: str) -> Result:
        return jupyter_recall(*args, runtime=server.runtime, stdin=stdin, **env)

    return run


@pytest.fixture
def app(server: CliServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """Run the application in this process (faster than a subprocess): same argv, same output."""
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(server.runtime))
    monkeypatch.delenv(URL_VARIABLE, raising=False)
    monkeypatch.delenv(TOKEN_VARIABLE, raising=False)

    def run(*args: str) -> Result:
        capsys.readouterr()
        code = 0
        try:
            application = JupyterRecallApp.instance()
            application.initialize(list(args))
            application.start()
        except SystemExit as stop:
            code = int(stop.code or 0)
        except NoStart:
            pass  # How JupyterApp.start ends after running a subcommand.
        finally:
            clear_instances()
            Application.clear_instance()
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run
