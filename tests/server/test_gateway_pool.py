"""The warm pool on a real Jupyter Kernel Gateway that goes away and comes back."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from contextlib import suppress
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.server.kernel_gateway import KernelGateway
from tests.server.live_server import LiveServer, free_port
from tests.server.test_fresh_kernels import kernel_children

REFILL_FAILED = "could not start a pooled python3 kernel"


class Gateways:
    """Kernel Gateways started one after the other on one port, as a restarted gateway is."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.current: KernelGateway | None = None
        self.kernel_pids: set[int] = set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> KernelGateway:
        self.current = KernelGateway(self.workdir, port=self.port)
        return self.current

    def kill(self) -> None:
        """kill -9 the gateway (its kernels are left behind: ended at the test's end)."""
        assert self.current is not None
        self.kernel_pids |= kernel_children(self.current.process.pid)
        self.current.process.kill()
        self.current.process.wait(30)
        self.current = None

    def close(self) -> None:
        if self.current is not None:
            self.kernel_pids |= kernel_children(self.current.process.pid)
            self.current.stop()
        for pid in self.kernel_pids:
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@pytest.fixture
def gateways(tmp_path: Path) -> Iterator[Gateways]:
    workdir = tmp_path / "gateway"
    workdir.mkdir()
    started = Gateways(workdir)
    yield started
    started.close()


def pooled_server(tmp_path: Path, gateways: Gateways) -> LiveServer:
    root = tmp_path / "root"
    root.mkdir()
    return LiveServer(
        root,
        tmp_path / "recall.sqlite",
        args=(f"--gateway-url={gateways.url}", "--RecallApp.kernel_pool=python3=1"),
    ).start()


def run_now(server: LiveServer) -> dict[str, Any]:
    job = server.request(
        "POST",
        "/api/recall/jobs",
        {
            "when": (datetime.now(UTC) + timedelta(seconds=1)).isoformat(),
            "action": {"type": "code", "code": "print('hi')"},
            "target": {"type": "headless"},
        },
    )

    def ended() -> dict[str, Any] | None:
        runs = server.request("GET", f"/api/recall/jobs/{job['id']}/runs")["runs"]
        done = [run for run in runs if run["status"] not in ("pending", "running")]
        return done[0] if done else None

    return dict(server.wait_for(ended, timeout=90))


def ready_kernels(gateway: KernelGateway) -> list[dict[str, Any]]:
    """The gateway's kernels that the pool connected to and warmed up."""
    return [
        kernel
        for kernel in gateway.kernels()
        if kernel["connections"] >= 1 and kernel["execution_state"] == "idle"
    ]


def log_lines(server: LiveServer, text: str) -> list[str]:
    lines = server.log.read_text(errors="replace").splitlines()
    return [line for line in lines if text in line]


@pytest.mark.slow
def test_warm_kernels_lost_with_a_restarted_gateway_are_replaced(
    tmp_path: Path, gateways: Gateways
) -> None:
    gateway = gateways.start()
    server = pooled_server(tmp_path, gateways)
    try:
        warm = server.wait_for(lambda: ready_kernels(gateway), timeout=60)
        gateways.kill()
        gateway = gateways.start()
        # The warm kernel died with the gateway: the run does not get it.
        run = run_now(server)
        assert (run["status"], run["output"]) == ("succeeded", "hi\n"), run
        refilled = server.wait_for(lambda: ready_kernels(gateway), timeout=60)
        assert warm[0]["id"] not in [kernel["id"] for kernel in refilled]

        # Down for a while: its waiting kernel is found gone without a run, and the refills
        # that fail meanwhile say so once, without a traceback. (The first outage, a restart,
        # may have said so too, when a check of the waiting kernels fell into it.)
        earlier = len(log_lines(server, REFILL_FAILED))
        gateways.kill()
        server.wait_for(lambda: len(log_lines(server, REFILL_FAILED)) > earlier, timeout=60)
        time.sleep(7)  # two more failed starts (after 1 then 5 s)
        lines = server.log.read_text(errors="replace").splitlines()
        failed = [n for n, line in enumerate(lines) if REFILL_FAILED in line][earlier:]
        assert len(failed) == 1, lines[failed[0] :]
        assert "Traceback" not in lines[failed[0] + 1]
        gateway = gateways.start()
        server.wait_for(lambda: log_lines(server, "pooled python3 kernels start again"), 60)
        server.wait_for(lambda: ready_kernels(gateway), timeout=60)
    finally:
        if gateways.current is None:
            gateways.start()  # a server stopping shuts its kernels down through the gateway
        server.stop()


@pytest.mark.slow
def test_pooling_starts_when_a_gateway_down_at_the_start_answers(
    tmp_path: Path, gateways: Gateways
) -> None:
    server = pooled_server(tmp_path, gateways)
    try:
        server.wait_for(lambda: log_lines(server, "asking again in the background"), timeout=30)
        gateway = gateways.start()
        server.wait_for(gateway.kernels, timeout=90)
        assert log_lines(server, "the kernel spec answers")
        assert len(log_lines(server, "cannot read the kernel spec")) == 1
        assert not log_lines(server, "not pooled")
        run = run_now(server)
        assert (run["status"], run["output"]) == ("succeeded", "hi\n"), run
    finally:
        if gateways.current is None:
            gateways.start()  # a server stopping shuts its kernels down through the gateway
        server.stop()


@pytest.mark.slow
def test_a_server_whose_gateway_is_gone_stops_on_sigterm(
    tmp_path: Path, gateways: Gateways
) -> None:
    gateway = gateways.start()
    server = pooled_server(tmp_path, gateways)
    server.wait_for(lambda: ready_kernels(gateway), timeout=60)
    gateways.kill()
    # A warm kernel still held: shutting it down fails (the gateway does not answer). It
    # was left in the server's kernel manager, whose own shutdown at exit failed the same
    # way, and that failure left jupyter_server's event loop running: SIGTERM hung.
    started = time.monotonic()
    server.stop(timeout=60)
    assert time.monotonic() - started < 30
    assert log_lines(server, "its gateway does not answer")


@pytest.mark.slow
def test_gateway_kernels_a_killed_server_left_are_shut_down_when_it_starts_again(
    tmp_path: Path, gateways: Gateways
) -> None:
    gateway = gateways.start()
    server = pooled_server(tmp_path, gateways)
    try:
        server.wait_for(lambda: ready_kernels(gateway), timeout=60)
        # A run in flight (in the warm kernel) and the warm kernel started in its place.
        body = {
            "when": "now",
            "action": {
                "type": "code",
                "code": "import time\nprint('go', flush=True)\ntime.sleep(300)",
            },
            "target": {"type": "headless"},
        }
        job = server.request("POST", "/api/recall/jobs", body)

        def running_output() -> bool:
            runs = server.request("GET", f"/api/recall/jobs/{job['id']}/runs")["runs"]
            return bool(runs) and runs[0]["output"] == "go\n"

        server.wait_for(running_output, timeout=60)

        def run_and_warm_kernel() -> bool:
            return len(gateway.kernels()) == 2 and len(ready_kernels(gateway)) == 1

        server.wait_for(run_and_warm_kernel, timeout=60)
        left = {kernel["id"] for kernel in gateway.kernels()}
        server.stop(signal.SIGKILL)
        assert {kernel["id"] for kernel in gateway.kernels()} == left  # they outlived it

        server.start()
        server.wait_for(lambda: log_lines(server, "a stopped predecessor left"), timeout=60)
        assert not left & {kernel["id"] for kernel in gateway.kernels()}
        (recovered,) = log_lines(server, "a stopped predecessor left")
        assert "shut down 2 gateway kernels" in recovered
        assert all(kernel_id in recovered for kernel_id in left)
        run = server.request("GET", f"/api/recall/jobs/{job['id']}/runs")["runs"][0]
        assert run["status"] == "interrupted", run
        server.wait_for(lambda: ready_kernels(gateway), timeout=60)  # the pool fills again
    finally:
        server.stop()
