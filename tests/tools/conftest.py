"""Fixtures of the tool tests: a real HTTP server on loopback, a tool root in a temp dir."""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from jupyter_recall.tools import Approvals, PolicyLayer, ToolRegistry, ToolRunner
from jupyter_recall.tools.builtin import register_builtins

BIG = 1_500_000
"""Bytes of /big: more than the 1 MB output limit."""


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def _send(self, status: int, body: bytes, content_type: str = "text/plain") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Test", "yes")
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        if url.path == "/json":
            self._send(200, json.dumps({"query": query}).encode(), "application/json")
        elif url.path == "/text":
            self._send(200, "héllo".encode(), "text/plain; charset=utf-8")
        elif url.path == "/slow":
            time.sleep(float(query.get("t", "0.5")))
            self._send(200, b"slow")
        elif url.path == "/big":
            self._send(200, b"x" * BIG)
        elif url.path == "/headers":
            self._send(200, json.dumps(dict(self.headers.items())).encode(), "application/json")
        else:
            self._send(404, b"no such page")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length).decode()
        echo = {"body": body, "content_type": self.headers.get("Content-Type")}
        self._send(201, json.dumps(echo).encode(), "application/json")


class QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        # A client that gave up (a timeout test) breaks the pipe: expected, not news.
        pass


@pytest.fixture(scope="session")
def http_base() -> Iterator[str]:
    server = QuietServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    directory = tmp_path / "root"
    directory.mkdir()
    return directory


@pytest.fixture
def registry() -> ToolRegistry:
    return register_builtins(ToolRegistry())


@pytest.fixture
def approvals() -> Approvals:
    return Approvals(timeout=5)


@pytest.fixture
def policies() -> dict[str, str]:
    """The runner's policies (one layer); tests change it before calling."""
    return {}


@pytest.fixture
def runner(registry, root, approvals, policies) -> Iterator[ToolRunner]:
    tools = ToolRunner(
        registry,
        root=str(root),
        policies=lambda: [PolicyLayer("test policies", policies)],
        approvals=approvals,
    )
    yield tools
    tools.close()
