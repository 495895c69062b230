"""Kernel executors against a real Jupyter server's managers and real ipykernel 7 kernels."""

from __future__ import annotations

import importlib.util
import json
import os
import time
from datetime import UTC, datetime
from typing import Any

import anyio
import nbformat
import pytest
from jupyter_client.session import Session
from traitlets.config import Config

from jupyter_recall.core.errors import KernelGone
from jupyter_recall.core.model import Job, JobKind, Run, RunStatus, RunTrigger, new_id
from jupyter_recall.core.records import JobOptions, action_from_json, target_from_json
from jupyter_recall.engine.executors import RunOutcome
from jupyter_recall.server.executors.iopub import ChannelRouter, Execution, collect, strip_ansi
from jupyter_recall.server.executors.live import subshell_interrupt_code
from jupyter_recall.server.executors.notebook import executed_copy_path, inject_parameters
from jupyter_recall.server.executors.server_actions import TOOLS_UNAVAILABLE
from jupyter_recall.server.kernels import KernelExecutors
from tests.server.user_notebook import UserNotebook

NB = "nb.ipynb"


@pytest.fixture
def jp_server_config() -> Config:
    # The executors are tested on the server's own managers, without the extension's engine.
    return Config({"ServerApp": {"allow_root": True}})


@pytest.fixture
def executors(jp_serverapp: Any, jp_asyncio_loop: Any) -> Any:
    built = KernelExecutors.from_serverapp(jp_serverapp)
    yield built
    jp_asyncio_loop.run_until_complete(built.aclose())


class Sink:
    """An OutputSink that remembers when each piece arrived."""

    def __init__(self) -> None:
        self.parts: list[tuple[float, str]] = []

    def write(self, text: str) -> None:
        self.parts.append((time.monotonic(), text))

    @property
    def text(self) -> str:
        return "".join(text for _, text in self.parts)


def make_job(action: dict[str, Any], target: dict[str, Any], **options: Any) -> Job:
    """A job of these payloads' records, parsed as the REST edge parses them."""
    now = datetime.now(UTC)
    return Job(
        id=new_id(),
        owner="tester",
        name="test job",
        kind=JobKind.JOB,
        when="now",
        schedule=None,  # type: ignore[arg-type]  # executors never read the schedule
        action=action_from_json(action),
        target=target_from_json(target),
        created_at=now,
        updated_at=now,
        options=JobOptions.from_json(options),
    )


def make_run(job: Job) -> Run:
    now = datetime.now(UTC)
    return Run(
        id=new_id(),
        job_id=job.id,
        owner=job.owner,
        scheduled_for=now,
        trigger=RunTrigger.MANUAL,
        status=RunStatus.RUNNING,
        created_at=now,
        started_at=now,
    )


async def run_job(executors: Any, job: Job) -> tuple[RunOutcome, Sink, Run]:
    sink = Sink()
    run = make_run(job)
    outcome = await executors.execute(job, run, sink)
    return outcome, sink, run


def code(source: str) -> dict[str, Any]:
    return {"type": "code", "code": source}


def at_path(path: str = NB) -> dict[str, Any]:
    return {"type": "kernel", "path": path}


@pytest.fixture
def user(jp_serverapp: Any, jp_create_notebook: Any, jp_asyncio_loop: Any) -> Any:
    jp_create_notebook(NB)
    session = jp_asyncio_loop.run_until_complete(
        jp_serverapp.session_manager.create_session(
            path=NB, name=NB, type="notebook", kernel_name="python3"
        )
    )
    notebook = UserNotebook(jp_serverapp, session)
    jp_asyncio_loop.run_until_complete(notebook.start())
    yield notebook
    notebook.close()


async def test_run_by_path_starts_at_once_while_the_users_cell_sleeps(
    executors: Any, user: Any
) -> None:
    assert (await user.run("x = 41"))["content"]["status"] == "ok"
    sleep_id = user.send("import time; time.sleep(10)")
    sent_at = time.monotonic()
    await anyio.sleep(0.3)  # let the kernel pick the sleep up

    outcome, sink, _ = await run_job(executors, make_job(code("print(x + 1)"), at_path()))

    assert outcome == RunOutcome()
    assert sink.text == "42\n"
    assert sink.parts[0][0] - sent_at < 5, "the run waited for the user's cell"
    # The user's cell is still running: interrupt it to keep the test short.
    await user.manager.interrupt_kernel()
    sleep_reply = await user.reply(sleep_id)
    assert sleep_reply["content"]["ename"] == "KeyboardInterrupt"
    assert time.monotonic() - sent_at < 10
    # Runs leave no trace in the user's cells: no output under the user's requests, and the
    # execution count (history) moves only with the user's own cells.
    iopub = await user.drain_iopub()
    user_ids = {sleep_id}
    leaked = [
        m
        for m in iopub
        if m["parent_header"].get("msg_id") in user_ids and "42" in json.dumps(m["content"])
    ]
    assert leaked == []
    assert (await user.run("pass"))["content"]["execution_count"] == 3


async def test_run_by_kernel_id_and_expression_results(executors: Any, user: Any) -> None:
    job = make_job(code("6 * 7"), {"type": "kernel", "kernel_id": user.kernel_id})
    outcome, sink, _ = await run_job(executors, job)
    assert outcome == RunOutcome()
    assert sink.text == "42\n"
    assert executors.concurrency_key(job) == f"kernel:{user.kernel_id}"


async def test_concurrent_runs_on_one_kernel_run_in_parallel(executors: Any, user: Any) -> None:
    job = make_job(code("import time; time.sleep(1); print('done')"), at_path())
    sinks = [Sink(), Sink()]
    began = time.monotonic()
    async with anyio.create_task_group() as group:
        for sink in sinks:
            group.start_soon(executors.execute, job, make_run(job), sink)
    assert [sink.text for sink in sinks] == ["done\n", "done\n"]
    assert time.monotonic() - began < 1.9, "the two runs took turns"


async def test_runs_go_on_after_the_user_restarts_the_kernel(executors: Any, user: Any) -> None:
    assert (await run_job(executors, make_job(code("print(1)"), at_path())))[1].text == "1\n"
    user.close()
    await user.serverapp.kernel_manager.restart_kernel(user.kernel_id)
    outcome, sink, _ = await run_job(executors, make_job(code("print('x' in dir())"), at_path()))
    assert (outcome, sink.text) == (RunOutcome(), "False\n")


async def test_a_kernel_dying_under_a_run_fails_it(executors: Any, user: Any) -> None:
    job = make_job(code("import os; os._exit(1)"), at_path())
    with anyio.fail_after(15):
        outcome, _, _ = await run_job(executors, job)
    assert outcome.error is not None
    assert outcome.error.startswith(f"kernel {user.kernel_id} ")
    assert outcome.error.endswith(("died during the run", "restarted during the run"))


async def test_error_output_and_outcome(executors: Any, user: Any) -> None:
    outcome, sink, _ = await run_job(executors, make_job(code("print('before')\n1/0"), at_path()))
    assert outcome.error == "ZeroDivisionError: division by zero"
    assert sink.text.startswith("before\n")
    assert "ZeroDivisionError" in sink.text
    assert "\x1b[" not in sink.text
    # A failed run does not abort what the user queues next.
    assert (await user.run("1 + 1"))["content"]["status"] == "ok"


async def test_exclusive_run_waits_for_the_idle_kernel(executors: Any, user: Any) -> None:
    sent_at = time.monotonic()
    sent_wall = datetime.now(UTC)
    sleep_id = user.send("import time; time.sleep(2)")
    await anyio.sleep(0.3)
    job = make_job(code("print('exclusive')"), at_path(), exclusive=True)
    outcome, sink, _ = await run_job(executors, job)
    assert (outcome.error, outcome.skipped_reason) == (None, None)
    assert sink.text == "exclusive\n"
    # The run began only once the user's two-second cell was over, and says so.
    assert sink.parts[0][0] - sent_at >= 2
    assert outcome.started_at is not None
    assert (outcome.started_at - sent_wall).total_seconds() >= 2
    assert (await user.reply(sleep_id))["content"]["status"] == "ok"


async def test_exclusive_run_is_skipped_when_the_kernel_stays_busy(
    executors: Any, user: Any
) -> None:
    sleep_id = user.send("import time; time.sleep(5)")
    await anyio.sleep(0.3)
    job = make_job(code("print('never')"), at_path(), exclusive=True, exclusive_timeout=1)
    began = time.monotonic()
    outcome, sink, _ = await run_job(executors, job)
    assert outcome.skipped_reason is not None
    assert "stayed busy for 1 s" in outcome.skipped_reason
    assert time.monotonic() - began < 3
    assert sink.text == ""
    await user.manager.interrupt_kernel()
    await user.reply(sleep_id)


async def test_missing_kernel_fail_and_skip(executors: Any, jp_serverapp: Any) -> None:
    outcome, _, _ = await run_job(executors, make_job(code("1"), at_path("gone.ipynb")))
    assert outcome.error is not None
    assert "'gone.ipynb'" in outcome.error
    assert "fail" in outcome.error

    skipped, _, _ = await run_job(
        executors, make_job(code("1"), at_path("gone.ipynb"), on_missing_kernel="skip")
    )
    assert skipped == RunOutcome(skipped_reason="no running kernel for notebook 'gone.ipynb'")

    dead = make_job(code("1"), {"type": "kernel", "kernel_id": "no-such-kernel"})
    outcome, _, _ = await run_job(executors, dead)
    assert outcome.error is not None
    assert "'no-such-kernel'" in outcome.error


async def test_missing_kernel_start_opens_a_notebook_session(
    executors: Any, jp_serverapp: Any, jp_create_notebook: Any
) -> None:
    jp_create_notebook("sub/started.ipynb")
    job = make_job(
        code("import os; print(os.getcwd())"),
        at_path("sub/started.ipynb"),
        on_missing_kernel="start",
    )
    outcome, sink, _ = await run_job(executors, job)
    assert outcome == RunOutcome()
    sessions = await jp_serverapp.session_manager.list_sessions()
    assert [(s["path"], s["type"]) for s in sessions] == [("sub/started.ipynb", "notebook")]
    started_line, cwd_line = sink.text.splitlines()
    assert sessions[0]["kernel"]["id"] in started_line
    assert cwd_line == os.path.join(str(jp_serverapp.root_dir), "sub")
    # A second run finds that kernel instead of starting another one.
    await run_job(executors, job)
    assert len(await jp_serverapp.session_manager.list_sessions()) == 1


async def test_a_dead_notebook_kernel_counts_as_missing(executors: Any, user: Any) -> None:
    await user.manager.shutdown_kernel(now=True)
    outcome, _, _ = await run_job(
        executors, make_job(code("1"), at_path(), on_missing_kernel="skip")
    )
    assert outcome.skipped_reason == f"no running kernel for notebook {NB!r}"


async def test_stopping_a_subshell_run_interrupts_only_that_run(executors: Any, user: Any) -> None:
    await user.run("x = 41")
    user_sleep = user.send("import time; time.sleep(3)")
    sink = Sink()
    job = make_job(code("print('looping', flush=True)\nwhile True:\n    pass"), at_path())
    async with anyio.create_task_group() as group:

        async def run_then_record() -> None:
            await executors.execute(job, make_run(job), sink)

        group.start_soon(run_then_record)
        with anyio.fail_after(10):
            while "looping" not in sink.text:
                await anyio.sleep(0.05)
        group.cancel_scope.cancel()

    assert "KeyboardInterrupt" in sink.text
    assert "[recall] run stopped: KeyboardInterrupt raised in the run's subshell" in sink.text
    # The kernel goes on: the user's cell was not interrupted, and the next run works.
    outcome, after, _ = await run_job(executors, make_job(code("print(x)"), at_path()))
    assert (outcome, after.text) == (RunOutcome(), "41\n")
    assert (await user.reply(user_sleep))["content"]["status"] == "ok"


async def test_interrupt_code_touches_no_other_execution(executors: Any, user: Any) -> None:
    # Aimed at a request that is not executing, the interrupt finds nothing and does nothing.
    job = make_job(code(subshell_interrupt_code("not-a-running-request")), at_path())
    outcome, sink, _ = await run_job(executors, job)
    assert (outcome, sink.text) == (RunOutcome(), "0\n")
    assert (await user.run("print('fine')"))["content"]["status"] == "ok"


async def test_instruction_is_delivered_in_the_kernel(executors: Any, user: Any) -> None:
    job = make_job({"type": "instruction", "instruction": "check the log"}, at_path())
    outcome, sink, _ = await run_job(executors, job)
    assert outcome == RunOutcome()
    if importlib.util.find_spec("jupyter_recall.kernel.jobs.recall") is None:
        assert sink.text == "[RECALL] check the log\n"
    # The delivery helper leaves nothing in the user's namespace.
    reply = await user.run("assert '_jupyter_recall_deliver' not in globals()")
    assert reply["content"]["status"] == "ok"


async def test_headless_run_gets_a_fresh_kernel_that_is_gone_afterwards(
    executors: Any, jp_serverapp: Any
) -> None:
    job = make_job(
        code("import os\nprint(os.environ['JUPYTER_RECALL_RUN_ID'])\nprint(os.getpid())"),
        {"type": "headless", "kernel_name": "python3"},
    )
    outcome, sink, run = await run_job(executors, job)
    assert outcome == RunOutcome()
    run_id, pid = sink.text.splitlines()
    assert run_id == run.id
    assert not _process_exists(int(pid))
    assert jp_serverapp.kernel_manager.list_kernel_ids() == []
    assert executors.concurrency_key(job) == "headless"


async def test_stopping_a_headless_run_shuts_its_kernel_down(executors: Any) -> None:
    sink = Sink()
    job = make_job(
        code("import os, time\nprint(os.getpid(), flush=True)\ntime.sleep(60)"),
        {"type": "headless"},
    )
    async with anyio.create_task_group() as group:

        async def run_then_record() -> None:
            await executors.execute(job, make_run(job), sink)

        group.start_soon(run_then_record)
        with anyio.fail_after(20):
            while not sink.text:
                await anyio.sleep(0.05)
        group.cancel_scope.cancel()
    pid = int(sink.text.splitlines()[0])
    assert not _process_exists(pid)
    assert sink.text.endswith("[recall] run stopped: its headless kernel is shut down\n")


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_notebook_action_with_parameters_leaves_an_executed_copy(
    executors: Any, jp_serverapp: Any, jp_root_dir: Any
) -> None:
    nb = nbformat.v4.new_notebook()
    defaults = nbformat.v4.new_code_cell("n = 1\nlabel = 'default'")
    defaults.metadata["tags"] = ["parameters"]
    nb.cells = [defaults, nbformat.v4.new_code_cell("print(label, n * 2)")]
    (jp_root_dir / "reports").mkdir()
    nbformat.write(nb, jp_root_dir / "reports" / "nb.ipynb")

    action = {"type": "notebook", "path": "reports/nb.ipynb", "parameters": {"n": 21, "label": "x"}}
    job = make_job(action, {"type": "headless"})
    outcome, sink, run = await run_job(executors, job)

    assert outcome == RunOutcome()
    copy_path = f"reports/nb.recall-{run.id}.ipynb"
    assert "x 42\n" in sink.text
    assert sink.text.endswith(f"[recall] executed copy: {copy_path}\n")
    executed = nbformat.read(jp_root_dir / copy_path, as_version=4)
    assert [c.metadata.get("tags") for c in executed.cells] == [
        ["parameters"],
        ["injected-parameters"],
        None,
    ]
    assert executed.cells[2].outputs[0]["text"] == "x 42\n"
    # The original is left as it was.
    assert len(nbformat.read(jp_root_dir / "reports" / "nb.ipynb", as_version=4).cells) == 2


async def test_failing_notebook_keeps_the_partial_copy(executors: Any, jp_root_dir: Any) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("raise ValueError('bad input')")]
    nbformat.write(nb, jp_root_dir / "broken.ipynb")
    job = make_job({"type": "notebook", "path": "broken.ipynb"}, {"type": "headless"})
    outcome, _, run = await run_job(executors, job)
    assert outcome.error == "cell 0: ValueError: bad input"
    executed = nbformat.read(jp_root_dir / f"broken.recall-{run.id}.ipynb", as_version=4)
    assert executed.cells[0].outputs[0]["ename"] == "ValueError"


async def test_server_actions(executors: Any) -> None:
    note = make_job(
        {"type": "notification", "message": "training done", "title": "GPU"}, {"type": "server"}
    )
    outcome, sink, _ = await run_job(executors, note)
    assert (outcome, sink.text) == (RunOutcome(), "GPU: training done\n")
    assert executors.concurrency_key(note) == "server"
    tool = make_job({"type": "tool", "name": "shell.run", "params": {}}, {"type": "server"})
    outcome, _, _ = await run_job(executors, tool)
    assert outcome == RunOutcome(error=TOOLS_UNAVAILABLE)  # no tool runner wired here


async def test_routing_keys_and_payload_errors(executors: Any) -> None:
    assert executors.concurrency_key(make_job(code("1"), at_path("a/b.ipynb"))) == (
        "kernel:a/b.ipynb"
    )
    notebook = make_job({"type": "notebook", "path": "n.ipynb"}, {"type": "server"})
    assert executors.concurrency_key(notebook) == "headless"
    # Records parsed apart (a job stored by an older release) are checked together at fire time.
    bad = make_job({"type": "notebook", "path": "n.ipynb"}, at_path())
    assert executors.concurrency_key(bad) == "invalid-payload"
    with pytest.raises(ValueError, match=r"target\.type.*accepted: headless, server"):
        await run_job(executors, bad)
    with pytest.raises(ValueError, match=r"target\.type.*accepted: kernel, headless, server"):
        make_job(code("1"), {"type": "cluster"})
    with pytest.raises(ValueError, match=r"on_missing_kernel.*accepted: start, skip, fail"):
        make_job(code("1"), at_path(), on_missing_kernel="wait")


def test_parameters_are_injected_after_the_parameters_cell() -> None:
    nb = nbformat.v4.new_notebook()
    first = nbformat.v4.new_markdown_cell("# title")
    params = nbformat.v4.new_code_cell("a = 1")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [first, params]
    inject_parameters(nb, {"a": 2, "flag": True, "names": ["x"], "none": None})
    assert nb.cells[2].source.splitlines()[1:] == [
        "a = 2",
        "flag = True",
        "names = ['x']",
        "none = None",
    ]
    bare = nbformat.v4.new_notebook()
    bare.cells = [nbformat.v4.new_code_cell("print(a)")]
    inject_parameters(bare, {"a": 3})
    assert bare.cells[0].metadata["tags"] == ["injected-parameters"]
    assert executed_copy_path("d/nb.ipynb", "r1") == "d/nb.recall-r1.ipynb"


def test_strip_ansi() -> None:
    assert strip_ansi("\x1b[0;31mValueError\x1b[0m: x") == "ValueError: x"


class _Output:
    def write(self, text: str) -> None:
        pass


async def test_a_closed_connection_names_its_kernel_once() -> None:
    router = ChannelRouter(Session(), label="fresh kernel k1")
    msg = router.new_message("execute_request", {})
    with router.track(msg) as inbox:
        router.close()
        with pytest.raises(KernelGone) as during:
            await collect(inbox, Execution("m1"), _Output(), label=router.label)
    with pytest.raises(KernelGone) as after, router.track(msg):
        pass
    assert str(during.value) == "the connection to fresh kernel k1 closed during the run"
    assert str(after.value) == "the connection to fresh kernel k1 is closed"
