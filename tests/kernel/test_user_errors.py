"""Bad input and an unreachable server in a real notebook kernel: one clear line naming the
field or option at fault (what is accepted), never a traceback, nothing started."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.kernel.conftest import Kernel
from tests.server.live_server import free_port

UNREACHABLE = """
from jupyter_recall.kernel.connection import client as _c
_c.set_client(_c.Client(_c.ServerInfo('http://127.0.0.1:{port}/', '', 'test'), timeout=2))
_c.forget_identity()
"""
REACHABLE = """
from jupyter_recall.kernel.connection import client as _c
_c.set_client(None)
_c.forget_identity()
"""


@pytest.fixture
def unreachable(nb: Kernel) -> Iterator[Kernel]:
    """The notebook's kernel talking to a port nothing listens on, restored afterwards."""
    nb.ok(UNREACHABLE.format(port=free_port()))
    try:
        yield nb
    finally:
        nb.ok(REACHABLE)


def one_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    return lines[0]


def test_jobs_without_the_server_says_so_in_one_line(unreachable: Kernel):
    out = unreachable.run("%jobs")
    assert out.error is None, out.error
    assert "Traceback" not in out.text
    assert out.displays == []
    assert "cannot reach the Jupyter server" in one_line(out.stderr)


def test_require_server_kernel_without_the_server_is_a_usage_error(unreachable: Kernel):
    out = unreachable.run("jupyter_recall.require_server_kernel()")
    assert out.error is None, out.error  # IPython shows a UsageError as one line
    assert one_line(out.stderr).startswith("UsageError: jupyter_recall: cannot reach the Jupyter")
