"""A job calling a server tool is refused at creation when the call could never run, naming the
field; a tool job aimed at a kernel is left to the kernel (user tools live there)."""

from __future__ import annotations

import pytest

from tests.server.rest import call


def tool_job(name: str, params: dict, **extra: object) -> dict:
    return {"when": "in 1h", "action": {"type": "tool", "name": name, "params": params}, **extra}


async def test_an_unknown_server_tool_is_refused_listing_the_tools(jp_fetch):
    error = await call(jp_fetch, "POST", "api/recall/jobs", tool_job("htp.get", {}), expect=400)
    assert error["field"] == "action.name"
    assert "unknown tool 'htp.get'" in error["message"]
    assert "http.get" in error["accepted"]
    assert (await call(jp_fetch, "GET", "api/recall/jobs"))["jobs"] == []


@pytest.mark.parametrize(
    ("params", "text"),
    [
        ({}, "missing a required argument: 'url'"),
        ({"url": "http://x", "nope": 1}, "unexpected keyword argument 'nope'"),
    ],
)
async def test_params_the_tool_does_not_take_are_refused(jp_fetch, params, text):
    body = tool_job("http.get", params)
    error = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=400)
    assert error["field"] == "action.params"
    assert text in error["message"]
    assert "url" in error["accepted"]


async def test_in_a_batch_the_error_names_the_job(jp_fetch):
    jobs = [tool_job("http.get", {"url": "http://x"}), tool_job("no.such", {})]
    error = await call(jp_fetch, "POST", "api/recall/jobs", {"jobs": jobs}, expect=400)
    assert error["field"] == "jobs[1].action.name"
    assert (await call(jp_fetch, "GET", "api/recall/jobs"))["jobs"] == []


async def test_a_change_to_a_tool_the_server_lacks_is_refused(jp_fetch):
    job = await call(
        jp_fetch, "POST", "api/recall/jobs", tool_job("http.get", {"url": "http://x"}), expect=201
    )
    change = {"action": {"type": "tool", "name": "no.such", "params": {}}}
    error = await call(jp_fetch, "PATCH", f"api/recall/jobs/{job['id']}", change, expect=400)
    assert error["field"] == "action.name"
    kept = await call(jp_fetch, "GET", f"api/recall/jobs/{job['id']}")
    assert kept["action"]["name"] == "http.get"


async def test_a_declared_job_calling_a_missing_tool_is_refused(jp_fetch):
    declared = {"jobs": [{"key": "k", **tool_job("no.such", {}), "when": "every 1h"}]}
    error = await call(jp_fetch, "PUT", "api/recall/owners/pkg/jobs", declared, expect=400)
    assert error["field"].endswith("action.name")


async def test_a_tool_job_for_a_kernel_is_left_to_the_kernel(jp_fetch):
    body = tool_job("my.tool", {"anything": 1}, target={"type": "kernel", "path": "a.ipynb"})
    job = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201)
    assert job["action"]["name"] == "my.tool"
