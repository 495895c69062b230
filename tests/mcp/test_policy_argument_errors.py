"""A policy argument the server refuses is named as the tool's argument (``timeout_seconds``),
not as the server's field (``policies.timeout``), as docs/mcp.md says."""

from __future__ import annotations

import pytest

from tests.mcp.conftest import mcp_session
from tests.mcp.test_mcp import call
from tests.server.live_server import LiveServer

TOO_BIG = 10**12


@pytest.mark.parametrize(
    ("tool", "argument", "value"),
    [
        ("schedule_once", "timeout_seconds", TOO_BIG),
        ("schedule_once", "timeout_seconds", 5e300),
        ("schedule_once", "keep_runs", TOO_BIG),
        ("schedule_once", "keep_runs_for_seconds", TOO_BIG),
        ("schedule_once", "pause_after_failures", TOO_BIG),
        ("schedule_once", "retries", TOO_BIG),
        ("schedule_cron", "max_runs", TOO_BIG),
    ],
)
async def test_a_refused_policy_names_the_tools_argument(
    server: LiveServer, tool: str, argument: str, value: float
) -> None:
    when = {"schedule_once": {"when": "in 2 hours"}, "schedule_cron": {"cron": "0 9 * * *"}}[tool]
    arguments = {**when, "prompt": "check", argument: value}
    async with mcp_session("http", server) as session:
        refused = await call(session, tool, arguments)
    assert refused["ok"] is False
    assert refused["field"] == argument, refused
    assert refused["error"].startswith(f"{argument}: "), refused
    assert "policies" not in refused["error"], refused


@pytest.mark.parametrize(
    ("arguments", "field", "message"),
    [
        (
            {"action_type": "tool_call", "tool_name": "http.get", "prompt": "p"},
            "prompt",
            "prompt: only for action_type 'notification'",
        ),
        ({"prompt": "p", "tool_name": "http.get"}, "tool_name", "only for action_type 'tool_call'"),
        ({"prompt": "p", "tool_params": {"url": "x"}}, "tool_params", "only for action_type"),
    ],
)
async def test_an_argument_of_another_action_is_refused_as_in_the_kernel(
    server: LiveServer, arguments: dict[str, object], field: str, message: str
) -> None:
    """The kernel's schedule_once refuses them (``kernel/agent/tools.py``); over MCP they were
    dropped and the job created without them."""
    async with mcp_session("http", server) as session:
        refused = await call(session, "schedule_once", {"when": "in 2 hours", **arguments})
    assert (refused["ok"], refused["field"]) == (False, field), refused
    assert message in refused["error"], refused
