"""Test-wide fixtures. pytest-jupyter's server fixtures must be declared here, at the root."""

from __future__ import annotations

import http.server
import os
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from anyio.pytest_plugin import pytest_pyfunc_call as anyio_pyfunc_call
from hypothesis import settings
from traitlets.config import Config
from xdist.scheduler import LoadScopeScheduling

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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The UI tests first: under pytest-xdist they are one unit of work (below), and last they
    would be the run's long tail, one worker busy with them while the other waits. A worker
    refuses items that share a node id (schemathesis makes them of one ``schema.parametrize()``
    test under pytest 9): xdist schedules by node id and would run one of them, silently."""
    items.sort(key=lambda item: item.get_closest_marker("ui") is None)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        counts = Counter(item.nodeid for item in items)
        shared = sorted(nodeid for nodeid, count in counts.items() if count > 1)
        if shared:
            raise pytest.UsageError(
                f"items sharing a node id would run once under pytest-xdist: {shared}; "
                "give each its own test (tests/server/test_fuzz_rest.py does), or run without -n"
            )


class _ByModuleUiTogether(LoadScopeScheduling):
    """``scripts/test``'s two workers (``--dist loadscope``): a module's tests in one worker,
    so its module-scoped servers and kernels start once, and all the UI tests in one worker:
    two JupyterLabs and browsers at once on two cores would make every UI timing twice as
    tight. (``--dist loadgroup`` with ``xdist_group`` marks would say it too, but pytest-xdist
    3.8 renames node ids for it in a way pytest 9 ignores.)"""

    def _split_scope(self, nodeid: str) -> str:
        module = nodeid.split("::", 1)[0]
        return "tests/ui" if module.startswith("tests/ui/") else module


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> LoadScopeScheduling | None:
    if config.getvalue("dist") != "loadscope":
        return None
    return _ByModuleUiTogether(config, log)


@pytest.fixture(scope="session", autouse=True)
def private_runtime_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The Jupyter runtime directory of everything this test process starts (servers, the
    standalone scheduler, their kernels; a test may give its own): not the user's, whose
    running Jupyter servers discovery would find, and not another pytest-xdist worker's, whose
    scheduler of the same engine id would share its gateway-kernel journal."""
    runtime = tmp_path_factory.mktemp("runtime")
    before = os.environ.get("JUPYTER_RUNTIME_DIR")
    os.environ["JUPYTER_RUNTIME_DIR"] = str(runtime)
    yield runtime
    if before is None:
        del os.environ["JUPYTER_RUNTIME_DIR"]
    else:
        os.environ["JUPYTER_RUNTIME_DIR"] = before


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
