"""A file listing the kernels this process started on a Kernel Gateway and has not shut down.

Local kernels end with the process that started them (ipykernel watches ``JPY_PARENT_PID``).
A gateway's outlive a server or scheduler killed with -9, each holding memory on the gateway
until its culler, if it has one, ends it. The next process of the same engine id reads the
journal at start and shuts them down (``ManagedKernelLauncher.recover``). One process at a time
has an engine id (a server's names its port; a standalone scheduler holds its id's lease), so
one process at a time writes a journal. It is rewritten whole on each start and shutdown of a
gateway kernel: a temporary file renamed over it, so that a kill leaves the old list or the new.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Leftovers:
    """What a journal lists: kernels of one gateway."""

    gateway: str
    kernel_ids: tuple[str, ...]


class KernelJournal:
    """The journal of one engine id's gateway kernels."""

    def __init__(self, path: Path, gateway: str) -> None:
        self.path = path
        self.gateway = gateway
        """The gateway whose kernels this process starts (``GatewayClient.url``)."""
        self._failed = False

    @classmethod
    def for_engine(cls, runtime_dir: str, engine_id: str, gateway: str) -> KernelJournal:
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", engine_id)
        return cls(Path(runtime_dir) / f"jupyter_recall-gateway-kernels-{name}.json", gateway)

    def read(self) -> Leftovers | None:
        """The kernels listed, or None: no journal, or one that cannot be read (logged)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as error:
            log.warning("jupyter_recall: cannot read %s (%s); ignored", self.path, error)
            return None
        if not isinstance(data, dict):
            data = {}
        gateway, kernel_ids = data.get("gateway"), data.get("kernels")
        if not isinstance(gateway, str) or not _all_text(kernel_ids):
            log.warning("jupyter_recall: %s is not a kernel journal; ignored", self.path)
            return None
        return Leftovers(gateway, tuple(kernel_ids))

    def write(self, kernel_ids: Iterable[str]) -> None:
        """List these kernels (none: the journal is removed). A failure is logged once: runs
        go on, only the cleanup after a kill is lost."""
        ids = sorted(kernel_ids)
        try:
            if not ids:
                self.path.unlink(missing_ok=True)
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            written = self.path.with_name(self.path.name + ".tmp")
            written.write_text(json.dumps({"gateway": self.gateway, "kernels": ids}), "utf-8")
            os.replace(written, self.path)
        except OSError as error:
            if not self._failed:
                log.warning("jupyter_recall: cannot write %s (%s)", self.path, error)
            self._failed = True


def _all_text(values: object) -> TypeGuard[list[str]]:
    return isinstance(values, list) and all(isinstance(value, str) for value in values)
