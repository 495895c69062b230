"""A deleted notebook session cancels its pending recall; a kernel shut down or restarted
withdraws the approval requests it was waiting on.

jupyter_server's ``SessionManager.delete_session`` shuts the session's kernel down, then deletes
the session row; the kernel manager emits a ``kernel_actions`` event (with the ``kernel_id``)
when that shutdown ends, while the row still exists. On such an event we note the paths of the
sessions holding that kernel, wait for the row's deletion, and cancel the pending recalls that
target one of those paths, now without a session, or that kernel. Only those: any other kernel's
shutdown (a headless job's fresh kernel, say) must leave a recall for a notebook that is not
open alone, or it would be lost.

A kernel asks for approval as ``kernel:<notebook path>`` (``kernel:<kernel id>`` without a
notebook), and its cell waits for the decision. When that kernel shuts down or restarts, the
cell is gone: the requests it asked before are withdrawn at once (``expired``, with a note),
instead of waiting in the inbox until they time out.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

import anyio
from jupyter_events import EventLogger

from jupyter_recall.core.errors import ConflictError
from jupyter_recall.core.model import Job, JobKind
from jupyter_recall.core.records import KernelTarget
from jupyter_recall.engine.scheduler import Scheduler
from jupyter_recall.server.approvals import ApprovalInbox
from jupyter_recall.store.base import JobFilter

KERNEL_ACTIONS = "https://events.jupyter.org/jupyter_server/kernel_actions/v1"
ROW_DELETION_DELAY = 0.5
"""Seconds to wait after the kernel's shutdown for the session row to be deleted too."""
GONE = {"shutdown": "was shut down", "restart": "was restarted"}
"""Kernel actions after which nothing in the kernel waits any more, and how a note says so."""
PENDING_RECALLS = JobFilter(kind=[JobKind.RECALL], pending_recalls_only=True)

log = logging.getLogger(__name__)


def is_orphaned(
    job: Job,
    closed_paths: set[str],
    session_paths: set[str],
    shut_kernel: str,
    kernel_ids: set[str],
) -> bool:
    """Whether ``job`` lost its session when ``shut_kernel`` shut down.

    ``closed_paths`` were the paths of that kernel's sessions when it shut down; a recall for a
    path whose session was never there is not ours to cancel.
    """
    target = job.target
    if not isinstance(target, KernelTarget):
        return False
    if target.path is not None:
        return target.path in closed_paths and target.path not in session_paths
    return target.kernel_id == shut_kernel and shut_kernel not in kernel_ids


def orphaned_reason(job: Job) -> str:
    """What a recall cancelled with its session says (its ``last_error``): an agent that
    scheduled "in 2h: go on with step 3" must be able to tell why it never came."""
    where = job.session or "its kernel"
    return (
        f"cancelled: the session of {where} was closed (its kernel shut down) before the "
        "recall was due; a recall is delivered to its notebook's kernel"
    )


class SessionWatcher:
    def __init__(
        self,
        scheduler: Scheduler,
        serverapp: Any,
        event_logger: EventLogger,
        approvals: ApprovalInbox | None = None,
    ) -> None:
        self._scheduler = scheduler
        self._approvals = approvals
        self._sessions = serverapp.session_manager
        self._kernels = serverapp.kernel_manager
        self._event_logger = event_logger
        self._running = False
        self._waiting: set[asyncio.Task[None]] = set()
        """Cancellations waiting for their session rows to go: ended by ``aclose``."""

    def start(self) -> None:
        self._running = True
        self._event_logger.add_listener(schema_id=KERNEL_ACTIONS, listener=self._on_kernel_action)

    async def aclose(self) -> None:
        """Stop listening, and end the cancellations still waiting (a task left sleeping
        would be destroyed pending when the server's loop closes)."""
        self._running = False
        self._event_logger.remove_listener(
            schema_id=KERNEL_ACTIONS, listener=self._on_kernel_action
        )
        for task in self._waiting:
            task.cancel()
        await asyncio.gather(*self._waiting, return_exceptions=True)

    async def _on_kernel_action(self, logger: EventLogger, schema_id: str, data: Any) -> None:
        action = data.get("action")
        if not self._running or action not in GONE or not data.get("kernel_id"):
            return
        kernel_id = data["kernel_id"]
        # Read before the first await: delete_session deletes the row right after the shutdown
        # this event reports, and this listener's task starts before it resumes.
        paths = self._session_paths_of(kernel_id)
        if self._approvals is not None:
            self._start(self._withdraw_approvals(kernel_id, paths, GONE[action]))
        if action == "shutdown":
            self._start(self._cancel_later(kernel_id, paths))

    def _start(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        self._waiting.add(task)
        task.add_done_callback(self._waiting.discard)

    async def _withdraw_approvals(self, kernel_id: str, paths: set[str], why: str) -> None:
        assert self._approvals is not None
        asked_by = sorted({f"kernel:{path}" for path in paths} | {f"kernel:{kernel_id}"})
        try:
            await self._approvals.withdraw_asked_by(
                asked_by, why, asked_before=self._scheduler.clock.now()
            )
        except Exception:
            log.exception("jupyter_recall: approvals of kernel %s not withdrawn", kernel_id)

    async def _cancel_later(self, kernel_id: str, paths: set[str]) -> None:
        await asyncio.sleep(ROW_DELETION_DELAY)
        if self._running:
            try:
                await self.cancel_orphaned_recalls(kernel_id, paths)
            except Exception:
                log.exception("jupyter_recall: could not cancel the recalls of a closed session")

    def _session_paths_of(self, kernel_id: str) -> set[str]:
        # The session table directly: list_sessions() would prune the row of this kernel, which
        # its manager has already forgotten, and answer nothing for it.
        try:
            rows = self._sessions.cursor.execute(
                "SELECT path FROM session WHERE kernel_id=?", (kernel_id,)
            ).fetchall()
        except Exception:
            log.exception("jupyter_recall: could not read the sessions of kernel %s", kernel_id)
            return set()
        return {row[0] for row in rows if row[0]}

    async def cancel_orphaned_recalls(self, kernel_id: str, closed_paths: set[str]) -> list[Job]:
        """Cancel the pending recalls whose session went with ``kernel_id``'s shutdown."""
        sessions = await self._sessions.list_sessions()
        paths = {s["path"] for s in sessions}
        kernel_ids = set(self._kernels.list_kernel_ids())
        store = self._scheduler.store
        pending = await anyio.to_thread.run_sync(
            lambda: store.list_jobs(owner=None, where=PENDING_RECALLS)
        )
        cancelled = []
        for job in pending:
            if is_orphaned(job, closed_paths, paths, kernel_id, kernel_ids):
                why = orphaned_reason(job)
                try:
                    cancelled.append(
                        await self._scheduler.cancel_job(job.id, owner=job.owner, reason=why)
                    )
                except ConflictError:
                    continue  # it ended or was cancelled since the listing: nothing to do
                log.info("jupyter_recall: session of recall %s is gone; cancelled", job.id)
        return cancelled
