"""Change events pushed to listeners (the server turns them into SSE and jupyter_events)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from jupyter_recall.core.model import Job, Run

log = logging.getLogger("jupyter_recall.engine")

JOB_CREATED = "job.created"
JOB_UPDATED = "job.updated"
JOB_DELETED = "job.deleted"
RUN_STARTED = "run.started"
RUN_OUTPUT = "run.output"
RUN_FINISHED = "run.finished"
EVENT_TYPES = (JOB_CREATED, JOB_UPDATED, JOB_DELETED, RUN_STARTED, RUN_OUTPUT, RUN_FINISHED)


@dataclass(frozen=True)
class Event:
    """One change, pushed synchronously from the engine's loop; listeners must be quick."""

    type: str
    owner: str
    job: Job | None = None
    run: Run | None = None
    text: str | None = None
    """For run.output: the new chunk."""
    offset: int | None = None
    """For run.output: where the chunk starts in the run's whole output (characters), so that a
    client can join live chunks to the stored output without gaps or repeats."""


Listener = Callable[[Event], None]


class EventBus:
    """Calls every listener for every event; a failing listener is logged, never fatal."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    @property
    def active(self) -> bool:
        """Whether anyone listens (events are not even built when nobody does)."""
        return bool(self._listeners)

    def emit(self, event: Event) -> None:
        for listener in tuple(self._listeners):
            try:
                listener(event)
            except Exception:
                log.exception("event listener %r failed on %s", listener, event.type)

    def job(self, kind: str, job: Job) -> None:
        if self._listeners:
            self.emit(Event(kind, job.owner, job=job))

    def run(
        self,
        kind: str,
        run: Run,
        *,
        job: Job | None = None,
        text: str | None = None,
        offset: int | None = None,
    ) -> None:
        if self._listeners:
            self.emit(Event(kind, run.owner, job=job, run=run, text=text, offset=offset))
