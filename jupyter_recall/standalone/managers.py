"""Jupyter's kernel, session and contents managers for a process that runs no Jupyter server.

The standalone scheduler starts fresh kernels (headless runs, notebooks) and, for a live-kernel
job whose ``on_missing_kernel`` is ``start``, notebook sessions, exactly as a server would: with
jupyter_server's own managers, configured from the same config files. With a gateway URL they
are the gateway's managers, and kernels run on the Kernel/Enterprise Gateway.
"""

from __future__ import annotations

from typing import Any

from jupyter_client.kernelspec import KernelSpecManager
from jupyter_core.paths import jupyter_runtime_dir
from jupyter_core.utils import ensure_dir_exists
from jupyter_server.gateway.gateway_client import GatewayClient
from jupyter_server.gateway.managers import (
    GatewayKernelSpecManager,
    GatewayMappingKernelManager,
    GatewaySessionManager,
)
from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager
from jupyter_server.services.sessions.sessionmanager import SessionManager

from jupyter_recall.server.executors.context import ServerManagers


def _make(manager_class: Any, **traits: Any) -> Any:
    """An instance of one of jupyter_server's managers, whose constructors are untyped."""
    return manager_class(**traits)


def _runtime_dir(parent: Any) -> str:
    """The parent application's Jupyter runtime dir (created), else Jupyter's default one."""
    path = getattr(parent, "runtime_dir", "") or jupyter_runtime_dir()
    ensure_dir_exists(path, mode=0o700)
    return str(path)


def standalone_managers(parent: Any, root_dir: str, gateway_url: str) -> ServerManagers:
    """The managers of a standalone process rooted at ``root_dir`` (``parent`` gives them
    their configuration); the gateway's when ``gateway_url`` is set."""
    contents = AsyncLargeFileManager(parent=parent, root_dir=root_dir)
    if gateway_url:
        client: Any = GatewayClient.instance(parent=parent)
        client.url = gateway_url
        client.init_connection_args()
        specs: Any = _make(GatewayKernelSpecManager, parent=parent)
        kernels: Any = _make(
            GatewayMappingKernelManager, parent=parent, root_dir=root_dir, kernel_spec_manager=specs
        )
        sessions: Any = _make(
            GatewaySessionManager, parent=parent, kernel_manager=kernels, contents_manager=contents
        )
    else:
        specs = KernelSpecManager(parent=parent)
        # Connection files in the runtime dir, as the server puts them: the default, the working
        # directory, may be gone or unwritable (a system service).
        kernels = _make(
            AsyncMappingKernelManager,
            parent=parent,
            root_dir=root_dir,
            kernel_spec_manager=specs,
            connection_dir=_runtime_dir(parent),
        )
        sessions = _make(
            SessionManager, parent=parent, kernel_manager=kernels, contents_manager=contents
        )
    return ServerManagers(
        kernel_manager=kernels,
        session_manager=sessions,
        kernel_spec_manager=specs,
        contents_manager=contents,
        root_dir=root_dir,
    )
