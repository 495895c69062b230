"""Tools, approvals, %parallel and background tasks in a real kernel under a real server whose
config sets tool policies (RecallApp.tool_policies)."""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.kernel.conftest import Kernel, KernelServer, wait_until

SERVER_POLICIES = {"http": "block", "shell.run": "approve"}


@pytest.fixture(scope="module")
def policy_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelServer]:
    base = tmp_path_factory.mktemp("recall-tools")
    root, runtime, config = base / "root", base / "runtime", base / "config"
    for directory in (root, runtime, config):
        directory.mkdir()
    (config / "jupyter_server_config.json").write_text(
        json.dumps({"RecallApp": {"tool_policies": SERVER_POLICIES}})
    )
    live = KernelServer(
        root,
        base / "recall.sqlite",
        env={"JUPYTER_RUNTIME_DIR": str(runtime), "JUPYTER_CONFIG_DIR": str(config)},
    )
    live.runtime = runtime
    live.start()
    yield live
    live.stop()


@pytest.fixture(scope="module")
def kernel(policy_server: KernelServer) -> Iterator[Kernel]:
    notebook = Kernel(policy_server, "tools.ipynb")
    notebook.ok("%load_ext jupyter_recall\nimport jupyter_recall, json")
    yield notebook
    notebook.close()


def _interactive(kernel: Kernel, code: str, reply: str | None) -> tuple[str, list[str]]:
    """Run a cell whose input() prompts get ``reply`` (None: never answered)."""
    stdout: list[str] = []
    prompts: list[str] = []

    def output(msg: dict[str, Any]) -> None:
        if msg["msg_type"] == "stream":
            stdout.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            stdout.append("\n".join(msg["content"]["traceback"]))

    def stdin(msg: dict[str, Any]) -> None:
        prompts.append(msg["content"]["prompt"])
        if reply is not None:
            kernel.client.input(reply)

    kernel.client.execute_interactive(
        code,
        output_hook=output,
        stdin_hook=stdin,
        allow_stdin=True,
        store_history=False,
        timeout=30,
    )
    return "".join(stdout), prompts


def _last_json(text: str) -> Any:
    return json.loads([line for line in text.splitlines() if line.strip()][-1])


def test_the_server_policies_apply_in_the_kernel(kernel):
    result = kernel.json(
        "print(json.dumps(jupyter_recall.run_tool('http.get', url='http://127.0.0.1:1/')))"
    )
    assert result == {
        "success": False,
        "error": "tool http.get is blocked by server config RecallApp.tool_policies['http'] "
        "(policy: block)",
    }
    # The kernel cannot loosen them.
    loosened = kernel.json(
        "jupyter_recall.set_tool_policy('http', 'auto')\n"
        "print(json.dumps(jupyter_recall.run_tool('http.get', url='http://127.0.0.1:1/')))\n"
        "jupyter_recall.set_tool_policy('http', None)"
    )
    assert "blocked by server config" in loosened["error"]


def test_approval_asked_on_the_cells_stdin(kernel, policy_server):
    code = (
        "r = jupyter_recall.run_tool('shell.run', command='echo ran > approved.txt')\n"
        "print(json.dumps(r))"
    )
    text, prompts = _interactive(kernel, code, "y")
    assert len(prompts) == 1
    assert "[APPROVAL NEEDED] shell.run(command='echo ran > approved.txt')" in prompts[0]
    assert "server config RecallApp.tool_policies['shell.run']" in prompts[0]
    assert prompts[0].endswith("Approve shell.run? [y/N] ")
    assert _last_json(text)["success"] is True
    assert (policy_server.root / "approved.txt").read_text() == "ran\n"

    text, prompts = _interactive(kernel, code.replace("approved", "denied"), "n")
    result = _last_json(text)
    assert result["error"].startswith("tool shell.run was not run: approval denied")
    assert not (policy_server.root / "denied.txt").exists()


def test_an_unanswered_prompt_times_out_and_the_cell_ends(kernel):
    code = (
        "jupyter_recall.approvals.timeout = 1\n"
        "r = jupyter_recall.run_tool('shell.run', command='true')\n"
        "jupyter_recall.approvals.timeout = 300\n"
        "print(json.dumps(r))"
    )
    started = time.monotonic()
    text, prompts = _interactive(kernel, code, None)
    assert time.monotonic() - started < 10
    assert len(prompts) == 1
    assert "[APPROVAL TIMEOUT]" in text
    assert _last_json(text)["error"].startswith("tool shell.run was not run: approval timeout")


def test_background_approval_with_buttons_answered_later(kernel, policy_server):
    started = kernel.ok(
        "jupyter_recall.set_tool_policy('filesystem.write', 'approve')\n"
        "tid = jupyter_recall.background_run('filesystem.write', "
        "{'path': 'from_bg.txt', 'content': 'approved later'})"
    )
    # The cell ended: the kernel is idle, and the question waits with its buttons.
    time.sleep(0.3)
    pending = kernel.json(
        "print(json.dumps([r.to_json() for r in jupyter_recall.approvals.pending()]))"
    )
    assert [request["tool"] for request in pending] == ["filesystem.write"]
    assert any(
        "text/plain" in data and "BACKGROUND TASK STARTED" in data["text/plain"]
        for data in started.displays
    )
    result = kernel.json(
        "(request,) = jupyter_recall.approvals.pending()\n"
        "jupyter_recall.approvals.answer(request.request_id, True)\n"
        "print(json.dumps(jupyter_recall.background_wait(tid, timeout=10)))\n"
        "jupyter_recall.set_tool_policy('filesystem.write', None)"
    )
    assert result["status"] == "succeeded"
    assert (policy_server.root / "from_bg.txt").read_text() == "approved later"


def test_widgets_are_shown_for_a_request_nobody_waits_for(kernel):
    execution = kernel.ok(
        "jupyter_recall.set_tool_policy('filesystem.list', 'approve')\n"
        "tid = jupyter_recall.background_run('filesystem.list')"
    )
    widget_mime = "application/vnd.jupyter.widget-view+json"
    # Shown from the task as soon as it asks: during the cell, or just after it.
    shown = [data for data in execution.displays if widget_mime in data]
    deadline = time.monotonic() + 10
    while not shown and time.monotonic() < deadline:
        data = kernel.client.get_iopub_msg(timeout=10)["content"].get("data", {})
        shown += [data] if widget_mime in data else []
    widget = shown[0] if shown else None
    assert widget is not None
    result = kernel.json(
        "jupyter_recall.background_cancel(tid)\n"
        "jupyter_recall.set_tool_policy('filesystem.list', None)\n"
        "print(json.dumps(jupyter_recall.background_status(tid)))"
    )
    assert result["status"] == "cancelled"


def test_background_end_updates_the_starting_cells_output(kernel):
    msg_id = kernel.client.execute(
        "tid = jupyter_recall.background_run('filesystem.list', {'path': '.'})",
        store_history=False,
    )
    display_id = None
    update = None
    deadline = time.monotonic() + 15
    while update is None and time.monotonic() < deadline:
        msg = kernel.client.get_iopub_msg(timeout=15)
        # Updates left over from earlier tests' tasks (a cancel, say) name their own cells.
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "display_data":
            display_id = msg["content"]["transient"]["display_id"]
        elif msg["msg_type"] == "update_display_data":
            update = msg
    kernel.client.get_shell_msg(timeout=10)
    assert update is not None
    assert display_id is not None
    # The update names the starting cell as its parent (the loop kept only those): frontends
    # put it in that cell, where it replaces the display the task started with.
    assert update["content"]["transient"]["display_id"] == display_id
    assert update["content"]["data"]["text/plain"].startswith("[BACKGROUND TASK COMPLETED]")


def test_parallel_magic_in_a_cell(kernel, policy_server):
    (policy_server.root / "a.txt").write_text("A")
    (policy_server.root / "b.txt").write_text("B")
    execution = kernel.ok(
        "results = %parallel filesystem.read path=a.txt ; filesystem.read path=b.txt ; "
        "http.get url=http://127.0.0.1:1/\n"
        "print(json.dumps([[r['success'], r.get('data', {}).get('content')] for r in results]))"
    )
    assert json.loads(execution.stdout.splitlines()[-1]) == [
        [True, "A"],
        [True, "B"],
        [False, None],
    ]
    table = kernel.ok("%parallel filesystem.read path=a.txt")
    assert any("<table>" in data.get("text/html", "") for data in table.displays)
    bad = kernel.run("%parallel")
    assert "%parallel [--limit" in bad.stdout


def test_background_tasks_end_with_the_kernel(policy_server):
    other = Kernel(policy_server, "shutdown.ipynb")
    # shell.run needs approval (server policy): a helper thread in the kernel gives it.
    other.ok(
        "%load_ext jupyter_recall\nimport jupyter_recall, threading, time\n"
        "def answer():\n"
        "    while not jupyter_recall.approvals.pending():\n"
        "        time.sleep(0.01)\n"
        "    (request,) = jupyter_recall.approvals.pending()\n"
        "    jupyter_recall.approvals.answer(request.request_id, True)\n"
        "threading.Thread(target=answer).start()\n"
        "tid = jupyter_recall.background_run('shell.run', "
        "{'command': 'echo $$ > sleeper.pid; sleep 60', 'timeout': 120})"
    )
    pid_file = policy_server.root / "sleeper.pid"
    wait_until(lambda: pid_file.exists() and pid_file.read_text().strip(), timeout=15)
    pid = int(pid_file.read_text())
    assert _running(pid)
    other.close()  # the server shuts the kernel down: its exit hook cancels the task
    wait_until(lambda: not _running(pid), timeout=15)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split(")")[-1].split()[0] != "Z"


BLOCKED = (
    "tool http.get is blocked by server config RecallApp.tool_policies['http'] (policy: block)"
)


def test_background_run_refuses_a_blocked_tool_up_front(kernel):
    out = kernel.run("jupyter_recall.background_run('http.get', {'url': 'http://127.0.0.1:1/'})")
    assert out.error is not None
    assert f"RecallError: {BLOCKED}" in re.sub(r"\x1b\[[0-9;]*m", "", out.error)
    # The agent's dispatch of it answers with run_tool's own error, and no task was started.
    answer = kernel.json(
        "print(json.dumps(jupyter_recall.agent.dispatch('background_run', "
        "{'name': 'http.get', 'params': {'url': 'http://127.0.0.1:1/'}})))"
    )
    assert answer == {"ok": False, "error": BLOCKED, "field": None}
    tasks = kernel.json("print(json.dumps(jupyter_recall.background_list()))")
    assert "http.get" not in [task["tool"] for task in tasks]


def test_tool_policies_in_a_fresh_kernel(policy_server):
    fresh = Kernel(policy_server, "fresh-policies.ipynb")
    try:
        policies = fresh.json(
            "import json, jupyter_recall\nprint(json.dumps(jupyter_recall.tool_policies()))"
        )
        assert policies == {"server": SERVER_POLICIES, "kernel": {}}
        decision = fresh.json("print(json.dumps(jupyter_recall.tool_policy('shell.run')))")
        assert decision == {
            "tool": "shell.run",
            "policy": "approve",
            "source": "server config RecallApp.tool_policies['shell.run']",
        }
    finally:
        fresh.close()


# --- the approvals inbox: answers from outside the notebook, while the asking cell is busy ---


def _pending_record(server: KernelServer, summary: str) -> dict[str, Any]:
    def found() -> dict[str, Any] | None:
        records = server.request("GET", "/api/recall/approvals?status=pending")["approvals"]
        return next((record for record in records if record["summary"] == summary), None)

    return dict(server.wait_for(found, timeout=60))


def _decide_when_asked(
    server: KernelServer, summary: str, decision: str, finished: threading.Event
) -> tuple[threading.Thread, dict[str, Any]]:
    """A helper thread deciding the request over REST once it is pending; it notes whether the
    asking cell was still running then. (The kernel client stays in the test's thread: its
    calls make an event loop per thread.)"""
    seen: dict[str, Any] = {}

    def decide() -> None:
        record = _pending_record(server, summary)
        seen["cell_running"] = not finished.is_set()
        body = {"decision": decision, "note": "over REST"}
        seen["record"] = record
        seen["decided"] = server.request("POST", f"/api/recall/approvals/{record['id']}", body)

    helper = threading.Thread(target=decide)
    helper.start()
    return helper, seen


@pytest.mark.parametrize("decision", ["approve", "deny"])
def test_an_approval_decided_over_rest_reaches_the_blocked_cell(kernel, policy_server, decision):
    # No stdin (a frontend without prompts): the cell blocks in run_tool until the inbox answers.
    command = f"echo decided-{decision}"
    finished = threading.Event()
    helper, seen = _decide_when_asked(
        policy_server, f"shell.run(command={command!r})", decision, finished
    )
    code = f"print(json.dumps(jupyter_recall.run_tool('shell.run', command={command!r})))"
    try:
        cell = kernel.run(code, timeout=120)
    finally:
        finished.set()
        helper.join(60)
    record = seen["record"]
    assert record["asked_by"] == "kernel:tools.ipynb"
    assert seen["cell_running"] is True
    assert seen["decided"]["decided_by"]
    assert cell.error is None, cell.error
    result = _last_json(cell.stdout)
    if decision == "approve":
        assert result["success"] is True
        assert f"decided-{decision}" in json.dumps(result["data"])
    else:
        assert result["error"] == f"tool shell.run was not run: approval denied ({record['id']})"


def test_the_record_of_a_decided_request_is_read_from_the_kernel(kernel, policy_server):
    command = "echo read-the-record"
    finished = threading.Event()
    helper, seen = _decide_when_asked(
        policy_server, f"shell.run(command={command!r})", "deny", finished
    )
    try:
        kernel.ok(f"jupyter_recall.run_tool('shell.run', command={command!r})", timeout=120)
    finally:
        finished.set()
        helper.join(60)
    approval_id = seen["record"]["id"]
    record = kernel.json(f"print(json.dumps(jupyter_recall.approvals.record({approval_id!r})))")
    assert record == seen["decided"]
    assert (record["status"], record["note"]) == ("denied", "over REST")
    unknown = kernel.run("jupyter_recall.approvals.record('0123456789ab')")
    assert unknown.error is not None
    assert "approval '0123456789ab' not found" in unknown.error
    bad = kernel.run("jupyter_recall.approvals.record('no such/id')")
    assert bad.error is not None
    assert "request_id: not an approval id: 'no such/id'" in bad.error


def test_a_prompt_is_withdrawn_when_the_inbox_answers_first(kernel, policy_server):
    command = "echo answered-elsewhere"
    summary = f"shell.run(command={command!r})"

    def approve_elsewhere() -> None:
        record = _pending_record(policy_server, summary)
        body = {"decision": "approve"}
        policy_server.request("POST", f"/api/recall/approvals/{record['id']}", body)

    helper = threading.Thread(target=approve_elsewhere)
    helper.start()
    code = (
        "print(json.dumps(jupyter_recall.run_tool('shell.run', command='echo answered-elsewhere')))"
    )
    text, prompts = _interactive(kernel, code, None)
    helper.join(60)
    assert len(prompts) == 1
    assert "[APPROVAL APPROVED]" in text
    assert _last_json(text)["success"] is True


def test_an_interrupted_cells_approval_request_is_withdrawn_from_the_inbox(kernel, policy_server):
    """Nobody is asked to decide a call that no longer waits: the interrupted cell's request
    leaves the inbox at once, not when it times out."""
    summary = "shell.run(command='echo interrupted')"

    def interrupt_when_asked() -> None:
        _pending_record(policy_server, summary)
        policy_server.request("POST", f"/api/kernels/{kernel.kernel_id}/interrupt", {})

    helper = threading.Thread(target=interrupt_when_asked)
    helper.start()
    try:
        cell = kernel.run("jupyter_recall.run_tool('shell.run', command='echo interrupted')", 120)
    finally:
        helper.join(60)
    assert cell.error is not None
    assert "KeyboardInterrupt" in cell.error

    def withdrawn() -> dict[str, Any] | None:
        records = policy_server.request("GET", "/api/recall/approvals?status=expired")
        return next((r for r in records["approvals"] if r["summary"] == summary), None)

    record = policy_server.wait_for(withdrawn, timeout=30)
    assert record["note"] == "withdrawn: kernel:tools.ipynb stopped waiting before a decision"
    assert record["decided_by"] is None


def test_an_unanswered_kernel_approval_expires_in_the_inbox(kernel, policy_server):
    code = (
        "jupyter_recall.approvals.timeout = 1\n"
        "r = jupyter_recall.run_tool('shell.run', command='echo expires')\n"
        "jupyter_recall.approvals.timeout = 300\n"
        "print(json.dumps(r))"
    )
    cell = kernel.ok(code, timeout=60)
    assert _last_json(cell.stdout)["error"].startswith(
        "tool shell.run was not run: approval timeout"
    )

    def expired() -> dict[str, Any] | None:
        records = policy_server.request("GET", "/api/recall/approvals?status=expired")
        found = [
            r for r in records["approvals"] if r["summary"] == "shell.run(command='echo expires')"
        ]
        return found[0] if found else None

    record = policy_server.wait_for(expired, timeout=30)
    assert record["decided_by"] is None


def _display_texts(kernel: Kernel, until: str, timeout: float = 30) -> dict[str, list[str]]:
    """The text of every display shown or updated on IOPub, by display id, until one reads
    ``until``."""
    texts: dict[str, list[str]] = {}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg = kernel.client.get_iopub_msg(timeout=timeout)
        if msg["msg_type"] not in ("display_data", "update_display_data"):
            continue
        display_id = msg["content"].get("transient", {}).get("display_id")
        text = msg["content"]["data"].get("text/plain", "")
        if display_id is not None:
            texts.setdefault(display_id, []).append(text)
            if text.startswith(until):
                return texts
    raise AssertionError(f"no display read {until!r} in {timeout} s: {texts}")


def test_without_widgets_the_request_is_text_updated_with_its_outcome(kernel):
    hide = (
        "import sys\n_saved_widgets = sys.modules.get('ipywidgets')\n"
        "sys.modules['ipywidgets'] = None\n"
    )
    restore = (
        "sys.modules['ipywidgets'] = _saved_widgets\n"
        "jupyter_recall.set_tool_policy('filesystem.list', None)"
    )
    # Sent without waiting, so IOPub is read here from the start: the background thread can
    # show its request before the cell goes idle, and a waiting execute would swallow it.
    started = kernel.client.execute(
        hide + "jupyter_recall.set_tool_policy('filesystem.list', 'approve')\n"
        "tid = jupyter_recall.background_run('filesystem.list', {'path': '.'})",
        store_history=False,
    )
    try:
        asked = _display_texts(kernel, "[APPROVAL NEEDED] filesystem.list")
        reply = kernel.client.get_shell_msg(timeout=30)
        assert reply["parent_header"]["msg_id"] == started
        assert reply["content"]["status"] == "ok", reply["content"]
        (display_id,) = [key for key, texts in asked.items() if "[APPROVAL NEEDED]" in texts[-1]]
        assert "jupyter_recall.approvals.answer(" in asked[display_id][-1]
        msg_id = kernel.client.execute(
            "(request,) = jupyter_recall.approvals.pending()\n"
            "jupyter_recall.approvals.answer(request.request_id, True)\n"
            "print(json.dumps(jupyter_recall.background_wait(tid, timeout=10)))",
            store_history=False,
        )
        settled = _display_texts(kernel, "[APPROVAL APPROVED] filesystem.list")
        assert settled[display_id][-1].startswith("[APPROVAL APPROVED] filesystem.list")
        assert kernel.client.get_shell_msg(timeout=30)["parent_header"]["msg_id"] == msg_id
    finally:
        kernel.ok(restore)
