"""shell.run with real subprocesses: output, exit codes, timeouts, cancellation."""

from __future__ import annotations

import asyncio
import os
import threading
import time

import pytest


async def test_output_and_exit_code(runner):
    result = await runner.run_tool("shell.run", {"command": "echo out; echo err >&2"})
    assert result["success"] is True
    data = result["data"]
    assert (data["stdout"], data["stderr"], data["exit_code"]) == ("out\n", "err\n", 0)
    failed = await runner.run_tool("shell.run", {"command": "exit 3"})
    assert failed["success"] is False
    assert failed["error"] == "shell.run: exit code 3"
    assert failed["data"]["exit_code"] == 3


async def test_argument_list_runs_without_a_shell_in_the_root(runner, root):
    (root / "sub").mkdir()
    result = await runner.run_tool("shell.run", {"command": ["pwd"], "cwd": "sub"})
    assert result["data"]["stdout"].strip() == str(root / "sub")
    literal = await runner.run_tool("shell.run", {"command": ["echo", "$HOME;", "x"]})
    assert literal["data"]["stdout"] == "$HOME; x\n"
    outside = await runner.run_tool("shell.run", {"command": "pwd", "cwd": ".."})
    assert "cwd: '..' is outside the tool root" in outside["error"]
    env = await runner.run_tool(
        "shell.run", {"command": "echo $RECALL_X", "env": {"RECALL_X": "42"}}
    )
    assert env["data"]["stdout"] == "42\n"


async def test_timeout_kills_the_command_and_its_children(runner, root):
    started = time.monotonic()
    result = await runner.run_tool(
        "shell.run", {"command": "sleep 30 & echo $! > child.pid; wait", "timeout": 0.5}
    )
    assert time.monotonic() - started < 5
    assert result["success"] is False
    assert result["error"] == "shell.run: timed out after 0.5s (killed)"
    assert result["data"]["timed_out"] is True
    child = int((root / "child.pid").read_text())
    await asyncio.sleep(0.1)
    assert not _alive(child)


async def test_cancel_kills_the_process(runner, root):
    task = asyncio.ensure_future(
        runner.run_tool("shell.run", {"command": "echo $$ > shell.pid; sleep 30"})
    )
    pid_file = root / "shell.pid"
    for _ in range(100):
        if pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.05)
    pid = int(pid_file.read_text())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not _alive(pid)


CANCELS = 120
"""Cancellations right after the start: asyncio hung on a few percent of them (CPython 3.11)."""


async def _cancelled_at_once(runner, delay: float) -> bool:
    """Whether a call cancelled ``delay`` seconds after it started ends within 10 s."""
    call = asyncio.ensure_future(runner.run_tool("shell.run", {"command": "sleep 30"}))
    await asyncio.sleep(delay)
    call.cancel()
    try:
        await asyncio.wait_for(asyncio.shield(call), 10)
    except asyncio.CancelledError:
        return True
    except asyncio.TimeoutError:
        return False
    return call.done()


def test_a_cancel_while_the_process_starts_never_hangs(runner):
    # In a loop of its own thread, as the kernel's tools run: there, asyncio watches child
    # processes from threads, and a spawn cancelled half-way waited forever for its process.
    async def many() -> list[float]:
        delays = [(index % 12) * 0.0005 for index in range(CANCELS)]
        return [delay for delay in delays if not await _cancelled_at_once(runner, delay)]

    hung: list[list[float]] = []
    thread = threading.Thread(target=lambda: hung.append(asyncio.run(many())))
    thread.start()
    thread.join(timeout=600)
    assert hung == [[]], f"calls cancelled after these delays never ended: {hung}"


@pytest.mark.parametrize(
    ("params", "error"),
    [
        ({"command": ""}, "command: must be a non-empty string or list of strings"),
        ({"command": ["ls", 3]}, "command: must be a non-empty string or list of strings"),
        ({"command": "true", "timeout": 0}, "timeout: must be in (0, 3600] seconds"),
        ({"command": "true", "env": {"A": 1}}, "env: must be an object of strings"),
    ],
)
async def test_bad_parameters_name_the_argument(runner, params, error):
    result = await runner.run_tool("shell.run", params)
    assert result["success"] is False
    assert result["error"].startswith(f"shell.run: {error}")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0): look at its state.
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False
