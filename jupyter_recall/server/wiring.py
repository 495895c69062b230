"""Builds the executor the engine hands runs to, from the running server's managers."""

from __future__ import annotations

from typing import Any

from jupyter_recall.server.kernels import KernelExecutors


def make_server_executor(serverapp: Any, app: Any) -> KernelExecutors:
    """Live kernels, fresh kernels and server-side actions, routed by each job's target."""
    return KernelExecutors.from_serverapp(serverapp)
