"""The approvals inbox on the server: records, decisions, expiry, events and the REST routes.

``ApprovalInbox`` keeps the records in the store (``ApprovalStore``) and announces each change
on the event stream (``approval.created``, ``approval.decided``, ``approval.expired``). A kernel
that asks creates a record over REST and polls it from its own thread (``kernel/inbox.py``); a
server-side tool job asks through ``ServerInboxGate``. The first answer wins, whichever
surface gave it; the record keeps who gave it and when. A server-side run that ends before a
decision withdraws its record (``expired``, with a note saying why: ``core/approvals.py``):
at once when it is stopped, its job deleted or its server stopping; at the next start for the
runs a crashed server left, when they are found interrupted (``attach``).

``GET /api/recall/approvals[?status=]``, ``POST /api/recall/approvals`` (a kernel asks),
``GET /api/recall/approvals/{id}``, ``POST /api/recall/approvals/{id}`` (a decision).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from functools import partial
from typing import TypeVar

import anyio
from jupyter_server.auth.decorator import authorized
from tornado import web

from jupyter_recall.core.approvals import (
    EXPIRED,
    PENDING,
    ApprovalJSON,
    ApprovalRecord,
    check_decision,
    check_note,
    check_status,
    clip_summary,
    withdrawn_note,
)
from jupyter_recall.core.clock import Clock
from jupyter_recall.core.errors import ConflictError, NotFoundError, ValidationError
from jupyter_recall.core.limits import ID_PATTERN
from jupyter_recall.core.model import RunStatus
from jupyter_recall.core.records import refuse_unknown
from jupyter_recall.engine.events import (
    APPROVAL_CREATED,
    APPROVAL_DECIDED,
    APPROVAL_EVENTS,
    APPROVAL_EXPIRED,
    RUN_FINISHED,
    Event,
    RunFinished,
)
from jupyter_recall.engine.scheduler import Scheduler
from jupyter_recall.server.handlers import RecallHandler
from jupyter_recall.server.listing import (
    MAX_PAGE,
    approval_cursor,
    page_of,
    parse_approval_cursor,
)
from jupyter_recall.server.sse import EventHub
from jupyter_recall.store.base import ApprovalCursor, ApprovalStore
from jupyter_recall.tools.approval import INBOX_OUTCOMES, ApprovalRequest, check_timeout

T = TypeVar("T")

CREATED = APPROVAL_CREATED
DECIDED = APPROVAL_DECIDED
EXPIRED_EVENT = APPROVAL_EXPIRED
MAX_TIMEOUT = 7 * 24 * 3600.0
INTERRUPTED = "was interrupted (its server stopped)"
"""Why the approval of a run found interrupted is withdrawn."""
STOPPED_WAITING = "stopped waiting"
APPROVAL_PAGE = 500
"""The page size when ``?limit=`` is absent: all that an unpaged client (the inbox panel,
releases before paging) was answered before."""
"""Why a record its asker withdrew (``POST .../withdraw``) is withdrawn."""
log = logging.getLogger("jupyter_recall.approvals")


def approval_to_json(record: ApprovalRecord) -> ApprovalJSON:
    return record.to_json()


class ApprovalInbox:
    """Owner-scoped approval records; store calls go to one worker thread."""

    def __init__(self, store: ApprovalStore, events: EventHub, clock: Clock) -> None:
        self._store = store
        self._events = events
        self._clock = clock
        self._scheduler: Scheduler | None = None
        self._limiter = anyio.CapacityLimiter(1)
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._expiring: set[asyncio.Task[None]] = set()
        self._withdrawing: set[asyncio.Task[None]] = set()

    async def _call(self, func: Callable[[], T]) -> T:
        return await anyio.to_thread.run_sync(func, limiter=self._limiter)

    async def create(
        self, owner: str, *, tool: str, summary: str, source: str, asked_by: str, timeout: float
    ) -> ApprovalRecord:
        now = self._clock.now()
        record = ApprovalRecord(
            id=uuid.uuid4().hex,
            owner=owner,
            tool=tool,
            summary=clip_summary(summary),
            source=source,
            asked_by=asked_by,
            created_at=now,
            expires_at=now + timedelta(seconds=timeout),
        )
        await self._call(lambda: self._store.insert_approval(record))
        self._publish(CREATED, record)
        # Expiry is announced when it happens; after a restart, reads find it (``expire_due``).
        self._timers[record.id] = asyncio.get_running_loop().call_later(
            timeout, self._expire, record.id
        )
        return record

    def _expire(self, approval_id: str) -> None:
        self._timers.pop(approval_id, None)
        task = asyncio.get_running_loop().create_task(self.expire_due())
        self._expiring.add(task)
        task.add_done_callback(self._expiring.discard)

    async def expire_due(self) -> None:
        now = self._clock.now()
        for approval_id in await self._call(lambda: self._store.expire_approvals(now=now)):
            record = await self._call(partial(self._store.get_approval, approval_id))
            if record is not None:
                self._publish(EXPIRED_EVENT, record)

    async def get(self, owner: str, approval_id: str) -> ApprovalRecord:
        await self.expire_due()
        record = await self._call(lambda: self._store.get_approval(approval_id))
        if record is None or record.owner != owner:
            raise NotFoundError("approval", approval_id)
        return record

    async def list(
        self,
        owner: str,
        status: str | None = None,
        *,
        limit: int = APPROVAL_PAGE,
        after: ApprovalCursor | None = None,
    ) -> list[ApprovalRecord]:
        """``owner``'s records, newest first: at most ``limit``, after ``after`` if given."""
        await self.expire_due()
        return await self._call(
            lambda: self._store.list_approvals(owner, status, limit=limit, after=after)
        )

    async def decide(
        self, owner: str, approval_id: str, decision: object, *, by: str, note: object = None
    ) -> ApprovalRecord:
        """Record ``decision`` (approve/deny); ConflictError once decided or expired."""
        status = check_decision(decision)
        note = check_note(note)
        record = await self.get(owner, approval_id)
        now = self._clock.now()
        settled = await self._call(
            lambda: self._store.decide_approval(
                approval_id, status, decided_by=by, note=note, now=now
            )
        )
        if not settled:
            raise await self._settled_already(owner, approval_id)
        self._cancel_timer(approval_id)
        record = await self.get(owner, approval_id)
        self._publish(DECIDED, record)
        return record

    async def _settled_already(self, owner: str, approval_id: str) -> ConflictError:
        current = await self.get(owner, approval_id)
        why = f" ({current.note})" if current.status == EXPIRED and current.note else ""
        return ConflictError(f"approval {approval_id} is already {current.status}{why}")

    async def withdraw(self, approval_id: str, note: str) -> bool:
        """Settle a pending record ``expired`` with ``note``: whoever asked no longer waits.
        False when it was not pending."""
        now = self._clock.now()
        settled = await self._call(
            lambda: self._store.decide_approval(
                approval_id, EXPIRED, decided_by=None, note=note, now=now
            )
        )
        if not settled:
            return False
        self._cancel_timer(approval_id)
        record = await self._call(partial(self._store.get_approval, approval_id))
        if record is not None:
            self._publish(EXPIRED_EVENT, record)
        return True

    async def abandon(self, owner: str, approval_id: str) -> ApprovalRecord:
        """Withdraw a pending record for whoever asked it (``POST .../withdraw``: its asker
        stopped waiting); ConflictError once decided or expired, as a decision."""
        record = await self.get(owner, approval_id)
        if not await self.withdraw(approval_id, withdrawn_note(record.asked_by, STOPPED_WAITING)):
            raise await self._settled_already(owner, approval_id)
        return await self.get(owner, approval_id)

    async def withdraw_asked_by(
        self,
        asked_by: Sequence[str],
        why: str,
        *,
        owner: str | None = None,
        asked_before: datetime | None = None,
    ) -> None:
        """Withdraw the pending records asked by one of ``asked_by`` (``owner``'s alone when
        given: an interrupted run's) that were asked before ``asked_before`` when given (a
        kernel shut down or restarted: the cell that waited is gone; a request of the
        restarted kernel is not)."""
        pending = await self._call(lambda: self._store.pending_approvals_asked_by(asked_by))
        for record in pending:
            if owner not in (None, record.owner):
                continue
            if asked_before is None or record.created_at < asked_before:
                await self.withdraw(record.id, withdrawn_note(record.asked_by, why))

    def attach(self, scheduler: Scheduler) -> None:
        """Withdraw the records of the runs found interrupted: those a crashed server left,
        when the next start (or another engine, its lease gone) interrupts them. Changes of
        records go on the scheduler's bus from then on, so that the views of the other servers
        on its store see them too."""
        scheduler.subscribe(self._on_run_finished, types={RUN_FINISHED})
        self._scheduler = scheduler

    def _on_run_finished(self, event: Event) -> None:
        if not isinstance(event, RunFinished) or event.run.status is not RunStatus.INTERRUPTED:
            return
        run = event.run
        work = self.withdraw_asked_by([f"run:{run.id}"], INTERRUPTED, owner=run.owner)
        task = asyncio.get_running_loop().create_task(work)
        self._withdrawing.add(task)
        task.add_done_callback(self._withdrawn)

    def _withdrawn(self, task: asyncio.Task[None]) -> None:
        self._withdrawing.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("approvals of an interrupted run not withdrawn", exc_info=task.exception())

    def _cancel_timer(self, approval_id: str) -> None:
        timer = self._timers.pop(approval_id, None)
        if timer is not None:
            timer.cancel()

    def _publish(self, kind: str, record: ApprovalRecord) -> None:
        event = APPROVAL_EVENTS[kind](record.owner, record)
        if self._scheduler is None:
            self._events.publish(event)
        else:
            self._scheduler.publish(event)

    async def aclose(self) -> None:
        """Stop the timers; let the withdrawals under way finish (call before the store
        closes, after the engine stopped: its last runs may have ended interrupted)."""
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        for task in self._expiring:
            task.cancel()
        if self._withdrawing:
            await asyncio.wait(set(self._withdrawing), timeout=10)


class ServerInboxGate:
    """``tools.approval.ApprovalInbox`` for a server-side tool job: its requests are records of
    the job's owner, asked by its run; answers come from the inbox alone."""

    def __init__(self, inbox: ApprovalInbox, owner: str, asked_by: str) -> None:
        self._inbox = inbox
        self._owner = owner
        self._asked_by = asked_by
        self._opened: list[str] = []

    async def open(self, request: ApprovalRequest) -> str:
        # Shielded: a run stopped meanwhile still learns the record's id, to withdraw it.
        with anyio.CancelScope(shield=True):
            record = await self._inbox.create(
                self._owner,
                tool=request.tool,
                summary=request.describe(),
                source=request.source,
                asked_by=self._asked_by,
                timeout=request.timeout,
            )
        self._opened.append(record.id)
        return record.id

    async def withdraw(self, why: str) -> None:
        """The run no longer waits: withdraw its records still pending (never raises)."""
        note = withdrawn_note(self._asked_by, why)
        for record_id in self._opened:
            try:
                await self._inbox.withdraw(record_id, note)
            except Exception:
                log.exception("approval %s not withdrawn", record_id)

    async def abandon(self, record_id: str) -> None:
        """Nothing here: the run's executor withdraws its records itself, shielded, with the
        reason the run stopped (``ServerApprovals.ask``, ``withdraw``)."""

    async def outcome(self, record_id: str) -> str | None:
        record = await self._inbox.get(self._owner, record_id)
        return INBOX_OUTCOMES.get(record.status)

    async def decide(self, record_id: str, approved: bool) -> str | None:
        record = await self._inbox.get(self._owner, record_id)
        return INBOX_OUTCOMES.get(record.status)


# --- REST ------------------------------------------------------------------------------------


def _inbox(handler: RecallHandler) -> ApprovalInbox:
    inbox: ApprovalInbox = handler.settings["jupyter_recall_approvals"]
    return inbox


def decider(handler: RecallHandler) -> str:
    """Who decides: the owner the request acts as (``server/owners.py``), as for every row.

    Not ``current_user.username``: with the stock shared token each request gets a new random
    "Anonymous" name, so one user's two decisions would name two people.
    """
    return handler.owner


def _text(body: Mapping[str, object], name: str, limit: int = 500) -> str:
    value = body.get(name)
    if not isinstance(value, str) or not value.strip() or len(value) > limit:
        raise ValidationError(name, f"must be non-empty text of at most {limit} characters")
    return value


NEW_APPROVAL_FIELDS = ("tool", "summary", "source", "asked_by", "timeout")


class ApprovalsHandler(RecallHandler):
    auth_resource = "recall"

    @web.authenticated
    @authorized
    async def get(self) -> None:
        status = self.get_query_argument("status", None)
        limit = self.query_count("limit", MAX_PAGE) or APPROVAL_PAGE
        records = await _inbox(self).list(
            self.owner,
            None if status is None else check_status(status),
            limit=limit + 1,
            after=parse_approval_cursor(self.get_query_argument("cursor", None)),
        )
        page, last = page_of(records, limit)
        self.send_json(
            {
                "approvals": [approval_to_json(record) for record in page],
                "next_cursor": None if last is None else approval_cursor(last),
            }
        )

    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = self.json_body()
        refuse_unknown(body, NEW_APPROVAL_FIELDS)
        timeout = body.get("timeout", 300)
        if check_timeout(timeout) > MAX_TIMEOUT:
            raise ValidationError("timeout", f"must be at most {MAX_TIMEOUT:g} seconds")
        record = await _inbox(self).create(
            self.owner,
            tool=_text(body, "tool", 200),
            summary=_text(body, "summary", 10_000),
            source=_text(body, "source"),
            asked_by=_text(body, "asked_by"),
            timeout=float(timeout),
        )
        self.send_json(approval_to_json(record), status=201)


class ApprovalHandler(RecallHandler):
    auth_resource = "recall"

    @web.authenticated
    @authorized
    async def get(self, approval_id: str) -> None:
        record = await _inbox(self).get(self.owner, approval_id)
        self.send_json(approval_to_json(record))

    @web.authenticated
    @authorized
    async def post(self, approval_id: str) -> None:
        body = self.json_body()
        # A misspelt field (``notes``) is refused, not decided without it.
        refuse_unknown(body, ("decision", "note"))
        record = await _inbox(self).decide(
            self.owner,
            approval_id,
            body.get("decision"),
            by=decider(self),
            note=body.get("note"),
        )
        self.send_json(approval_to_json(record))


class ApprovalWithdrawHandler(RecallHandler):
    """The asker no longer waits (``POST .../withdraw``); the record stays in the history."""

    auth_resource = "recall"

    @web.authenticated
    @authorized
    async def post(self, approval_id: str) -> None:
        record = await _inbox(self).abandon(self.owner, approval_id)
        self.send_json(approval_to_json(record))


def approval_routes() -> list[tuple[str, type[RecallHandler]]]:
    return [
        (r"/api/recall/approvals", ApprovalsHandler),
        (rf"/api/recall/approvals/(?P<approval_id>{ID_PATTERN})", ApprovalHandler),
        (rf"/api/recall/approvals/(?P<approval_id>{ID_PATTERN})/withdraw", ApprovalWithdrawHandler),
    ]


__all__ = [
    "CREATED",
    "DECIDED",
    "EXPIRED_EVENT",
    "PENDING",
    "ApprovalInbox",
    "ServerInboxGate",
    "approval_routes",
    "approval_to_json",
]
