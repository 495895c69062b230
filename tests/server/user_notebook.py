"""What JupyterLab does for a user, for tests: run cells in a notebook's kernel."""

from __future__ import annotations

from typing import Any

import anyio


class UserNotebook:
    """What JupyterLab does for a user: a notebook session and a client that runs cells."""

    def __init__(self, serverapp: Any, session: dict[str, Any]) -> None:
        self.serverapp = serverapp
        self.kernel_id = session["kernel"]["id"]
        self.manager = serverapp.kernel_manager.get_kernel(self.kernel_id)
        self.client = self.manager.client()
        self.iopub: list[dict[str, Any]] = []

    async def start(self) -> None:
        self.client.start_channels()
        await self.client.wait_for_ready(timeout=30)

    def send(self, source: str) -> str:
        return str(self.client.execute(source))

    async def reply(self, msg_id: str, timeout: float = 30) -> dict[str, Any]:
        with anyio.fail_after(timeout):
            while True:
                msg = await self.client.get_shell_msg()
                if msg["parent_header"].get("msg_id") == msg_id:
                    return dict(msg)

    async def run(self, source: str) -> dict[str, Any]:
        return await self.reply(self.send(source))

    async def drain_iopub(self) -> list[dict[str, Any]]:
        while True:
            with anyio.move_on_after(0.3) as scope:
                self.iopub.append(await self.client.get_iopub_msg())
            if scope.cancelled_caught:
                return self.iopub

    def close(self) -> None:
        self.client.stop_channels()
