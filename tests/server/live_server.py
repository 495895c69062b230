"""A real `jupyter server` process with the extension, for tests that restart or kill it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

TOKEN = "recall-test-token"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def answers(probe: Callable[[], object]) -> bool:
    """Whether ``probe``, requests to a server that is starting, all succeeded. An error
    answer is closed: it holds its socket until then."""
    try:
        probe()
    except urllib.error.HTTPError as error:
        error.close()
        return False
    except (urllib.error.URLError, ConnectionError):
        return False
    return True


def json_request(method: str, url: str, body: Any = None, *, token: str) -> Any:
    """One JSON call with a token (a body-less POST/PATCH sends ``{}``); the decoded answer."""
    data = json.dumps(body).encode() if body is not None else None
    if data is None and method in ("POST", "PATCH"):
        data = b"{}"
    request = urllib.request.Request(
        url,
        data=data,
        method=method,
        headers={"Authorization": f"token {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        text = response.read().decode()
    return json.loads(text) if text else None


class LiveServer:
    def __init__(
        self,
        root: Path,
        db_path: Path,
        *,
        port: int | None = None,
        env: dict[str, str] | None = None,
        args: tuple[str, ...] = (),
    ) -> None:
        self.args = args
        """More command-line options of the server."""
        self.root = root
        self.db_path = db_path
        self.port = port or free_port()
        self.env = env or {}
        self.process: subprocess.Popen[bytes] | None = None
        self.log = root.parent / f"server-{self.port}.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0, ready: str = "/api/recall/info") -> LiveServer:
        """Start the server and wait until ``ready`` answers (``/api/status``: until the server
        does, whether or not jupyter_recall runs)."""
        command = [
            sys.executable,
            "-m",
            "jupyter_server",
            "--no-browser",
            "--allow-root",
            f"--port={self.port}",
            "--ip=127.0.0.1",
            f"--IdentityProvider.token={TOKEN}",
            f"--ServerApp.root_dir={self.root}",
            f"--RecallApp.db_path={self.db_path}",
            "--RecallApp.default_timezone=UTC",
            # Enabled here, not through the installed config file: an editable install may lack it.
            "--ServerApp.jpserver_extensions=jupyter_recall=True",
            *self.args,
        ]
        env = {**os.environ, "JUPYTER_PLATFORM_DIRS": "1", "PYTHONFAULTHANDLER": "1", **self.env}
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=log, env=env)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if answers(partial(self.request, "GET", ready)):
                return self
            time.sleep(0.2)
        self.stop(signal.SIGKILL)  # not left running (and using the CPU) after the failure
        raise AssertionError(f"server did not start:\n{self.log.read_text()[-3000:]}")

    def request(self, method: str, path: str, body: Any = None) -> Any:
        return json_request(method, self.url + path, body, token=TOKEN)

    def kernels_while_starting(self) -> list[dict[str, Any]] | None:
        """``GET /api/kernels`` while the server may be starting a kernel (a pool's refill);
        None on a 500. jupyter_server lists a kernel for one turn of its event loop before it
        has its ``last_activity`` (``_add_kernel_when_ready`` adds it, ``_async_start_kernel``
        sets it when it resumes): a listing then fails on a TraitError, for Lab's polling too.
        Not ours to mend; a poll that meets it asks again."""
        try:
            return list(self.request("GET", "/api/kernels"))
        except urllib.error.HTTPError as error:
            if error.code != 500:
                raise
            error.close()
            return None

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 60.0) -> int:
        assert self.process is not None
        process, self.process = self.process, None
        process.send_signal(sig)
        try:
            return process.wait(timeout)
        except subprocess.TimeoutExpired:
            # Killed, not left running into the next test (where its ResourceWarning would fail
            # that test); the log says where the shutdown hung: SIGABRT first, on which the
            # server's faulthandler (PYTHONFAULTHANDLER) writes every thread's stack there.
            process.send_signal(signal.SIGABRT)
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            tail = self.log.read_text(errors="replace")[-6000:]
            raise AssertionError(f"server did not stop in {timeout}s on {sig}:\n{tail}") from None

    def resume(self) -> None:
        """SIGCONT after a SIGSTOP, then wait until the event loop answers again.

        A SIGTERM sent at once may be delivered to another thread than the main one (Linux
        skips a thread that has a signal pending, as the main one does right after SIGCONT),
        and then nothing wakes the event loop to run Python's handler until its next timer.
        """
        assert self.process is not None
        self.process.send_signal(signal.SIGCONT)
        self.wait_for(lambda: answers(partial(self.request, "GET", "/api/recall/info")))

    def wait_for(self, predicate: Any, timeout: float = 30.0, interval: float = 0.2) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"condition not met in {timeout}s")
            time.sleep(interval)
