"""``jupyter recall mcp`` without ``--url`` (the MCP clients' configurations) follows a Jupyter
server that restarts with a new token, as ``jupyter lab`` does at every start: a refused token
or connection looks the server up again in the runtime directory. With ``--url``, the error
says what to change."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from unittest import mock

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.mcp.conftest import JUPYTER
from tests.mcp.test_mcp import call, ok
from tests.server import live_server
from tests.server.live_server import LiveServer, json_request


class TokenServer(LiveServer):
    """A live server with a token of its own."""

    def __init__(self, root: Path, db_path: Path, token: str, **kwargs: Any) -> None:
        super().__init__(root, db_path, **kwargs)
        self.token = token

    def start(self, timeout: float = 60.0) -> TokenServer:
        # LiveServer starts its servers with the tests' token: this one's instead.
        with mock.patch.object(live_server, "TOKEN", self.token):
            super().start(timeout)
        return self

    def request(self, method: str, path: str, body: Any = None) -> Any:
        return json_request(method, self.url + path, body, token=self.token)


@contextlib.asynccontextmanager
async def mcp_over_stdio(runtime: Path, *args: str) -> AsyncIterator[ClientSession]:
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(runtime), "JUPYTER_PLATFORM_DIRS": "1"}
    for name in ("JUPYTER_RECALL_URL", "JUPYTER_RECALL_TOKEN"):
        env.pop(name, None)
    command = StdioServerParameters(command=JUPYTER, args=["recall", "mcp", *args], env=env)
    async with (
        stdio_client(command) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def test_a_discovered_server_is_followed_through_its_restart(tmp_path: Path) -> None:
    runtime, root, db = tmp_path / "runtime", tmp_path / "root", tmp_path / "recall.sqlite"
    root.mkdir()
    env = {"JUPYTER_RUNTIME_DIR": str(runtime)}
    first = TokenServer(root, db, "first-token", env=env).start()
    try:
        async with mcp_over_stdio(runtime) as session:
            created = await ok(session, "schedule_once", {"when": "in 1h", "prompt": "p"})
            first.stop()
            # jupyter lab restarted: a new token, the same port.
            second = TokenServer(root, db, "second-token", env=env, port=first.port).start()
            try:
                listed = await ok(session, "job_list", {})
                # Then on another port, with another token again.
                second.stop()
                third = TokenServer(root, db, "third-token", env=env).start()
                try:
                    again = await ok(session, "schedule_status", {"job_id": created["job_id"]})
                finally:
                    third.stop()
            finally:
                if second.process is not None:
                    second.stop()
    finally:
        if first.process is not None:
            first.stop()
    assert created["job_id"] in [job["job_id"] for job in listed["jobs"]]
    assert again["job"]["job_id"] == created["job_id"]


async def test_an_explicit_server_that_refuses_the_token_says_what_to_change(
    tmp_path: Path,
) -> None:
    runtime, root, db = tmp_path / "runtime", tmp_path / "root", tmp_path / "recall.sqlite"
    root.mkdir()
    env = {"JUPYTER_RUNTIME_DIR": str(runtime)}
    first = TokenServer(root, db, "first-token", env=env).start()
    try:
        options = ("--url", first.url, "--token", "first-token")
        async with mcp_over_stdio(runtime, *options) as session:
            await ok(session, "job_list", {})
            first.stop()
            second = TokenServer(root, db, "second-token", env=env, port=first.port).start()
            try:
                refused = await call(session, "job_list", {})
            finally:
                second.stop()
    finally:
        if first.process is not None:
            first.stop()
    assert refused["ok"] is False
    assert "refused our credentials" in refused["error"]
    assert "--token" in refused["error"]
    assert "restart the MCP server" in refused["error"]
