"""The stable import path of :func:`beat` for the code stored in heartbeat jobs, and the file
access heartbeats read through.

A heartbeat job persists its code (``from jupyter_recall.kernel.heartbeat import beat``) in the
store, where it outlives any reorganisation of the kernel package: this path stays so that jobs
created by any release keep running. The implementation lives in ``kernel/jobs/heartbeat.py``;
importing this module gives it its file access: the tool root and the ``filesystem.read``
policy of ``run_tool("filesystem.read", ...)``, so a heartbeat hands the agent only what the
agent could read itself.
"""

from __future__ import annotations

import stat
from pathlib import Path

from jupyter_recall.core.errors import RecallError, ValidationError
from jupyter_recall.kernel.calls import primitives
from jupyter_recall.kernel.jobs.heartbeat import (
    HeartbeatStarted,
    beat,
    heartbeat_tools,
    register_magic,
    start,
    use_file_access,
)

__all__ = ["HeartbeatStarted", "beat", "heartbeat_tools", "register_magic", "start"]

READ_TOOL = "filesystem.read"
CALLER = "a heartbeat"


class ToolFileAccess:
    """Paths confined to the kernel's tool root, read by ``filesystem.read`` unattended."""

    def locate(self, path: str) -> Path:
        found = primitives.kernel_runner().context().locate(path, "path")
        decision = primitives.tool_policy(READ_TOOL)
        if decision["policy"] != "auto":
            # A beat runs unattended: an approve policy could never be answered.
            raise ValidationError(
                "path",
                f"{path!r} cannot be read by a heartbeat: {READ_TOOL} has policy "
                f"{decision['policy']!r} ({decision['source']}) and heartbeats run unattended",
            )
        return Path(found.path)

    def read(self, path: Path) -> str | None:
        found = primitives.kernel_runner().context().locate(str(path), "path")
        if found.stat is None or not stat.S_ISREG(found.stat.st_mode):
            return None
        result = primitives.run_unattended_sync(READ_TOOL, {"path": found.path}, caller=CALLER)
        if not result["success"]:
            raise RecallError(result["error"])
        content: str = result["data"]["content"]
        return content


use_file_access(ToolFileAccess())
