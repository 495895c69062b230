"""Long string arguments are refused by the tools' specifications, naming the argument and its
bound, before any request: a listing's filter or cursor of 70,000 characters made the query
string too long for the server (tornado drops the request line), and the tool answered "cannot
reach the server"."""

from __future__ import annotations

import pytest

from jupyter_recall.client.tool_specs import CURSOR_LENGTH, PATH_LENGTH
from jupyter_recall.core.limits import MAX_BODY_BYTES
from jupyter_recall.mcp.tools import ARGUMENT_BYTES
from tests.mcp.conftest import TRANSPORTS, mcp_session
from tests.mcp.test_mcp import call, ok
from tests.server.live_server import LiveServer

HUGE = "x" * 70_000


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize(
    ("tool", "argument", "bound"),
    [
        ("job_list", "notebook", PATH_LENGTH),
        ("job_list", "cursor", CURSOR_LENGTH),
        ("run_list", "cursor", CURSOR_LENGTH),
        ("run_list", "job_id", 64),
        ("take_notifications", "session", PATH_LENGTH),
    ],
)
async def test_a_huge_argument_is_refused_naming_it_and_its_bound(
    transport: str, server: LiveServer, tool: str, argument: str, bound: int
) -> None:
    async with mcp_session(transport, server) as session:
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        refused = await call(session, tool, {argument: HUGE})
    assert listed[tool].input_schema["properties"][argument]["maxLength"] == bound
    assert refused == {
        "ok": False,
        "error": f"{argument}: is 70,000 characters long; at most {bound:,} are accepted",
        "field": argument,
    }


async def test_a_filter_at_its_bound_reaches_the_server(server: LiveServer) -> None:
    # The longest notebook filter, of characters that each take 12 in the query string
    # (%F0%9F%93%93), still fits in the request the server reads.
    notebook = "\N{NOTEBOOK}" * PATH_LENGTH
    async with mcp_session("http", server) as session:
        listed = await ok(session, "job_list", {"notebook": notebook})
    assert listed["jobs"] == []
    assert listed["total"] == 0


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_free_text_too_large_for_the_server_is_refused_naming_it(
    transport: str, server: LiveServer
) -> None:
    code = "#" * (MAX_BODY_BYTES + 1_000_000)
    async with mcp_session(transport, server) as session:
        refused = await call(session, "schedule_code", {"when": "in 1h", "code": code})
    assert (refused["ok"], refused["field"]) == (False, "code"), refused["error"][:300]
    assert f"{ARGUMENT_BYTES:,} bytes" in refused["error"]


async def test_non_ascii_text_counts_its_utf8_bytes(server: LiveServer) -> None:
    # 2,000,000 characters of two bytes each: 4 MB as UTF-8 (12 MB as \\u escapes, which the
    # server's 8 MiB body limit refused).
    code = "# " + "\N{LATIN SMALL LETTER E WITH ACUTE}" * 2_000_000
    async with mcp_session("stdio", server) as session:
        created = await ok(session, "schedule_code", {"when": "in 1h", "code": code})
    job = server.request("GET", f"/api/recall/jobs/{created['job_id']}")
    assert job["action"]["code"] == code
    server.request("DELETE", f"/api/recall/jobs/{created['job_id']}")
