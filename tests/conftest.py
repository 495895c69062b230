"""Test-wide fixtures. pytest-jupyter's server fixtures must be declared here, at the root."""

from __future__ import annotations

import http.server
import os
import threading
from collections.abc import Iterator

import pytest
from anyio.pytest_plugin import pytest_pyfunc_call as anyio_pyfunc_call
from hypothesis import settings
from traitlets.config import Config

pytest_plugins = ["pytest_jupyter.jupyter_server", "tests.pg_cluster"]

# CI replays the same generated cases every run, so a submission never fails on a case that no
# earlier run met; locally each run explores new ones (and hypothesis keeps what failed).
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Tests marked `anyio` run under anyio's runner.

    pytest-jupyter's own hook would otherwise take every coroutine test and run it on its
    event loop, outside anyio's runner (and its task-group semantics).
    """
    if "anyio_backend" in pyfuncitem.funcargs:
        return anyio_pyfunc_call(pyfuncitem)
    return None


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def recall_config(tmp_path) -> dict:
    """Per-test settings of the extension; tests may update it before the server starts."""
    return {
        "db_path": str(tmp_path / "recall.sqlite"),
        "default_timezone": "UTC",
        "sse_heartbeat": 0.5,
    }


@pytest.fixture
def jp_server_config(recall_config) -> Config:
    return Config(
        {
            "ServerApp": {
                "jpserver_extensions": {"jupyter_recall": True},
                "allow_root": True,
            },
            "RecallApp": recall_config,
        }
    )


@pytest.fixture
def jp_serverapp(jp_serverapp, jp_asyncio_loop):
    """pytest-jupyter never runs the server's post-start hook; a real server does, and that is
    where extensions start their background work (our scheduler loop). Run it here."""
    jp_asyncio_loop.run_until_complete(jp_serverapp.extension_manager.start_all_extensions())
    return jp_serverapp


class _PlainJupyter(http.server.BaseHTTPRequestHandler):
    """A server that is not ours: 404 with HTML for /api/recall/*, like a jupyter_server
    without the extension."""

    def do_GET(self) -> None:
        self.send_response(404)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(b"<html>404: Not Found</html>")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def plain_jupyter() -> Iterator[str]:
    """The URL of a server without the extension (discovery must pass it by)."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _PlainJupyter)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()
    thread.join()
