"""Fresh kernels on a real Jupyter Kernel Gateway, for a server started with --gateway-url."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import nbformat
import pytest

from tests.server.kernel_gateway import KernelGateway, kernel_gateway_in
from tests.server.live_server import LiveServer


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[KernelGateway]:
    yield from kernel_gateway_in(tmp_path)


@pytest.fixture
def server(tmp_path: Path, gateway: KernelGateway) -> Iterator[LiveServer]:
    root = tmp_path / "root"
    root.mkdir()
    live = LiveServer(
        root, tmp_path / "recall.sqlite", args=(f"--gateway-url={gateway.url}",)
    ).start()
    yield live
    live.stop()


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def soon() -> str:
    return (datetime.now(UTC) + timedelta(seconds=1)).isoformat()


def finished_run(server: LiveServer, job_id: str, timeout: float = 90) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        runs = server.request("GET", f"/api/recall/jobs/{job_id}/runs")["runs"]
        ended = [run for run in runs if run["status"] not in ("pending", "running")]
        return ended[0] if ended else None

    return dict(server.wait_for(done, timeout=timeout))


@pytest.mark.slow
def test_a_headless_run_has_its_kernel_on_the_gateway(
    server: LiveServer, gateway: KernelGateway, tmp_path: Path
) -> None:
    report, go = tmp_path / "kernel.json", tmp_path / "go"
    source = (
        "import json, os, time\n"
        f"facts = {{'ppid': os.getppid(), 'run': os.environ.get('JUPYTER_RECALL_RUN_ID')}}\n"
        f"open({str(report)!r}, 'w').write(json.dumps(facts))\n"
        f"while not os.path.exists({str(go)!r}): time.sleep(0.05)\n"
        "print('done')"
    )
    job = server.request(
        "POST",
        "/api/recall/jobs",
        {
            "when": soon(),
            "action": {"type": "code", "code": source},
            "target": {"type": "headless"},
        },
    )
    server.wait_for(report.exists, timeout=90)
    facts = json.loads(report.read_text())
    # The kernel is the gateway's child, listed by the gateway (and so by the server).
    assert facts["ppid"] == gateway.process.pid
    on_gateway = [kernel["id"] for kernel in gateway.kernels()]
    assert len(on_gateway) == 1
    assert [kernel["id"] for kernel in server.request("GET", "/api/kernels")] == on_gateway
    go.touch()
    run = finished_run(server, job["id"])
    assert (run["status"], run["output"]) == ("succeeded", "done\n")
    # The run's variables reach a gateway kernel too (the gateway passes only KERNEL_*).
    assert facts["run"] == run["id"]
    server.wait_for(lambda: gateway.kernels() == [], timeout=30)


@pytest.mark.slow
def test_a_notebook_runs_in_a_gateway_kernel(server: LiveServer, gateway: KernelGateway) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("import os\nprint('parent', os.getppid())"),
        nbformat.v4.new_code_cell("import time\ntime.sleep(4)"),
    ]
    nbformat.write(nb, server.root / "report.ipynb")
    job = server.request(
        "POST",
        "/api/recall/jobs",
        {
            "when": soon(),
            "action": {"type": "notebook", "path": "report.ipynb"},
            "target": {"type": "headless"},
        },
    )
    assert server.process is not None
    cpu_before = cpu_seconds(server.process.pid)
    run = finished_run(server, job["id"])
    cpu_during = cpu_seconds(server.process.pid) - cpu_before
    assert run["status"] == "succeeded", run
    # The server waits for the kernel's messages without polling: a 4 s cell costs it a small
    # fraction of those 4 s (jupyter_server's own gateway client would spin through them).
    print(f"server CPU during the notebook run: {cpu_during:.2f} s")
    assert cpu_during < 1.0
    assert f"parent {gateway.process.pid}\n" in run["output"]
    executed = nbformat.read(server.root / f"report.recall-{run['id']}.ipynb", as_version=4)
    assert executed.cells[0].outputs[0]["text"] == f"parent {gateway.process.pid}\n"
    server.wait_for(lambda: gateway.kernels() == [], timeout=30)


@pytest.mark.slow
def test_warm_kernels_wait_on_the_gateway(gateway: KernelGateway, tmp_path: Path) -> None:
    root = tmp_path / "pooled-root"
    root.mkdir()
    server = LiveServer(
        root,
        tmp_path / "pooled.sqlite",
        args=(f"--gateway-url={gateway.url}", "--RecallApp.kernel_pool=python3=1"),
    ).start()
    try:
        warm = server.wait_for(gateway.kernels, timeout=60)
        source = "import os\nprint(os.getppid(), os.environ['JUPYTER_RECALL_RUN_ID'])"
        job = server.request(
            "POST",
            "/api/recall/jobs",
            {
                "when": soon(),
                "action": {"type": "code", "code": source},
                "target": {"type": "headless"},
            },
        )
        run = finished_run(server, job["id"])
        assert run["status"] == "succeeded", run
        assert run["output"] == f"{gateway.process.pid} {run['id']}\n"
        # The warm kernel served the run and was shut down; a new one waits in its place.
        refilled = server.wait_for(
            lambda: [k["id"] for k in gateway.kernels() if k["id"] != warm[0]["id"]], timeout=60
        )
        assert warm[0]["id"] not in refilled
    finally:
        server.stop()
    server.wait_for(lambda: gateway.kernels() == [], timeout=30)


DYING = "print('dying', flush=True)\nimport os, time\ntime.sleep(1.5)\nos._exit(1)"
"""Code whose kernel dies after printing; the gateway restarts such a kernel under the run."""


@pytest.mark.slow
def test_a_gateway_kernel_that_dies_fails_its_headless_run(
    server: LiveServer, gateway: KernelGateway
) -> None:
    job = server.request(
        "POST",
        "/api/recall/jobs",
        {"when": soon(), "action": {"type": "code", "code": DYING}, "target": {"type": "headless"}},
    )
    run = finished_run(server, job["id"], timeout=45)
    assert run["status"] == "failed", run
    assert run["error"] == "headless kernel python3 died during the run", run
    assert "dying\n" in run["output"]
    # A dead kernel may stay listed while the gateway's restarter works on it and our
    # shutdown follows: on a loaded machine (two test workers) that took over 30 s once. If it
    # stays, the server's log says whether the shutdown failed.
    left = gateway.kernels
    try:
        server.wait_for(lambda: left() == [], timeout=60)
    except AssertionError:
        tail = server.log.read_text(errors="replace")[-4000:]
        raise AssertionError(f"the gateway still lists {left()}:\n{tail}") from None


@pytest.mark.slow
def test_a_gateway_kernel_that_dies_fails_its_notebook_run(
    server: LiveServer, gateway: KernelGateway
) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("print('first')"), nbformat.v4.new_code_cell(DYING)]
    nbformat.write(nb, server.root / "dies.ipynb")
    job = server.request(
        "POST",
        "/api/recall/jobs",
        {
            "when": soon(),
            "action": {"type": "notebook", "path": "dies.ipynb"},
            "target": {"type": "headless"},
        },
    )
    run = finished_run(server, job["id"], timeout=45)
    assert run["status"] == "failed", run
    assert run["error"] == "headless kernel python3 died during the run", run
    # What the cell printed before its kernel died is the run's output too.
    assert "first\ndying\n" in run["output"]
    # nbclient's liveness poll asks our client, which answers (no "provisioner" assertion).
    assert "provisioner" not in server.log.read_text(errors="replace")
    server.wait_for(lambda: gateway.kernels() == [], timeout=30)
