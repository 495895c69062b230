"""What the MCP tools say is true for an agent outside a kernel: no notification queue, no
on_recall handler, no ``remember``, no ``%recall`` magic, no arguments the tools lack; and their
schemas advertise the bounds the server enforces."""

from __future__ import annotations

import re
from typing import Any

from jupyter_recall import agent
from jupyter_recall.engine.notify import MAX_TAG, MAX_TAGS
from jupyter_recall.server.listing import MAX_PAGE
from jupyter_recall.store.watchers import RING_SIZE
from tests.mcp.conftest import mcp_session
from tests.mcp.test_mcp import call, ok
from tests.server.live_server import LiveServer

KERNEL_ONLY = re.compile(
    r"notification queue|queued for you|on_recall handler in this kernel|\bremember\b|"
    r"this session|this kernel|%recall|manage_recall|sort and order|give target",
)


def texts(tool: Any) -> list[str]:
    schema = tool.input_schema
    return [tool.description] + [p.get("description", "") for p in schema["properties"].values()]


async def test_no_tool_speaks_of_what_only_a_kernel_has(server: LiveServer) -> None:
    async with mcp_session("http", server) as session:
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
    wrong = [
        (name, text)
        for name, tool in listed.items()
        for text in texts(tool)
        if KERNEL_ONLY.search(text)
    ]
    assert wrong == []
    for name in ("schedule_once", "schedule_cron", "schedule_after"):
        properties = listed[name].input_schema["properties"]
        assert properties["action_type"]["enum"] == ["notification", "tool_call"], name
    for name in ("schedule_once", "schedule_cron"):
        assert "timezone_offset" in listed[name].input_schema["properties"], name
    assert "watcher" in listed["job_list"].description
    assert "every notebook" in listed["watch_list"].description
    # The kernel's agent keeps its own words.
    in_kernel = {spec["name"]: spec for spec in agent.tool_specs(style="anthropic")}
    assert (
        "notification queue"
        in in_kernel["schedule_once"]["input_schema"]["properties"]["output_channel"]["description"]
    )
    assert (
        "remember"
        in in_kernel["schedule_status"]["input_schema"]["properties"]["job_id"]["description"]
    )


async def test_the_schemas_advertise_the_servers_bounds(server: LiveServer) -> None:
    async with mcp_session("http", server) as session:
        listed = {tool.name: tool.input_schema for tool in (await session.list_tools()).tools}
        too_many = await call(session, "job_list", {"limit": MAX_PAGE + 1})
        too_many_runs = await call(session, "run_list", {"limit": MAX_PAGE + 1})
        history = await call(session, "watch_history", {"watcher_id": "a1", "last_n": 101})
        empty_tag = await call(
            session, "send_notification", {"channel": "log", "message": "m", "tags": [""]}
        )
        long_tag = await call(
            session, "send_notification", {"channel": "log", "message": "m", "tags": ["t" * 51]}
        )
        unanchored = await call(session, "watch_start", {"name": "x filesystem.read x"})
    for name in ("job_list", "run_list"):
        assert listed[name]["properties"]["limit"]["maximum"] == MAX_PAGE
    assert listed["watch_history"]["properties"]["last_n"]["maximum"] == RING_SIZE
    tags = listed["send_notification"]["properties"]["tags"]
    assert tags["items"] == {"type": "string", "minLength": 1, "maxLength": MAX_TAG}
    assert tags["maxItems"] == MAX_TAGS
    pattern = listed["watch_start"]["properties"]["name"]["pattern"]
    assert pattern.startswith("^")
    assert pattern.endswith("$")
    for refused, field in [
        (too_many, "limit"),
        (too_many_runs, "limit"),
        (history, "last_n"),
        (empty_tag, "tags"),
        (long_tag, "tags"),
        (unanchored, "name"),
    ]:
        assert (refused["ok"], refused["field"]) == (False, field), refused


async def test_refusals_point_to_what_an_mcp_agent_has(server: LiveServer, notebook: str) -> None:
    async with mcp_session("stdio", server) as session:
        prompt = await call(
            session, "schedule_once", {"when": "in 1h", "prompt": "p", "action_type": "llm_prompt"}
        )
        unknown_tool = await call(session, "watch_start", {"name": "nope.nope"})
        recall = {"when": "in 2h", "notebook": notebook, "instruction": "look again"}
        first = await ok(session, "notebook_recall", recall)
        second = await call(session, "notebook_recall", recall)
        await ok(session, "schedule_cancel", {"job_id": first["job_id"]})
    assert (prompt["field"], "notebook_recall" in prompt["error"]) == ("action_type", True)
    assert unknown_tool["field"] == "name"
    assert "over MCP" in unknown_tool["error"], unknown_tool
    assert "unknown tool 'nope.nope' on the server" in unknown_tool["error"], unknown_tool
    assert "filesystem.read" in unknown_tool["accepted"], unknown_tool
    assert not KERNEL_ONLY.search(unknown_tool["error"]), unknown_tool
    assert second["field"] == "notebook", second
    assert f"schedule_cancel with job_id {first['job_id']!r}" in second["error"], second
    assert not KERNEL_ONLY.search(second["error"]), second


async def test_a_cursor_of_another_listing_is_refused_in_this_surfaces_words(
    server: LiveServer,
) -> None:
    for n in range(2):
        server.request(
            "POST",
            "/api/recall/jobs",
            {"when": "now", "action": {"type": "notification", "message": f"c{n}"}},
        )
    async with mcp_session("http", server) as session:
        for _ in range(120):
            runs = await ok(session, "run_list", {"limit": 1})
            if runs["next_cursor"]:
                break
        crossed = await call(session, "job_list", {"cursor": runs["next_cursor"]})
    assert crossed["field"] == "cursor"
    assert "job_list" in crossed["error"]
    assert not KERNEL_ONLY.search(crossed["error"]), crossed


async def test_jobs_made_over_mcp_notify_the_user_and_keep_the_zone(server: LiveServer) -> None:
    cron = {"cron": "0 9 * * *", "prompt": "standup", "timezone_offset": "+05:00"}
    async with mcp_session("stdio", server) as session:
        created = await ok(session, "schedule_cron", cron)
        tool = await ok(
            session,
            "schedule_once",
            {
                "when": "in 3h",
                "action_type": "tool_call",
                "tool_name": "filesystem.read",
                "tool_params": {"path": "x"},
                "output_channel": "log",
            },
        )
    job = server.request("GET", f"/api/recall/jobs/{created['job_id']}")
    assert job["tz"] == "+05:00"
    assert created["next_run_at"].endswith(("04:00:00Z", "04:00:00+00:00")), created
    # No kernel queue to put it in: the user's JupyterLab.
    assert job["action"]["channel"] == "ui"
    tool_job = server.request("GET", f"/api/recall/jobs/{tool['job_id']}")
    assert tool_job["options"]["output_channel"] == "log"
    for job_id in (created["job_id"], tool["job_id"]):
        server.request("DELETE", f"/api/recall/jobs/{job_id}")


def test_a_kernels_agent_keeps_llm_prompt() -> None:
    # schedule_once in a kernel still offers llm_prompt (its on_recall handler exists there).
    (spec,) = agent.tool_specs(["schedule_once"], style="anthropic")
    assert "llm_prompt" in spec["input_schema"]["properties"]["action_type"]["enum"]
