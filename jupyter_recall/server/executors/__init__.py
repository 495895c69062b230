"""Executors that run jobs in Jupyter kernels and on the server (see docs/executors.md)."""

from jupyter_recall.server.executors.context import ServerManagers
from jupyter_recall.server.executors.headless import HeadlessExecutor
from jupyter_recall.server.executors.live import LiveKernelExecutor
from jupyter_recall.server.executors.router import TargetRouter
from jupyter_recall.server.executors.server_actions import ServerActionExecutor

__all__ = [
    "HeadlessExecutor",
    "LiveKernelExecutor",
    "ServerActionExecutor",
    "ServerManagers",
    "TargetRouter",
]
