"""Builds the executor the engine hands runs to, from the running server's managers."""

from __future__ import annotations

from typing import Any

from jupyter_recall.server.kernels import KernelExecutors
from jupyter_recall.tools import PolicyLayer, ToolRunner, default_registry
from jupyter_recall.tools.approval import DEFAULT_TIMEOUT

SERVER_POLICY_LABEL = "server config RecallApp.tool_policies"


def make_server_executor(serverapp: Any, app: Any) -> KernelExecutors:
    """Live kernels, fresh kernels and server-side actions, routed by each job's target."""
    executors = KernelExecutors.from_serverapp(serverapp, fresh=getattr(app, "fresh_kernels", None))
    runner = getattr(app, "tool_runner", None)
    if runner is not None:
        executors.server.tools = runner
    # A server-side tool job under an ``approve`` policy waits in the approvals inbox.
    executors.server.inbox = getattr(app, "approvals", None)
    executors.server.approval_timeout = float(getattr(app, "approval_timeout", DEFAULT_TIMEOUT))
    return executors


def make_tool_runner(serverapp: Any, app: Any) -> ToolRunner:
    """Tool actions run on the server: paths under the server's root, the server's policies
    (read at each call); approvals are asked per job, in the inbox (``make_server_executor``)."""
    return ToolRunner(
        default_registry(),
        root=str(getattr(serverapp, "root_dir", "") or "."),
        policies=lambda: [PolicyLayer(SERVER_POLICY_LABEL, dict(app.tool_policies))],
    )
