"""The standalone scheduler started with --gateway-url runs fresh kernels on a real Jupyter
Kernel Gateway on loopback: no Jupyter server anywhere, the job written straight to the store."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from jupyter_recall.core.model import Run, RunStatus
from jupyter_recall.core.records import CodeAction, HeadlessTarget
from jupyter_recall.engine.jobs import NewJob, create_jobs
from jupyter_recall.store.base import RunFilter
from jupyter_recall.store.urls import open_store, sqlite_url
from tests.server.kernel_gateway import KernelGateway, kernel_gateway_in
from tests.standalone.scheduler_process import SchedulerProcess
from tests.standalone.test_standalone import wait_until

pytestmark = pytest.mark.slow

OWNER = "alice"


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[KernelGateway]:
    yield from kernel_gateway_in(tmp_path)


@pytest.fixture
def scheduler(tmp_path: Path, gateway: KernelGateway) -> Iterator[SchedulerProcess]:
    root = tmp_path / "root"
    root.mkdir()
    process = SchedulerProcess(
        root, tmp_path / "recall.sqlite", args=(f"--gateway-url={gateway.url}",)
    ).start()
    yield process
    process.stop()


def add_headless_job(db: Path, code: str) -> str:
    """Insert a job due in a few seconds as a server would, without one."""
    store = open_store(sqlite_url(str(db)))
    try:
        now = datetime.now(UTC)
        new = NewJob(
            when=(now + timedelta(seconds=3)).isoformat(),
            action=CodeAction(code),
            target=HeadlessTarget("python3"),
        )
        (job,) = create_jobs(store, [new], owner=OWNER, now=now, default_tz="UTC")
        return job.id
    finally:
        store.close()


def finished_run(db: Path, job_id: str) -> Run | None:
    store = open_store(sqlite_url(str(db)))
    try:
        runs = store.list_runs(owner=None, where=RunFilter(job_id=job_id))
    finally:
        store.close()
    ended = [run for run in runs if run.status is not RunStatus.RUNNING]
    return ended[0] if ended else None


def test_the_scheduler_runs_a_headless_job_in_a_gateway_kernel(
    scheduler: SchedulerProcess, gateway: KernelGateway, tmp_path: Path
) -> None:
    report, go = tmp_path / "kernel.json", tmp_path / "go"
    code = (
        "import json, os, time\n"
        "facts = {'ppid': os.getppid(), 'run': os.environ.get('JUPYTER_RECALL_RUN_ID')}\n"
        f"open({str(report)!r}, 'w').write(json.dumps(facts))\n"
        f"while not os.path.exists({str(go)!r}): time.sleep(0.05)\n"
        "print('done')"
    )
    job_id = add_headless_job(scheduler.db_path, code)
    wait_until(report.exists, timeout=60)
    facts = json.loads(report.read_text())
    # The kernel is the gateway's child, not the scheduler's, and the gateway lists it.
    assert scheduler.process is not None
    assert facts["ppid"] == gateway.process.pid != scheduler.process.pid
    assert len(gateway.kernels()) == 1
    go.touch()
    run = wait_until(lambda: finished_run(scheduler.db_path, job_id), timeout=30)
    assert (run.status, run.output) == (RunStatus.SUCCEEDED, "done\n"), scheduler.log.read_text()
    assert (run.engine_id or "").startswith("scheduler@")
    # The run's variables reach the gateway kernel too.
    assert facts["run"] == run.id
    # The run's kernel is shut down on the gateway once the run ends.
    wait_until(lambda: gateway.kernels() == [], timeout=30)


def test_a_gateway_kernel_that_dies_fails_the_schedulers_run(
    scheduler: SchedulerProcess, gateway: KernelGateway
) -> None:
    # The gateway restarts the kernel under the run: its websocket's status fails the run.
    code = "print('dying', flush=True)\nimport os, time\ntime.sleep(1.5)\nos._exit(1)"
    job_id = add_headless_job(scheduler.db_path, code)
    run = wait_until(lambda: finished_run(scheduler.db_path, job_id), timeout=60)
    assert run.status is RunStatus.FAILED, scheduler.log.read_text()
    assert run.error == "headless kernel python3 died during the run"
    assert run.output.startswith("dying\n")
    wait_until(lambda: gateway.kernels() == [], timeout=90)


def test_a_gateway_kernel_a_killed_scheduler_left_is_shut_down_when_it_starts_again(
    scheduler: SchedulerProcess, gateway: KernelGateway
) -> None:
    job_id = add_headless_job(scheduler.db_path, "import time\ntime.sleep(300)")

    def busy() -> list[str]:
        return [k["id"] for k in gateway.kernels() if k["execution_state"] == "busy"]

    running = wait_until(busy, timeout=60)
    scheduler.stop(signal.SIGKILL)
    time.sleep(1)
    assert [kernel["id"] for kernel in gateway.kernels()] == running  # it outlived the scheduler

    scheduler.start()
    assert wait_until(lambda: "a stopped predecessor left" in scheduler.log.read_text(), 60)
    assert gateway.kernels() == []
    run = wait_until(lambda: finished_run(scheduler.db_path, job_id), timeout=30)
    assert run.status is RunStatus.INTERRUPTED
