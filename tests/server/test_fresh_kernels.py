"""Fresh kernels come from the server's kernel manager, warm ones from the pool (real kernels)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from traitlets import TraitError
from traitlets.config import Config

from jupyter_recall.engine.executors import RunOutcome
from jupyter_recall.server.app import RecallApp
from jupyter_recall.server.executors.fresh import FreshKernels
from jupyter_recall.server.executors.kernel_pool import KernelPool
from jupyter_recall.server.executors.launcher import LaunchedKernel, ManagedKernelLauncher
from jupyter_recall.server.kernels import KernelExecutors
from tests.bench_script import run_bench
from tests.server.live_server import LiveServer
from tests.server.test_kernel_executors import Sink, code, make_job, make_run, run_job
from tests.server.test_kernel_executors import _process_exists as process_exists

WAIT_FOR_GO = (
    "import os, time\n"
    "print(os.getpid(), flush=True)\n"
    "deadline = time.time() + 120\n"
    "while not os.path.exists('go') and time.time() < deadline:\n"
    "    time.sleep(0.05)\n"
    "print('done')"
)


@pytest.fixture
def jp_server_config() -> Config:
    # The executors and the pool on the server's own managers, without the extension's engine.
    return Config({"ServerApp": {"allow_root": True}})


@pytest.fixture
def launcher(jp_serverapp: Any) -> ManagedKernelLauncher:
    return ManagedKernelLauncher(jp_serverapp.kernel_manager, jp_serverapp.kernel_spec_manager)


async def eventually(condition: Callable[[], bool], timeout: float = 60.0) -> None:
    with anyio.fail_after(timeout):
        while not condition():
            await anyio.sleep(0.05)


def kernel_pid(serverapp: Any, kernel_id: str) -> int:
    return int(serverapp.kernel_manager.get_kernel(kernel_id).provisioner.pid)


async def test_a_fresh_kernel_is_a_server_kernel_while_its_run_lasts(
    jp_serverapp: Any, jp_fetch: Any, jp_root_dir: Path
) -> None:
    executors = KernelExecutors.from_serverapp(jp_serverapp)
    job = make_job(code(WAIT_FOR_GO), {"type": "headless", "kernel_name": "python3"})
    sink = Sink()
    outcome: list[RunOutcome] = []

    async def run() -> None:
        outcome.append(await executors.execute(job, make_run(job), sink))

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        await eventually(lambda: "\n" in sink.text)
        listed = json.loads((await jp_fetch("api", "kernels")).body)
        assert [kernel["name"] for kernel in listed] == ["python3"]
        # The kernel listed is the one running the code.
        assert kernel_pid(jp_serverapp, listed[0]["id"]) == int(sink.text.split()[0])
        (jp_root_dir / "go").touch()
    assert outcome == [RunOutcome()]
    assert sink.text.endswith("done\n")
    assert json.loads((await jp_fetch("api", "kernels")).body) == []
    assert not process_exists(int(sink.text.split()[0]))


async def test_a_fresh_kernel_that_dies_fails_its_run(jp_serverapp: Any) -> None:
    executors = KernelExecutors.from_serverapp(jp_serverapp)
    job = make_job(code("import os\nos._exit(3)"), {"type": "headless"})
    outcome, _, _ = await run_job(executors, job)
    assert outcome.error is not None
    assert "died during the run" in outcome.error
    assert jp_serverapp.kernel_manager.list_kernel_ids() == []


async def test_the_pool_hands_out_each_warm_kernel_once_and_refills(
    jp_serverapp: Any, launcher: ManagedKernelLauncher, jp_root_dir: Path
) -> None:
    pool = KernelPool(launcher, {"python3": 2}, cwd=str(jp_root_dir))
    await pool.start()
    await eventually(lambda: len(pool.ready_ids("python3")) == 2)
    executors = KernelExecutors.from_serverapp(jp_serverapp, fresh=FreshKernels(launcher, pool))
    (jp_root_dir / "sub").mkdir()
    job = make_job(
        code("import os\nprint(os.getpid(), os.getcwd(), os.environ['JUPYTER_RECALL_RUN_ID'])"),
        {"type": "headless", "cwd": "sub"},
    )
    used: list[str] = []
    try:
        for _ in range(3):
            pids = {kid: kernel_pid(jp_serverapp, kid) for kid in pool.ready_ids("python3")}
            next_id = pool.ready_ids("python3")[0]
            outcome, sink, run = await run_job(executors, job)
            assert outcome == RunOutcome()
            pid, cwd, run_id = sink.text.split()
            # The run had the oldest warm kernel, moved to its cwd and told its run id.
            assert int(pid) == pids[next_id]
            assert (cwd, run_id) == (str(jp_root_dir / "sub"), run.id)
            used.append(next_id)
            # Shut down after the run, and a replacement comes: never the same kernel again.
            assert next_id not in jp_serverapp.kernel_manager
            await eventually(lambda: len(pool.ready_ids("python3")) == 2)
            assert not set(used) & set(pool.ready_ids("python3"))
        assert len(set(used)) == 3
    finally:
        waiting = pool.ready_ids("python3")
        await pool.aclose()
    assert waiting
    assert jp_serverapp.kernel_manager.list_kernel_ids() == []


class StuckWarmUpPool(KernelPool):
    """A pool whose first execution in a new kernel never answers (a gateway gone, say)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.warming: list[str] = []

    async def _warm_up(self, kernel: LaunchedKernel) -> None:
        self.warming.append(kernel.kernel_id)
        await anyio.sleep_forever()


async def test_a_kernel_the_pool_was_warming_up_when_it_closed_is_shut_down(
    jp_serverapp: Any, launcher: ManagedKernelLauncher, jp_root_dir: Path
) -> None:
    # Before, the kernel was left in the server's kernel manager: with a gateway that does not
    # answer, jupyter_server's own shutdown of it at exit failed and SIGTERM hung.
    pool = StuckWarmUpPool(launcher, {"python3": 1}, cwd=str(jp_root_dir))
    await pool.start()
    await eventually(lambda: bool(pool.warming))
    assert jp_serverapp.kernel_manager.list_kernel_ids() == pool.warming
    assert pool.ready_ids("python3") == []
    await pool.aclose()
    assert jp_serverapp.kernel_manager.list_kernel_ids() == []


async def test_the_launcher_shuts_down_at_close_the_kernels_it_started_and_no_others(
    jp_serverapp: Any, launcher: ManagedKernelLauncher, jp_root_dir: Path
) -> None:
    manager = jp_serverapp.kernel_manager
    users = await manager.start_kernel(kernel_name="python3")
    ours = await launcher.start(None, cwd=str(jp_root_dir), env={}, timeout=60)
    shut = await launcher.start(None, cwd=str(jp_root_dir), env={}, timeout=60)
    await launcher.shutdown(shut)
    try:
        assert set(manager.list_kernel_ids()) == {users, ours.kernel_id}
        await launcher.aclose()
        assert manager.list_kernel_ids() == [users]
    finally:
        ours.connection.close()
        await manager.shutdown_kernel(users, now=True)


@pytest.mark.parametrize("step", ["start", "shutdown"])
async def test_a_kernel_whose_task_is_cancelled_natively_is_shut_down(
    jp_serverapp: Any, launcher: ManagedKernelLauncher, jp_root_dir: Path, step: str
) -> None:
    # ``Task.cancel`` (the pool's close cancels its fillers so) went through anyio's shielded
    # scope: a shutdown cancelled half-way left the kernel in the server's kernel manager,
    # and with a gateway that does not answer, SIGTERM hung in jupyter_server's own shutdown.
    manager = jp_serverapp.kernel_manager
    if step == "start":
        task = asyncio.ensure_future(launcher.start(None, cwd=str(jp_root_dir), env={}, timeout=60))
        await eventually(lambda: bool(manager.list_kernel_ids()))
    else:
        kernel = await launcher.start(None, cwd=str(jp_root_dir), env={}, timeout=60)
        task = asyncio.ensure_future(launcher.shutdown(kernel))
        await asyncio.sleep(0)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    await launcher.aclose()
    assert manager.list_kernel_ids() == []


async def test_a_notebook_runs_in_a_warm_kernel(
    jp_serverapp: Any, launcher: ManagedKernelLauncher, jp_root_dir: Path
) -> None:
    import nbformat

    pool = KernelPool(launcher, {"python3": 1}, cwd=str(jp_root_dir))
    await pool.start()
    await eventually(lambda: len(pool.ready_ids("python3")) == 1)
    warm_id = pool.ready_ids("python3")[0]
    warm_pid = kernel_pid(jp_serverapp, warm_id)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import os\nprint(os.getpid(), os.getcwd())")]
    (jp_root_dir / "reports").mkdir()
    nbformat.write(nb, jp_root_dir / "reports" / "nb.ipynb")
    executors = KernelExecutors.from_serverapp(jp_serverapp, fresh=FreshKernels(launcher, pool))
    try:
        job = make_job({"type": "notebook", "path": "reports/nb.ipynb"}, {"type": "headless"})
        outcome, sink, _ = await run_job(executors, job)
        assert outcome == RunOutcome()
        assert f"{warm_pid} {jp_root_dir / 'reports'}\n" in sink.text
        assert warm_id not in jp_serverapp.kernel_manager
    finally:
        await pool.aclose()


async def test_pool_entries_that_cannot_be_pooled_are_refused_naming_them(
    launcher: ManagedKernelLauncher, jp_serverapp: Any, jp_root_dir: Path
) -> None:
    # pytest-jupyter installs an "echo" kernel spec, of language "echo".
    pool = KernelPool(launcher, {"no-such-spec": 1, "echo": 1}, cwd=str(jp_root_dir))
    await pool.start()
    assert pool.problems == [
        "RecallApp.kernel_pool['no-such-spec']: no such kernel spec; not pooled",
        "RecallApp.kernel_pool['echo']: its language is 'echo'; only a Python kernel can take "
        "a run's cwd and environment once started (accepted: python kernel specs); not pooled",
    ]
    assert not pool.pooled("no-such-spec")
    assert not pool.pooled("echo")
    assert await pool.take("no-such-spec") is None
    await pool.aclose()
    assert jp_serverapp.kernel_manager.list_kernel_ids() == []


def test_kernel_pool_sizes_are_checked_naming_the_option() -> None:
    assert RecallApp().kernel_pool == {}
    assert RecallApp(kernel_pool={"python3": 2}).kernel_pool == {"python3": 2}
    with pytest.raises(TraitError, match=r"RecallApp\.kernel_pool\['python3'\] must be 0\.\.32"):
        RecallApp(kernel_pool={"python3": 33})
    with pytest.raises(TraitError, match=r"RecallApp\.kernel_pool: a kernel spec name is empty"):
        RecallApp(kernel_pool={"": 1})
    with pytest.raises(TraitError):
        RecallApp(kernel_pool={"python3": "two"})


def kernel_children(server_pid: int) -> set[int]:
    """Pids of the kernels a server process started (its children running ipykernel)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == server_pid and b"ipykernel" in command:
            found.add(int(entry.name))
    return found


@pytest.mark.slow
def test_a_server_with_a_pool_keeps_warm_kernels_and_shuts_them_down_at_stop(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    server = LiveServer(
        root, tmp_path / "recall.sqlite", args=("--RecallApp.kernel_pool=python3=1",)
    ).start()
    try:
        assert server.process is not None
        server_pid = server.process.pid
        warm = server.wait_for(server.kernels_while_starting, timeout=60)
        assert [kernel["name"] for kernel in warm] == ["python3"]
        job = server.request(
            "POST",
            "/api/recall/jobs",
            {
                "when": (datetime.now(UTC) + timedelta(seconds=1)).isoformat(),
                "action": code("print('hi')"),
                "target": {"type": "headless"},
            },
        )

        def finished() -> list[dict[str, Any]]:
            runs = server.request("GET", f"/api/recall/jobs/{job['id']}/runs")["runs"]
            return [run for run in runs if run["status"] == "succeeded"]

        server.wait_for(finished, timeout=60)
        # The warm kernel served the run and is gone; its replacement is warming or warm.
        warm_id = warm[0]["id"]
        replaced = server.wait_for(
            lambda: [k["id"] for k in server.kernels_while_starting() or [] if k["id"] != warm_id],
            timeout=60,
        )
        assert warm_id not in replaced
        assert [run["output"] for run in finished()] == ["hi\n"]
        kernels = server.wait_for(lambda: kernel_children(server_pid), timeout=30)
    finally:
        server.stop()
    assert not {pid for pid in kernels if process_exists(pid)}


@pytest.mark.slow
def test_the_latency_bench_reports_fresh_kernels_with_and_without_the_pool() -> None:
    small = ("--live", "2", "--fresh", "2", "--pooled", "2", "--json")
    result = run_bench("kernel_latency.py", *small, timeout=280)
    for figure in ("live_kernel", "fresh_kernel", "pooled_kernel"):
        assert result[figure]["runs"] == 2, result
    side_by_side = result["fresh_first_output_p50_ms"]
    assert set(side_by_side) == {"started_per_run", "from_pool"}
    print("fresh kernels, due to first output, p50 ms:", side_by_side)


async def test_a_plain_multi_kernel_manager_launches_without_a_server(tmp_path: Path) -> None:
    from jupyter_client.multikernelmanager import AsyncMultiKernelManager

    from jupyter_recall.server.executors.iopub import run_quietly

    manager = AsyncMultiKernelManager()
    launcher = ManagedKernelLauncher(manager)
    fresh = FreshKernels(launcher)
    variables = {"JUPYTER_RECALL_RUN_ID": "r1"}
    async with fresh.kernel(
        None, cwd=str(tmp_path), variables=variables, startup_timeout=60
    ) as kernel:
        assert kernel.kernel_name == manager.default_kernel_name
        assert manager.list_kernel_ids() == [kernel.kernel_id]
        probe = (
            "import os\nassert os.getcwd() == %r and os.environ['JUPYTER_RECALL_RUN_ID'] == 'r1'"
        )
        execution = await run_quietly(kernel.connection, probe % str(tmp_path), timeout=60)
        assert execution.error is None
    assert manager.list_kernel_ids() == []


async def test_a_warm_kernel_culled_while_waiting_is_replaced_without_a_run(
    jp_serverapp: Any, launcher: ManagedKernelLauncher, jp_root_dir: Path
) -> None:
    # The server's own idle culler, quick: it culls the warm kernel once idle for 2 s.
    manager = jp_serverapp.kernel_manager
    manager.cull_idle_timeout = 2
    manager.cull_interval = 1
    pool = KernelPool(launcher, {"python3": 1}, cwd=str(jp_root_dir))  # checks every 10 s
    await pool.start()
    try:
        await eventually(lambda: len(pool.ready_ids("python3")) == 1)
        first = pool.ready_ids("python3")[0]
        await eventually(lambda: first not in manager, timeout=30)
        # No run came: the pool found it gone by itself and started another.
        await eventually(lambda: pool.ready_ids("python3") not in ([], [first]), timeout=45)
        assert pool.ready_ids("python3")[0] in manager
    finally:
        manager.cull_idle_timeout = 0
        await pool.aclose()
