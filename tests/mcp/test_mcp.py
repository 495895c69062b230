"""The MCP server through the official SDK's client, over stdio (``jupyter recall mcp``) and
Streamable HTTP (``/api/recall/mcp``), against a real Jupyter server and a live notebook kernel."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from jupyter_recall import agent
from jupyter_recall.client.tool_specs import OVER_MCP
from jupyter_recall.mcp.tools import MCP_TOOLS, SHARED_NAMES
from tests.mcp.conftest import TRANSPORTS, mcp_session
from tests.server.live_server import TOKEN, LiveServer

each_transport = pytest.mark.parametrize("transport", TRANSPORTS)
DEADLINE = 120.0


async def call(session: ClientSession, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await session.call_tool(name, arguments)
    answer = result.structured_content
    assert isinstance(answer, dict)
    assert result.is_error is (not answer["ok"]), answer
    return answer


async def ok(session: ClientSession, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    answer = await call(session, name, arguments)
    assert answer["ok"], answer
    # Every answer starts with its head, whatever the tool adds after it.
    assert list(answer)[:2] == ["ok", "tool"], answer
    return answer


def leaves(error: BaseException | None) -> list[BaseException]:
    if error is None:
        return []
    nested = getattr(error, "exceptions", None)
    return [leaf for inner in nested for leaf in leaves(inner)] if nested else [error]


async def finished_run(session: ClientSession, job_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + DEADLINE
    while True:
        runs = (await ok(session, "run_list", {"job_id": job_id}))["runs"]
        done = [run for run in runs if run["status"] not in ("running",)]
        if done:
            return dict(done[0])
        assert time.monotonic() < deadline, f"job {job_id} did not run"
        await anyio.sleep(0.5)


@each_transport
async def test_tools_and_their_schemas(transport: str, server: LiveServer) -> None:
    async with mcp_session(transport, server) as session:
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert set(listed) == set(MCP_TOOLS)
    for tool in listed.values():
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
        assert tool.input_schema["type"] == "object"
        assert tool.description
    in_kernel = {spec["name"]: spec for spec in agent.tool_specs(style="anthropic")}
    assert len(SHARED_NAMES) >= 12
    # A name the kernel's agent tools use is the same tool, in the words of an agent outside a
    # kernel: the same arguments, but the zone of its times, which a kernel's agent lacks.
    assert set(listed) & set(agent.TOOL_NAMES) == set(SHARED_NAMES)
    for name in SHARED_NAMES:
        spec = MCP_TOOLS[name].spec
        assert spec in OVER_MCP.all, name
        assert listed[name].input_schema == spec.input_schema(), name
        assert listed[name].description == spec.description, name
        kernel = in_kernel[name]["input_schema"]
        arguments = set(listed[name].input_schema["properties"]) - {"timezone_offset"}
        assert arguments == set(kernel["properties"]), name
        assert listed[name].input_schema["required"] == kernel["required"], name


@each_transport
async def test_code_runs_in_the_notebooks_live_kernel(
    transport: str, server: LiveServer, notebook: str
) -> None:
    marker = f"mcp_{transport}"
    async with mcp_session(transport, server) as session:
        first = await ok(
            session,
            "schedule_code",
            {"when": "now", "code": f"{marker} = 41", "notebook": notebook},
        )
        assert (await finished_run(session, first["job_id"]))["status"] == "succeeded"
        # Only the same live kernel still holds the name the first job defined.
        code = f"print({marker} + 1)"
        second = await ok(
            session, "schedule_code", {"when": "now", "code": code, "notebook": notebook}
        )
        job = await ok(session, "schedule_status", {"job_id": second["job_id"]})
        assert job["job"]["target"]["path"] == notebook
        run = await finished_run(session, second["job_id"])
        assert run["status"] == "succeeded", run
        output = await session.read_resource(f"recall://runs/{run['id']}/output")
        assert output.contents[0].text.strip() == "42"
        described = await session.read_resource(f"recall://jobs/{second['job_id']}")
        assert '"type": "code"' in described.contents[0].text
        runs = await session.read_resource(f"recall://jobs/{second['job_id']}/runs")
        assert run["id"] in runs.contents[0].text


@each_transport
async def test_a_watcher_starts_and_stops(transport: str, server: LiveServer) -> None:
    params = {"path": str(Path(server.root) / "watched.txt")}
    async with mcp_session(transport, server) as session:
        started = await ok(
            session,
            "watch_start",
            {"name": "filesystem.read", "params": params, "interval": 3600, "label": transport},
        )
        watcher_id = started["watcher_id"]
        listed = await ok(session, "watch_list", {})
        assert watcher_id in [w["watcher_id"] for w in listed["watchers"]]
        status = await ok(session, "watch_status", {"watcher_id": watcher_id})
        assert status["status"] == "running"
        await ok(session, "watch_stop", {"watcher_id": watcher_id})
        gone = await call(session, "watch_status", {"watcher_id": watcher_id})
    assert gone["ok"] is False
    assert gone["field"] == "watcher_id"


async def test_a_job_scheduled_over_mcp_carries_its_time_limit(server: LiveServer) -> None:
    args = {
        "when": "in 1h",
        "prompt": "check",
        "label": "limited",
        "timeout_seconds": 45,
        "pause_after_failures": 2,
        "keep_runs": 3,
        "keep_runs_for_seconds": 600,
    }
    async with mcp_session("stdio", server) as session:
        created = await ok(session, "schedule_once", args)
    job = server.request("GET", f"/api/recall/jobs/{created['job_id']}")
    assert job["policies"]["timeout"] == 45
    lifecycle = [job["policies"][key] for key in ("pause_after_failures", "keep_runs")]
    assert lifecycle == [2, 3]
    assert job["policies"]["keep_runs_for"] == 600
    server.request("DELETE", f"/api/recall/jobs/{created['job_id']}")


async def test_a_job_scheduled_over_mcp_carries_its_retries(server: LiveServer) -> None:
    args = {"when": "in 1h", "prompt": "check", "label": "retried", "retries": 3}
    async with mcp_session("stdio", server) as session:
        created = await ok(session, "schedule_once", args)
        refused = await call(
            session, "schedule_cron", {"cron": "every 2h", "prompt": "x", "retries": 101}
        )
    job = server.request("GET", f"/api/recall/jobs/{created['job_id']}")
    assert job["policies"]["retries"]["max"] == 3
    assert (refused["ok"], refused["field"]) == (False, "retries")
    server.request("DELETE", f"/api/recall/jobs/{created['job_id']}")


async def test_a_fresh_kernel_scheduled_over_mcp_is_of_the_servers_choosing_unless_told(
    server: LiveServer,
) -> None:
    told = {"when": "in 1h", "notebook": "r.ipynb", "kernel_name": "python3"}
    async with mcp_session("stdio", server) as session:
        own = await ok(session, "schedule_notebook", {"when": "in 1h", "notebook": "r.ipynb"})
        named = await ok(session, "schedule_notebook", told)
        code = await ok(session, "schedule_code", {"when": "in 1h", "code": "1"})
        code_named = await ok(
            session, "schedule_code", {"when": "in 1h", "code": "1", "kernel_name": "python3"}
        )
    created_jobs = (own, named, code, code_named)
    targets = [
        server.request("GET", f"/api/recall/jobs/{created['job_id']}")["target"]
        for created in created_jobs
    ]
    # Unnamed, the server chooses when it runs: a notebook's own spec, else its default
    # (before, code was sent as python3 whatever the server's default).
    headless, python3 = {"type": "headless"}, {"type": "headless", "kernel_name": "python3"}
    assert targets == [headless, python3, headless, python3]
    for created in created_jobs:
        server.request("DELETE", f"/api/recall/jobs/{created['job_id']}")


@each_transport
async def test_bad_arguments_are_tool_errors_naming_the_field(
    transport: str, server: LiveServer
) -> None:
    async with mcp_session(transport, server) as session:
        wrong_type = await call(session, "schedule_code", {"when": 5, "code": "1"})
        repeating = await call(session, "schedule_cron", {"cron": "in 5 minutes", "prompt": "x"})
        unknown = await call(session, "job_pause", {"job_id": "a", "colour": "red"})
        bad_path = await call(session, "schedule_notebook", {"when": "in 1h", "notebook": "x.py"})
        missing = await call(session, "job_pause", {"job_id": "no-such-job"})
    assert (wrong_type["ok"], wrong_type["field"]) == (False, "when")
    assert repeating["field"] == "cron"
    assert "schedule_once" in repeating["error"]
    assert unknown["field"] == "colour"
    assert "job_id" in unknown["accepted"]
    assert bad_path["field"] == "notebook"
    assert "x.py" in bad_path["error"]
    assert missing["field"] == "job_id"
    assert "not found" in missing["error"]


@each_transport
async def test_a_route_word_where_an_id_goes_is_not_found(
    transport: str, server: LiveServer
) -> None:
    # /api/recall/jobs/counts and /api/recall/runs/prune are routes: sent as ids, they
    # answered the counts (read as a job) or 405 Method Not Allowed.
    cases = [
        ("schedule_status", {"job_id": "counts"}, "job_id", "job 'counts' not found"),
        ("job_pause", {"job_id": "counts"}, "job_id", "job 'counts' not found"),
        ("job_run_now", {"job_id": "counts"}, "job_id", "job 'counts' not found"),
        ("run_output", {"run_id": "prune"}, "run_id", "run 'prune' not found"),
        ("run_stop", {"run_id": "prune"}, "run_id", "run 'prune' not found"),
    ]
    async with mcp_session(transport, server) as session:
        for name, arguments, field, error in cases:
            answer = await call(session, name, arguments)
            assert answer == {"ok": False, "error": error, "field": field}, name
        with pytest.raises(MCPError, match="job 'counts' not found"):
            await session.read_resource("recall://jobs/counts")


async def test_a_one_shot_passed_while_paused_is_resumed_with_catch_up(server: LiveServer) -> None:
    note = {"type": "notification", "message": "late"}
    job = server.request("POST", "/api/recall/jobs", {"when": "in 1s", "action": note})["id"]
    server.request("POST", f"/api/recall/jobs/{job}/pause")
    await anyio.sleep(1.5)
    async with mcp_session("stdio", server) as session:
        refused = await call(session, "job_resume", {"job_id": job})
        not_a_flag = await call(session, "job_resume", {"job_id": job, "catch_up": "yes"})
        resumed = await ok(session, "job_resume", {"job_id": job, "catch_up": True})
    # In this surface's words (REST's are catch_up=true).
    assert refused["ok"] is False
    assert f"(job_resume with job_id {job!r} and catch_up true)" in refused["error"]
    assert (not_a_flag["field"], not_a_flag["ok"]) == ("catch_up", False)
    assert resumed["status"] == "active"
    assert server.request("GET", f"/api/recall/jobs/{job}")["status"] in ("active", "completed")


def test_an_anonymous_http_client_is_refused(server: LiveServer) -> None:
    message = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}'
    for headers in ({}, {"Authorization": "token not-the-token"}):
        request = urllib.request.Request(
            f"{server.url}/api/recall/mcp",
            data=message,
            method="POST",
            headers={"Content-Type": "application/json", "Accept": "application/json", **headers},
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        refused.value.close()
        assert refused.value.code in (401, 403), headers


async def test_the_sdk_client_without_a_token_cannot_connect(server: LiveServer) -> None:
    statuses: list[int] = []

    async def record(response: Any) -> None:
        statuses.append(response.status_code)

    async def connect() -> Exception | None:
        try:
            async with (
                create_mcp_http_client() as http,
                streamable_http_client(f"{server.url}/api/recall/mcp", http_client=http) as streams,
                ClientSession(*streams) as session,
            ):
                http.event_hooks["response"].append(record)
                await session.initialize()
        except Exception as error:
            return error
        return None

    # The SDK reports the refusal as an MCPError inside its task groups' exception groups.
    assert any(isinstance(error, MCPError) for error in leaves(await connect()))
    assert statuses == [403]


@each_transport
async def test_a_recall_for_a_notebooks_agent(
    transport: str, server: LiveServer, notebook: str
) -> None:
    recall = {
        "when": "in 1h",
        "notebook": notebook,
        "instruction": f"check the build ({transport})",
    }
    async with mcp_session(transport, server) as session:
        created = await ok(session, "notebook_recall", recall)
        try:
            status = await ok(session, "schedule_status", {"job_id": created["job_id"]})
            second = await call(session, "notebook_recall", recall)
        finally:
            await ok(session, "schedule_cancel", {"job_id": created["job_id"]})
    assert created["kind"] == "recall"
    assert status["job"]["action"]["instruction"] == recall["instruction"]
    assert status["job"]["target"] == {"type": "kernel", "path": notebook}
    # One pending recall per notebook session, as in the kernel.
    assert second["ok"] is False
    assert created["job_id"] in second["error"]


async def test_a_notebooks_jobs_are_listed_with_it_however_its_path_is_written(
    server: LiveServer,
) -> None:
    typed = "./mcp_listed//report.ipynb"
    async with mcp_session("stdio", server) as session:
        code = await ok(session, "schedule_code", {"when": "in 1h", "code": "1", "notebook": typed})
        recall = await ok(
            session,
            "notebook_recall",
            {"when": "in 1h", "notebook": typed, "instruction": "look at the report"},
        )
        try:
            listed = await ok(session, "job_list", {"notebook": "mcp_listed/report.ipynb"})
            # The same notebook written as its sessions write it: one pending recall each.
            again = await call(
                session,
                "notebook_recall",
                {"when": "in 2h", "notebook": "mcp_listed/report.ipynb", "instruction": "again"},
            )
        finally:
            for job_id in (code["job_id"], recall["job_id"]):
                await ok(session, "schedule_cancel", {"job_id": job_id})
    assert {job["job_id"] for job in listed["jobs"]} == {code["job_id"], recall["job_id"]}
    assert listed["total"] == 2
    assert (again["ok"], again["field"]) == (False, "notebook")
    assert recall["job_id"] in again["error"]


def post_raw(server: LiveServer, body: bytes, method: str = "POST") -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        f"{server.url}/api/recall/mcp",
        data=body if method == "POST" else None,
        method=method,
        headers={
            "Authorization": f"token {TOKEN}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        with error:
            return error.code, json.loads(error.read())


def test_the_http_endpoint_is_stateless(server: LiveServer) -> None:
    listing = b'{"jsonrpc": "2.0", "id": 7, "method": "tools/list"}'
    status, answer = post_raw(server, listing)
    assert status == 200
    assert answer["id"] == 7
    assert {tool["name"] for tool in answer["result"]["tools"]} == set(MCP_TOOLS)
    # Nothing to push and no session to end: no GET stream, no DELETE.
    assert post_raw(server, b"", "GET")[0] == 405
    assert post_raw(server, b"", "DELETE")[0] == 405
    # A body that is not JSON is a JSON-RPC parse error, the answer an MCP client reads.
    status, refused = post_raw(server, b"{not json")
    assert status == 400
    assert refused["error"]["code"] == -32700
