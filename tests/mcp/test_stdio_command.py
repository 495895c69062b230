"""``jupyter recall mcp`` with no server to speak to: one clear line and the CLI's exit status 3,
before any MCP message, rather than an MCP session that fails at its first call."""

from __future__ import annotations

import subprocess

from tests.mcp.conftest import JUPYTER
from tests.server.live_server import free_port


def test_no_server_is_one_error_before_serving() -> None:
    url = f"http://127.0.0.1:{free_port()}/"
    done = subprocess.run(
        [JUPYTER, "recall", "mcp", "--url", url, "--token", "t"],
        input="",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 3, done.stderr
    assert done.stdout == ""
    assert f"cannot use the Jupyter server at {url}" in done.stderr
