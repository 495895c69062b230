"""approve and block: a person's answer (given here in-process), denial, timeout, refusal."""

from __future__ import annotations

import asyncio
import threading

import pytest

from jupyter_recall.core.errors import NotFoundError, ValidationError
from jupyter_recall.tools import Approvals


async def _pending(approvals: Approvals, count: int = 1):
    for _ in range(200):
        found = approvals.pending()
        if len(found) >= count:
            return found
        await asyncio.sleep(0.01)
    raise AssertionError("no approval request appeared")


async def test_approved_call_runs(runner, approvals, policies, root):
    policies["filesystem.write"] = "approve"
    shown = []
    approvals.on_request.append(shown.append)
    call = asyncio.ensure_future(
        runner.run_tool("filesystem.write", {"path": "a.txt", "content": "yes"})
    )
    (request,) = await _pending(approvals)
    assert shown == [request]
    assert request.tool == "filesystem.write"
    assert request.params == {"path": "a.txt", "content": "yes"}
    assert request.source == "test policies['filesystem.write']"
    assert not (root / "a.txt").exists()  # nothing runs before the answer
    # Answered from another thread, as a widget callback would.
    threading.Thread(target=approvals.answer, args=(request.request_id, True)).start()
    result = await call
    assert result["success"] is True
    assert (root / "a.txt").read_text() == "yes"
    assert request.outcome == "approved"
    assert approvals.pending() == []


async def test_denied_call_is_a_result(runner, approvals, policies, root):
    policies["shell"] = "approve"
    call = asyncio.ensure_future(runner.run_tool("shell.run", {"command": "touch ran"}))
    (request,) = await _pending(approvals)
    approvals.answer(request.request_id, False)
    assert await call == {
        "success": False,
        "error": f"tool shell.run was not run: approval denied ({request.request_id})",
    }
    assert not (root / "ran").exists()
    with pytest.raises(NotFoundError, match="pending approval request"):
        approvals.answer(request.request_id, True)  # already answered


async def test_unanswered_request_times_out(runner, approvals, policies):
    policies["shell.run"] = "approve"
    approvals.timeout = 0.2
    settled = []
    approvals.on_settled.append(settled.append)
    result = await runner.run_tool("shell.run", {"command": "true"})
    assert result["success"] is False
    assert result["error"].startswith("tool shell.run was not run: approval timeout (approval-")
    assert settled[0].outcome == "timeout"
    assert approvals.pending() == []


async def test_blocked_tool_is_refused_naming_the_policy_source(runner, policies, root):
    policies["filesystem"] = "block"
    result = await runner.run_tool("filesystem.write", {"path": "x", "content": "x"})
    assert result == {
        "success": False,
        "error": "tool filesystem.write is blocked by test policies['filesystem'] (policy: block)",
    }
    assert not (root / "x").exists()


async def test_callers_that_cannot_ask_are_refused(runner, approvals, policies):
    policies["shell.run"] = "approve"
    result = await runner.run_tool(
        "shell.run", {"command": "true"}, allow_approval=False, denial_reason="watchers cannot ask"
    )
    assert result == {
        "success": False,
        "error": "tool shell.run needs approval (test policies['shell.run']) and watchers "
        "cannot ask",
    }
    assert approvals.pending() == []


async def test_bad_arguments_are_refused_before_asking(runner, approvals, policies):
    policies["shell.run"] = "approve"
    result = await runner.run_tool("shell.run", {"cmd": "ls"})
    assert "missing a required argument: 'command'" in result["error"]
    assert approvals.pending() == []


def test_answer_and_timeout_validation():
    approvals = Approvals()
    with pytest.raises(ValidationError, match="approved: must be true or false"):
        approvals.answer("approval-1", "yes")  # type: ignore[arg-type]
    with pytest.raises(NotFoundError):
        approvals.answer("approval-404", True)
    with pytest.raises(ValidationError, match="timeout: must be a number of seconds > 0"):
        approvals.timeout = 0
    assert approvals.timeout == 300.0
