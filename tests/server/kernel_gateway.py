"""A real Jupyter Kernel Gateway on loopback, for the tests of servers and schedulers using it."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.server.live_server import answers, free_port


class KernelGateway:
    """A `jupyter kernelgateway` process on loopback that lists its kernels."""

    def __init__(self, workdir: Path, port: int | None = None) -> None:
        self.port = free_port() if port is None else port
        self.log = workdir / "gateway.log"
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "kernel_gateway",
                    "--KernelGatewayApp.ip=127.0.0.1",
                    f"--KernelGatewayApp.port={self.port}",
                    "--JupyterWebsocketPersonality.list_kernels=True",
                ],
                stdout=log,
                stderr=log,
                cwd=workdir,
            )
        deadline = time.monotonic() + 60
        while not answers(self.kernels):
            if time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f"gateway did not start:\n{self.log.read_text()[-3000:]}")
            time.sleep(0.2)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def kernels(self) -> list[dict[str, Any]]:
        """The gateway's kernels. Kernel Gateway 3.0 answers 500 to a listing made while a
        kernel starts (``KernelGatewayIOLoopKernelManager`` has no ``last_activity`` yet):
        asked again a moment later, not read as "no kernels"."""
        for attempt in range(20):
            try:
                with urllib.request.urlopen(f"{self.url}/api/kernels", timeout=30) as response:
                    return list(json.loads(response.read()))
            except urllib.error.HTTPError as error:
                error.close()
                if error.code < 500 or attempt == 19:
                    raise
                time.sleep(0.1)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(60)


def kernel_gateway_in(tmp_path: Path) -> Iterator[KernelGateway]:
    """The body of a test's ``gateway`` fixture: a gateway working in ``tmp_path/gateway``,
    stopped after the test."""
    workdir = tmp_path / "gateway"
    workdir.mkdir()
    started = KernelGateway(workdir)
    yield started
    started.stop()
