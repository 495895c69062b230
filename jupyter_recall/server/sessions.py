"""A deleted notebook session cancels its pending recall.

jupyter_server shuts a session's kernel down just before it deletes the session row, and the
kernel manager emits a ``kernel_actions`` event for that shutdown; on each such event we look
for pending recalls whose notebook session (or kernel) is gone and cancel them.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import anyio
from jupyter_events import EventLogger

from jupyter_recall.core.errors import ConflictError
from jupyter_recall.core.model import Job, JobKind
from jupyter_recall.core.records import KernelTarget
from jupyter_recall.engine.scheduler import Scheduler
from jupyter_recall.store.base import JobFilter

KERNEL_ACTIONS = "https://events.jupyter.org/jupyter_server/kernel_actions/v1"
ROW_DELETION_DELAY = 0.5
"""Seconds to wait after the kernel's shutdown for the session row to be deleted too."""
PENDING_RECALLS = JobFilter(kind=[JobKind.RECALL], pending_recalls_only=True)

log = logging.getLogger(__name__)


def is_orphaned(job: Job, session_paths: set[str], kernel_ids: set[str]) -> bool:
    target = job.target
    if not isinstance(target, KernelTarget):
        return False
    if target.path is not None:
        return target.path not in session_paths
    return target.kernel_id not in kernel_ids


class SessionWatcher:
    def __init__(self, scheduler: Scheduler, serverapp: Any, event_logger: EventLogger) -> None:
        self._scheduler = scheduler
        self._sessions = serverapp.session_manager
        self._kernels = serverapp.kernel_manager
        self._event_logger = event_logger
        self._running = False

    def start(self) -> None:
        self._running = True
        self._event_logger.add_listener(schema_id=KERNEL_ACTIONS, listener=self._on_kernel_action)

    def stop(self) -> None:
        self._running = False
        self._event_logger.remove_listener(
            schema_id=KERNEL_ACTIONS, listener=self._on_kernel_action
        )

    async def _on_kernel_action(self, logger: EventLogger, schema_id: str, data: Any) -> None:
        if not self._running or data.get("action") != "shutdown":
            return
        await asyncio.sleep(ROW_DELETION_DELAY)
        if self._running:
            try:
                await self.cancel_orphaned_recalls()
            except Exception:
                log.exception("jupyter_recall: could not cancel the recalls of a closed session")

    async def cancel_orphaned_recalls(self) -> list[Job]:
        sessions = await self._sessions.list_sessions()
        paths = {s["path"] for s in sessions}
        kernel_ids = set(self._kernels.list_kernel_ids())
        store = self._scheduler.store
        pending = await anyio.to_thread.run_sync(
            lambda: store.list_jobs(owner=None, where=PENDING_RECALLS)
        )
        cancelled = []
        for job in pending:
            if is_orphaned(job, paths, kernel_ids):
                try:
                    cancelled.append(await self._scheduler.cancel_job(job.id, owner=job.owner))
                except ConflictError:
                    continue  # it ended or was cancelled since the listing: nothing to do
                log.info("jupyter_recall: session of recall %s is gone; cancelled", job.id)
        return cancelled
