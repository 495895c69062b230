"""The registry and run_tool: names, arguments, sync and async user tools, result shape."""

from __future__ import annotations

import asyncio
import threading

import pytest

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.tools import ToolRegistry, ToolRunner


async def test_sync_and_async_user_tools(runner, registry):
    seen_threads = []

    @registry.register("math.add")
    def add(a: int, b: int = 1) -> int:
        """Add two numbers."""
        seen_threads.append(threading.current_thread().name)
        return a + b

    async def twice(x: int) -> int:
        await asyncio.sleep(0)
        return 2 * x

    registry.register("math.twice", twice, description="double it")
    assert await runner.run_tool("math.add", {"a": 2}) == {"success": True, "data": 3}
    assert await runner.run_tool("math.twice", {"x": 4}) == {"success": True, "data": 8}
    # Sync tools run in a worker thread, never on the event loop.
    assert seen_threads[0].startswith("jupyter_recall-tool")
    described = {tool["name"]: tool for tool in registry.describe()}
    assert described["math.add"]["description"] == "Add two numbers."
    assert described["math.add"]["parameters"] == ["a", "b"]
    assert described["math.twice"]["async"] is True


async def test_bad_arguments_are_refused_before_the_call(runner, registry):
    calls = []

    @registry.register("math.add")
    def add(a: int, b: int = 1) -> int:
        calls.append(a)
        return a + b

    missing = await runner.run_tool("math.add", {"b": 2})
    assert missing == {
        "success": False,
        "error": "params: math.add: missing a required argument: 'a' (accepted: a, b)",
    }
    unknown = await runner.run_tool("math.add", {"a": 1, "c": 2})
    assert "unexpected keyword argument 'c'" in unknown["error"]
    not_object = await runner.run_tool("math.add", ["a"])  # type: ignore[arg-type]
    assert not_object["error"] == "params: must be an object, got list"
    assert calls == []


async def test_params_that_fitted_once_do_not_let_others_through(runner, registry):
    @registry.register("math.sub")
    def sub(a: int, b: int = 1) -> int:
        return a - b

    assert (await runner.run_tool("math.sub", {"a": 5}))["data"] == 4
    assert (await runner.run_tool("math.sub", {"a": 5, "b": 2}))["data"] == 3
    assert (await runner.run_tool("math.sub", {"a": 7}))["data"] == 6
    unknown = await runner.run_tool("math.sub", {"a": 5, "c": 2})
    assert "unexpected keyword argument 'c'" in unknown["error"]
    missing = await runner.run_tool("math.sub", {"b": 2})
    assert "missing a required argument: 'a'" in missing["error"]

    @registry.register("math.sub")
    def sub_again(x: int) -> int:
        return -x

    replaced = await runner.run_tool("math.sub", {"a": 5})
    assert "missing a required argument: 'x'" in replaced["error"], "a new tool binds anew"


async def test_unknown_tool_lists_the_known_ones(runner):
    result = await runner.run_tool("nope.tool")
    assert result["success"] is False
    assert result["error"].startswith("name: unknown tool 'nope.tool' (accepted: filesystem.list")
    assert "shell.run" in result["error"]


async def test_exceptions_become_errors(runner, registry):
    @registry.register("flaky.call")
    def boom() -> None:
        raise RuntimeError("disk on fire")

    assert await runner.run_tool("flaky.call") == {
        "success": False,
        "error": "flaky.call raised RuntimeError: disk on fire",
    }


async def test_long_text_data_is_cut_with_a_note(registry, root):
    registry.register("big.text", lambda: "y" * 50)
    small = ToolRunner(registry, root=str(root), output_limit=10)
    result = await small.run_tool("big.text")
    assert result["data"] == "y" * 10 + "\n[truncated: 10 of 50 characters shown]"
    small.close()


def test_names_and_builtins_are_protected(registry):
    for bad in ("fetch", "a.b.c", "my-mod.x", "", "1a.b"):
        with pytest.raises(ValidationError, match=r"must look like 'module\.action'"):
            registry.register(bad, lambda: None)
    with pytest.raises(ValidationError, match=r"shell\.run is a built-in tool"):
        registry.register("shell.run", lambda: None)
    registry.register("mine.tool", lambda: 1)
    registry.register("mine.tool", lambda: 2)  # a re-run cell replaces its tool
    registry.unregister("mine.tool")
    with pytest.raises(ValidationError, match=r"no user tool named 'shell\.run'"):
        registry.unregister("shell.run")
    assert "mine.tool" not in registry


def test_run_tool_sync_from_a_plain_thread(runner, registry):
    registry.register("math.neg", lambda x: -x)
    assert runner.run_tool_sync("math.neg", {"x": 3}) == {"success": True, "data": -3}


def test_the_default_registry_holds_the_builtins_and_decorated_tools():
    from jupyter_recall.tools import default_registry, tool

    @tool("testmod.hello")
    def hello(name: str) -> str:
        return f"hello {name}"

    try:
        assert {"filesystem.read", "http.get", "shell.run", "testmod.hello"} <= set(
            default_registry().names()
        )
    finally:
        default_registry().unregister("testmod.hello")
    assert isinstance(default_registry(), ToolRegistry)
