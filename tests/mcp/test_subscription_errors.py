"""User errors of resources/subscribe and resources/list are error answers naming what is wrong,
never tracebacks on ``jupyter recall mcp``'s stderr."""

from __future__ import annotations

import contextlib
import signal
import time
import warnings
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TextIO

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

from jupyter_recall.mcp.resources import RESOURCE_NOT_FOUND
from tests.mcp.conftest import JUPYTER
from tests.server.live_server import TOKEN, LiveServer


@contextlib.asynccontextmanager
async def stdio_with_stderr(
    server: LiveServer, errlog: TextIO, *options: str
) -> AsyncIterator[ClientSession]:
    command = StdioServerParameters(
        command=JUPYTER, args=["recall", "mcp", "--url", server.url, "--token", TOKEN, *options]
    )
    async with (
        stdio_client(command, errlog=errlog) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def subscribe(session: ClientSession, uri: str) -> None:
    # Deprecated by the SDK for protocol 2026-07-28, the method of today's sessions.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        await session.subscribe_resource(uri)


async def test_bad_subscriptions_are_refused_naming_the_uri_or_run(
    server: LiveServer, tmp_path: Path
) -> None:
    stderr = tmp_path / "stderr.txt"
    with stderr.open("w") as errlog:
        async with stdio_with_stderr(server, errlog) as session:
            with pytest.raises(MCPError, match="only run outputs and approvals") as bad_uri:
                await subscribe(session, "recall://jobs/abc123")
            assert "recall://jobs/abc123" in str(bad_uri.value)
            with pytest.raises(MCPError, match="norun000001"):
                await subscribe(session, "recall://runs/norun000001/output")
    assert "Traceback" not in stderr.read_text()


async def test_listing_resources_while_the_server_is_down_is_an_error_answer(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    live = LiveServer(root, tmp_path / "down.sqlite").start()
    stderr = tmp_path / "stderr.txt"
    try:
        with stderr.open("w") as errlog:
            async with stdio_with_stderr(live, errlog) as session:
                await session.list_resources()
                live.stop()
                with pytest.raises(MCPError) as down:
                    await session.list_resources()
    finally:
        if live.process is not None:
            live.stop()
    assert live.url.split("//")[1] in str(down.value) or "reach" in str(down.value)
    assert "Traceback" not in stderr.read_text()


async def test_approval_subscriptions_are_refused_when_they_could_not_be_heard(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    live = LiveServer(root, tmp_path / "approvals.sqlite").start()
    stderr = tmp_path / "stderr.txt"
    try:
        with stderr.open("w") as errlog:
            async with stdio_with_stderr(live, errlog, "--timeout", "3") as session:
                # A record that does not exist would never change.
                with pytest.raises(MCPError, match="000000000000") as missing:
                    await subscribe(session, "recall://approvals/000000000000")
                # A server that does not answer: refused within the client's timeout.
                live.process.send_signal(signal.SIGSTOP)  # type: ignore[union-attr]
                started = time.monotonic()
                try:
                    with pytest.raises(MCPError, match="recall://approvals") as hung:
                        await subscribe(session, "recall://approvals")
                finally:
                    live.resume()
                waited = time.monotonic() - started
                live.stop()
                with pytest.raises(MCPError, match="recall://approvals") as down:
                    await subscribe(session, "recall://approvals")
    finally:
        if live.process is not None:
            live.stop()
    for refused in (missing, hung, down):
        assert refused.value.code == RESOURCE_NOT_FOUND
    assert waited < 20
    assert "Traceback" not in stderr.read_text()
