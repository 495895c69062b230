"""The jupyter_server managers the executors work with, handed over by the server extension."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class ServerManagers:
    """The running server's managers; executors never build a server of their own.

    Typed as ``Any`` because the server may use the sync or async variants of each manager,
    and every call goes through ``ensure_async``.
    """

    kernel_manager: Any
    """The server's ``MappingKernelManager`` / ``AsyncMappingKernelManager``."""
    session_manager: Any
    kernel_spec_manager: Any
    contents_manager: Any
    root_dir: str
    """Filesystem directory that notebook paths are relative to (the contents root)."""

    @classmethod
    def from_serverapp(cls, serverapp: Any) -> ServerManagers:
        return cls(
            kernel_manager=serverapp.kernel_manager,
            session_manager=serverapp.session_manager,
            kernel_spec_manager=serverapp.kernel_spec_manager,
            contents_manager=serverapp.contents_manager,
            root_dir=str(serverapp.root_dir),
        )
