"""The notification sent when the engine pauses a job after its failures
(``policies.pause_after_failures``): through the job's ``options.output_channel``, or the
default channel (the job's notebook session, else the user's JupyterLab)."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime

from jupyter_recall.core.model import Job, new_id
from jupyter_recall.engine.notify import DEFAULT_CHANNEL, Notification
from jupyter_recall.engine.scheduler import Scheduler
from jupyter_recall.server.notifications import NotificationService

log = logging.getLogger("jupyter_recall.server")
OUTCOME_FIRST_WITHIN = 30.0
"""How long a pause notice waits for the outcome of the failure that paused the job."""


def pause_notification(job: Job, *, now: datetime) -> Notification:
    reason = job.paused_reason or "paused after its failures"
    return Notification(
        id=new_id(),
        owner=job.owner,
        message=f"Job {job.name!r} ({job.id}) {reason}. Resume it to fire again.",
        created_at=now,
        channel=job.options.output_channel or DEFAULT_CHANNEL,
        title=f"{job.name}: paused",
        priority="high",
        tags=("job", "paused"),
        structured_data={"job_id": job.id, "status": "paused", "paused_reason": reason},
        output_config=job.options.output_config,
        session=job.session,
        source={"kind": "job", "job_id": job.id},
    )


class PauseNotices:
    """Sends a ``pause_notification`` for each job the engine pauses after its failures."""

    def __init__(self, notifications: NotificationService) -> None:
        self._notifications = notifications
        self._tasks: set[asyncio.Task[None]] = set()

    def attach(self, scheduler: Scheduler) -> None:
        scheduler.on_paused_for_failures(self._paused)

    def _paused(self, job: Job) -> None:
        task = asyncio.get_running_loop().create_task(self._send(job))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _send(self, job: Job) -> None:
        try:
            # The failure that paused the job is told first: its outcome is sent after its
            # output is read, which the pause does not wait for.
            await self._notifications.outcomes_sent(job.id, timeout=OUTCOME_FIRST_WITHIN)
            now = self._notifications.clock.now()
            await self._notifications.send(pause_notification(job, now=now))
        except Exception:
            log.exception("could not send the pause notice of job %s", job.id)

    async def aclose(self) -> None:
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=5)
        for task in set(self._tasks):
            task.cancel()
