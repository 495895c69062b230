"""Change events pushed to listeners (the server turns them into SSE and jupyter_events)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import ClassVar

from jupyter_recall.core.approvals import ApprovalRecord
from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.model import Job, Run

log = logging.getLogger("jupyter_recall.engine")

JOB_CREATED = "job.created"
JOB_UPDATED = "job.updated"
JOB_DELETED = "job.deleted"
RUN_STARTED = "run.started"
RUN_OUTPUT = "run.output"
RUN_FINISHED = "run.finished"
APPROVAL_CREATED = "approval.created"
APPROVAL_DECIDED = "approval.decided"
APPROVAL_EXPIRED = "approval.expired"
APPROVAL_TYPES = (APPROVAL_CREATED, APPROVAL_DECIDED, APPROVAL_EXPIRED)
EVENT_TYPES = (
    JOB_CREATED,
    JOB_UPDATED,
    JOB_DELETED,
    RUN_STARTED,
    RUN_OUTPUT,
    RUN_FINISHED,
    *APPROVAL_TYPES,
)


@dataclass(frozen=True, slots=True)
class JobEvent:
    """A job created, changed or deleted: the job as it is now (as it was, when deleted)."""

    type: ClassVar[str]
    owner: str
    job: Job
    run: ClassVar[None] = None
    text: ClassVar[None] = None
    offset: ClassVar[None] = None


class JobCreated(JobEvent):
    __slots__ = ()
    type = JOB_CREATED


class JobUpdated(JobEvent):
    __slots__ = ()
    type = JOB_UPDATED


class JobDeleted(JobEvent):
    __slots__ = ()
    type = JOB_DELETED


@dataclass(frozen=True, slots=True)
class RunEvent:
    """A run started or ended."""

    type: ClassVar[str]
    owner: str
    run: Run
    job: Job | None = None
    """For run.finished: the job as this end settled it when someone wants job.updated (None if
    that state was not read back); while nobody does, the job as it was fired, whose definition
    is current but whose state (counters, next fire) predates the end. For run.started: the job
    fired."""
    text: ClassVar[None] = None
    offset: ClassVar[None] = None


class RunStarted(RunEvent):
    __slots__ = ()
    type = RUN_STARTED


class RunFinished(RunEvent):
    __slots__ = ()
    type = RUN_FINISHED


@dataclass(frozen=True, slots=True)
class RunOutput:
    """A chunk of a run's output."""

    type: ClassVar[str] = RUN_OUTPUT
    owner: str
    run: Run
    text: str
    offset: int
    """Where the chunk starts in the run's whole output (characters), so that a client can join
    live chunks to the stored output without gaps or repeats."""
    job: ClassVar[None] = None


@dataclass(frozen=True, slots=True)
class ApprovalEvent:
    """A tool call's approval request asked, decided or expired (``server/approvals.py``): the
    record as it is now. On the engine's bus so that it reaches the views of every server on
    a shared store, as job and run events do (``event_relay.py``)."""

    type: ClassVar[str]
    owner: str
    record: ApprovalRecord
    job: ClassVar[None] = None
    run: ClassVar[None] = None
    text: ClassVar[None] = None
    offset: ClassVar[None] = None


class ApprovalCreated(ApprovalEvent):
    __slots__ = ()
    type = APPROVAL_CREATED


class ApprovalDecided(ApprovalEvent):
    __slots__ = ()
    type = APPROVAL_DECIDED


class ApprovalExpired(ApprovalEvent):
    __slots__ = ()
    type = APPROVAL_EXPIRED


APPROVAL_EVENTS: dict[str, type[ApprovalEvent]] = {
    APPROVAL_CREATED: ApprovalCreated,
    APPROVAL_DECIDED: ApprovalDecided,
    APPROVAL_EXPIRED: ApprovalExpired,
}

Event = JobEvent | RunEvent | RunOutput | ApprovalEvent
"""One change, pushed synchronously from the engine's loop; listeners must be quick. Each type
is its own class (``JobCreated``, ``JobUpdated``, ``JobDeleted``, ``RunStarted``,
``RunFinished``, ``RunOutput``, ``ApprovalCreated``, ``ApprovalDecided``,
``ApprovalExpired``); ``type`` is its name on the wire (``job.created``...)."""

_JOB_EVENTS: dict[str, type[JobEvent]] = {
    JOB_CREATED: JobCreated,
    JOB_UPDATED: JobUpdated,
    JOB_DELETED: JobDeleted,
}
_RUN_EVENTS: dict[str, type[RunEvent]] = {RUN_STARTED: RunStarted, RUN_FINISHED: RunFinished}


Listener = Callable[[Event], None]


@dataclass(frozen=True, slots=True, eq=False)
class _Subscription:
    listener: Listener
    types: frozenset[str] | None
    listening: Callable[[], bool] | None
    remote: bool

    def takes(self, kind: str) -> bool:
        return self.types is None or kind in self.types

    def wants(self, kind: str) -> bool:
        if not self.takes(kind):
            return False
        if self.listening is None:
            return True
        try:
            return self.listening()
        except Exception:
            # Asked from the engine's own work (its writer, its runs): a failing check must not
            # stop that work, and an event too many is harmless.
            log.exception("event listener %r: listening() failed", self.listener)
            return True


class EventBus:
    """Calls each listener for the events it wants; a failing listener is logged, never fatal.

    A listener says which event types it wants and, optionally, how to tell whether it listens
    right now: the engine asks ``wants`` before the work that only events need (building them,
    reading back settled job states), so nobody listening costs nothing.

    Events of other engines on a shared store (relayed: ``relay``) go only to the listeners
    subscribed with ``remote=True`` (live views); the others (outcome notifications, the relay
    itself) act on this engine's own work only, so nothing is done twice or echoed back."""

    def __init__(self) -> None:
        self._subscriptions: list[_Subscription] = []

    def subscribe(
        self,
        listener: Listener,
        *,
        types: Iterable[str] | None = None,
        listening: Callable[[], bool] | None = None,
        remote: bool = False,
    ) -> Callable[[], None]:
        """``types``: the event types ``listener`` wants (None: all). ``listening``: whether it
        listens now (None: always); events it would get while it does not are never built for
        it, so it must not need them (say, its clients re-read the store when they connect).
        ``remote``: it also gets the events of runs and jobs other engines handle."""
        wanted = None if types is None else frozenset(types)
        if wanted is not None and not wanted <= set(EVENT_TYPES):
            unknown = sorted(wanted - set(EVENT_TYPES))
            raise ValidationError("types", f"unknown event types {unknown}", accepted=EVENT_TYPES)
        subscription = _Subscription(listener, wanted, listening, remote)
        self._subscriptions.append(subscription)

        def unsubscribe() -> None:
            if subscription in self._subscriptions:
                self._subscriptions.remove(subscription)

        return unsubscribe

    def wants(self, *kinds: str) -> bool:
        """Whether some listener wants an event of one of ``kinds`` now."""
        return any(sub.wants(kind) for sub in self._subscriptions for kind in kinds)

    def wants_remote(self, *kinds: str) -> bool:
        """Whether some ``remote`` listener wants an event of one of ``kinds`` now."""
        return any(sub.remote and sub.wants(kind) for sub in self._subscriptions for kind in kinds)

    def relay(self, event: Event) -> None:
        """Deliver an event of another engine to the ``remote`` listeners that want it."""
        wanting = [s.listener for s in self._subscriptions if s.remote and s.wants(event.type)]
        self._deliver(wanting, event)

    def subscribed(self, *kinds: str) -> bool:
        """Whether some listener takes events of one of ``kinds``, listening now or not."""
        return any(sub.takes(kind) for sub in self._subscriptions for kind in kinds)

    def emit(self, event: Event) -> None:
        self._deliver(self._wanting(event.type), event)

    def job(self, kind: str, job: Job) -> None:
        wanting = self._wanting(kind)
        if wanting:
            self._deliver(wanting, _JOB_EVENTS[kind](job.owner, job))

    def run(
        self,
        kind: str,
        run: Run,
        *,
        job: Job | None = None,
        text: str | None = None,
        offset: int | None = None,
    ) -> None:
        wanting = self._wanting(kind)
        if wanting:
            self._deliver(wanting, _run_event(kind, run, job, text, offset))

    def _wanting(self, kind: str) -> list[Listener]:
        return [sub.listener for sub in self._subscriptions if sub.wants(kind)]

    @staticmethod
    def _deliver(listeners: list[Listener], event: Event) -> None:
        for listener in listeners:
            try:
                listener(event)
            except Exception:
                log.exception("event listener %r failed on %s", listener, event.type)


def _run_event(
    kind: str, run: Run, job: Job | None, text: str | None, offset: int | None
) -> RunEvent | RunOutput:
    if kind == RUN_OUTPUT:
        if text is None or offset is None:
            raise ValidationError("text", "a run.output event carries its text and offset")
        return RunOutput(run.owner, run, text, offset)
    return _RUN_EVENTS[kind](run.owner, run, job)
