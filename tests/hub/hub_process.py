"""A real JupyterHub on loopback for the tests: configurable-http-proxy (npm, installed once under
~/.cache), the dummy authenticator, the simple local spawner, the hub database in a temp dir."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.server.live_server import answers, free_port, json_request

CHP_PREFIX = Path.home() / ".cache" / "recall-tests" / "configurable-http-proxy"
ADMIN_TOKEN = "recall-hub-admin-token"


def proxy_command() -> Path:
    """configurable-http-proxy from the npm registry, installed on first use. Without npm the
    test skips, except in CI (``CI=true``), where scripts/system-deps installs it."""
    binary = CHP_PREFIX / "node_modules" / ".bin" / "configurable-http-proxy"
    if not binary.exists() and shutil.which("npm") is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("npm is required in CI (configurable-http-proxy for JupyterHub)")
        pytest.skip("npm is absent: configurable-http-proxy cannot be installed")
    if not binary.exists():
        CHP_PREFIX.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "install", "--no-save", "--prefix", str(CHP_PREFIX), "configurable-http-proxy"],
            check=True,
            capture_output=True,
            timeout=300,
        )
    return binary


class Hub:
    """``python -m jupyterhub`` with a config written from ``services`` and ``spawner_args``."""

    def __init__(self, workdir: Path, *, services: list[dict], spawner_args: list[str]) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.log = workdir / "hub.log"
        self.process: subprocess.Popen[bytes] | None = None
        admin = {"name": "test-admin", "api_token": ADMIN_TOKEN}
        config = {
            "bind_url": self.url,
            "hub_port": free_port(),
            "proxy_api_port": free_port(),
            "db": f"sqlite:///{workdir / 'hub.sqlite'}",
            "services": [*services, admin],
            "spawner_args": spawner_args,
            "proxy": str(proxy_command()),
            "homes": str(workdir / "homes" / "{username}"),
            "bin": str(Path(sys.executable).parent),
        }
        (workdir / "hub_settings.json").write_text(json.dumps(config))
        (workdir / "jupyterhub_config.py").write_text(HUB_CONFIG)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 90.0) -> Hub:
        command = [sys.executable, "-m", "jupyterhub", "-f", "jupyterhub_config.py"]
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                command, cwd=self.workdir, stdout=log, stderr=log, start_new_session=True
            )
        deadline = time.monotonic() + timeout
        while not answers(lambda: self.api("GET", "/users")):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f"hub did not start:\n{self.log.read_text()[-4000:]}")
            time.sleep(0.3)
        return self

    def api(self, method: str, path: str, body: Any = None) -> Any:
        return self.request(method, f"/hub/api{path}", body, token=ADMIN_TOKEN)

    def request(self, method: str, path: str, body: Any = None, *, token: str) -> Any:
        return json_request(method, self.url + path, body, token=token)

    def server_ready(self, user: str) -> bool:
        server = self.api("GET", f"/users/{user}")["servers"].get("")
        return bool(server and server.get("ready"))

    def server_gone(self, user: str) -> bool:
        return not self.api("GET", f"/users/{user}")["servers"]

    def stop(self) -> None:
        """Stop the hub (it stops the proxy, the services and the servers it spawned), then
        kill whatever of them is left, even if the hub failed."""
        process, self.process = self.process, None
        if process is None:
            return
        try:
            descendants = psutil.Process(process.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            descendants = []
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        for child in descendants:
            with contextlib.suppress(psutil.NoSuchProcess):
                child.kill()


HUB_CONFIG = """
import json

settings = json.load(open("hub_settings.json"))
c = get_config()
c.JupyterHub.bind_url = settings["bind_url"]
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = settings["hub_port"]
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{settings['proxy_api_port']}"
c.ConfigurableHTTPProxy.command = [settings["proxy"]]
c.ConfigurableHTTPProxy.pid_file = "proxy.pid"
c.JupyterHub.db_url = settings["db"]
c.JupyterHub.cookie_secret_file = "cookie_secret"
c.JupyterHub.pid_file = "hub.pid"
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allow_all = True
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = settings["homes"]
c.Spawner.cmd = [settings["bin"] + "/jupyterhub-singleuser"]
c.Spawner.args = settings["spawner_args"]
c.Spawner.start_timeout = 90
c.Spawner.http_timeout = 90
# jupyter_server answers the spawner's first signal, SIGINT, with a confirmation prompt, so
# waiting for it to work is time lost: go on to SIGTERM at once.
c.LocalProcessSpawner.interrupt_timeout = 1
c.JupyterHub.services = settings["services"]
c.JupyterHub.load_roles = [
    {
        "name": "test-admin",
        "scopes": ["admin:users", "admin:servers", "tokens", "access:servers"],
        "services": ["test-admin"],
    }
]
"""
