"""A real `jupyter server` with the extension, and real kernels it starts for notebooks.

The server gets a runtime directory of its own: its kernels (children of the server) find it
through `jpserver-<pid>.json` there, without any JUPYTER_RECALL_* variable, exactly as in
JupyterLab. Tests drive the kernels with a jupyter_client BlockingKernelClient (no browser).
"""

from __future__ import annotations

import json
import os
import queue
import time
import urllib.parse
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
import pytest
from jupyter_client.blocking import BlockingKernelClient

from tests.server.live_server import LiveServer

ELSEWHERE_KEPT = 2000
"""IOPub messages of other requests a kernel's ``run`` keeps for ``Kernel.iopub``."""

HEARTBEAT_PATIENCE = 10.0
"""Seconds a test's kernel client waits for a heartbeat before it calls the kernel dead."""

# Tests talk to the server; nothing in this process must pick up another one by accident.
for _name in ("JUPYTER_RECALL_URL", "JUPYTER_RECALL_TOKEN"):
    os.environ.pop(_name, None)


class KernelServer(LiveServer):
    runtime: Path

    def jobs(self, **query: str) -> list[dict[str, Any]]:
        suffix = "?" + urllib.parse.urlencode(query) if query else ""
        return list(self.request("GET", "/api/recall/jobs" + suffix)["jobs"])

    def job(self, job_id: str) -> dict[str, Any]:
        return dict(self.request("GET", f"/api/recall/jobs/{job_id}"))

    def runs(self, job_id: str) -> list[dict[str, Any]]:
        return list(self.request("GET", f"/api/recall/jobs/{job_id}/runs")["runs"])

    def finished_runs(self, job_id: str, count: int = 1, timeout: float = 30.0) -> list[Any]:
        def done() -> list[Any] | None:
            runs = [run for run in self.runs(job_id) if run["status"] != "running"]
            return runs if len(runs) >= count else None

        return list(self.wait_for(done, timeout=timeout))

    def delete_all_jobs(self) -> None:
        for job in self.jobs():
            self.request("DELETE", f"/api/recall/jobs/{job['id']}")


@dataclass
class Execution:
    stdout: str = ""
    stderr: str = ""
    displays: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None

    @property
    def text(self) -> str:
        return self.stdout + self.stderr

    def record(self, msg: dict[str, Any]) -> None:
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            if content["name"] == "stdout":
                self.stdout += content["text"]
            else:
                self.stderr += content["text"]
        elif kind in ("display_data", "execute_result"):
            self.displays.append(content["data"])
        elif kind == "error":
            self.error = "\n".join(content["traceback"])


class Kernel:
    """A notebook session on the server, driven like a frontend would, over ZMQ."""

    def __init__(self, server: KernelServer, path: str) -> None:
        self.server = server
        self.path = path
        nbformat.write(nbformat.v4.new_notebook(), server.root / path)
        session = server.request(
            "POST",
            "/api/sessions",
            {"path": path, "type": "notebook", "kernel": {"name": "python3"}},
        )
        self.session_id = session["id"]
        self.kernel_id = session["kernel"]["id"]
        connection_file = server.runtime / f"kernel-{self.kernel_id}.json"
        server.wait_for(connection_file.exists, timeout=30)
        self.client = BlockingKernelClient()
        self.client.load_connection_file(str(connection_file))
        # Without its manager a client judges the kernel alive by heartbeats, and one missed
        # in a second (a loaded machine) reads as a dead kernel: allow more.
        self.client.hb_channel.time_to_dead = HEARTBEAT_PATIENCE
        self.client.start_channels()
        self.client.wait_for_ready(timeout=60)
        self.elsewhere: deque[dict[str, Any]] = deque(maxlen=ELSEWHERE_KEPT)

    def run(self, code: str, timeout: float = 30.0) -> Execution:
        """Run a cell and wait for its end; what other requests published meanwhile (a
        background task's display, a widget's update from a listener thread) is kept in
        ``elsewhere`` for ``iopub``, not dropped as ``execute_interactive`` drops it."""
        result = Execution()
        msg_id = self.client.execute(code, store_history=False, allow_stdin=False)
        deadline = time.monotonic() + timeout
        while True:
            msg = self._next_iopub(deadline)
            if msg["parent_header"].get("msg_id") != msg_id:
                self.elsewhere.append(msg)
                continue
            result.record(msg)
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
        self._await_reply(msg_id, deadline)
        return result

    def _await_reply(self, msg_id: str, deadline: float) -> None:
        while True:
            try:
                reply = self.client.get_shell_msg(timeout=max(deadline - time.monotonic(), 1.0))
            except queue.Empty:
                raise TimeoutError("no reply from the kernel in time") from None
            if reply["parent_header"].get("msg_id") == msg_id:
                return
            # Else the reply to a request sent without waiting, left unread by its sender.

    def _next_iopub(self, deadline: float) -> dict[str, Any]:
        try:
            return dict(self.client.get_iopub_msg(timeout=max(deadline - time.monotonic(), 0)))
        except queue.Empty:
            raise TimeoutError("no output from the kernel in time") from None

    def iopub(self, timeout: float) -> dict[str, Any]:
        """The next IOPub message: first those a ``run`` set aside, then the kernel's."""
        if self.elsewhere:
            return self.elsewhere.popleft()
        return dict(self.client.get_iopub_msg(timeout=timeout))

    def ok(self, code: str, timeout: float = 30.0) -> Execution:
        result = self.run(code, timeout)
        assert result.error is None, result.error
        return result

    def json(self, code: str, timeout: float = 30.0) -> Any:
        """Run code whose last stdout line is JSON; that value."""
        result = self.ok(code, timeout)
        lines = [line for line in result.stdout.splitlines() if line.strip()]
        assert lines, f"no output; stderr: {result.stderr}"
        return json.loads(lines[-1])

    def close(self) -> None:
        self.client.stop_channels()
        self.server.request("DELETE", f"/api/sessions/{self.session_id}")


@pytest.fixture(scope="package")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelServer]:
    base = tmp_path_factory.mktemp("recall-kernel")
    root = base / "root"
    root.mkdir()
    runtime = base / "runtime"
    runtime.mkdir()
    live = KernelServer(root, base / "recall.sqlite", env={"JUPYTER_RUNTIME_DIR": str(runtime)})
    live.runtime = runtime
    live.start()
    yield live
    live.stop()


@pytest.fixture(scope="module")
def notebook(server: KernelServer, request: pytest.FixtureRequest) -> Iterator[Kernel]:
    """One notebook kernel with the extension loaded, shared by a module's tests."""
    kernel = Kernel(server, f"{request.module.__name__.rsplit('.', 1)[-1]}.ipynb")
    kernel.ok(
        "%load_ext jupyter_recall\nimport jupyter_recall, json\n"
        "import jupyter_recall.kernel.jobs.recall"
    )
    yield kernel
    kernel.close()


@pytest.fixture
def nb(notebook: Kernel, server: KernelServer) -> Iterator[Kernel]:
    """The shared notebook, with no jobs, no handler and an empty queue around each test."""
    server.delete_all_jobs()
    notebook.ok(
        "jupyter_recall.kernel.jobs.recall.clear_handler(); jupyter_recall.notifications.drain()"
    )
    yield notebook
    server.delete_all_jobs()


def wait_until(predicate: Any, timeout: float = 20.0, interval: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met in {timeout}s")
        time.sleep(interval)
