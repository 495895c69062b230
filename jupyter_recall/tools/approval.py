"""Approval requests: a tool whose policy is ``approve`` waits here for a person's answer.

The waiting side is a coroutine (``Approvals.ask``) on whatever event loop runs the tool; the
answering side (``answer``) may be any thread: a widget's button callback, a test, another
subshell. A request ends ``approved``, ``denied``, ``timeout`` or ``cancelled``: never a hang.
How a request is shown is left to ``on_request`` callbacks (the kernel draws buttons).

With an ``inbox`` (the server's approvals inbox), each request is also a record there: its id
becomes the request's, the waiting coroutine polls the record (so an answer given in the
sidebar, the CLI or REST reaches it however busy the asking thread's kernel is), and a local
answer is recorded there too. The first answer wins, wherever it was given.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypedDict

from jupyter_recall.core import approvals as records
from jupyter_recall.core.errors import NotFoundError, ValidationError

DEFAULT_TIMEOUT = 300.0
APPROVED = "approved"
DENIED = "denied"
TIMEOUT = "timeout"
CANCELLED = "cancelled"

INBOX_OUTCOMES = {records.APPROVED: APPROVED, records.DENIED: DENIED, records.EXPIRED: TIMEOUT}
"""A settled inbox record's status -> the outcome of the waiting request."""
POLL_INTERVAL = 0.5
"""Seconds between two looks at the inbox record of a waiting request."""

RequestCallback = Callable[["ApprovalRequest"], Any]
log = logging.getLogger("jupyter_recall.tools")


class ApprovalInbox(Protocol):
    """Where requests are recorded and answered besides this process (the server's inbox).
    Outcomes are ``APPROVED``, ``DENIED``, ``TIMEOUT`` or None (still pending)."""

    async def open(self, request: ApprovalRequest) -> str:
        """Record the request; return the record's id."""
        ...

    async def outcome(self, record_id: str) -> str | None: ...

    async def decide(self, record_id: str, approved: bool) -> str | None:
        """Record a local answer; return the recorded outcome (an earlier answer wins)."""
        ...

    async def abandon(self, record_id: str) -> None:
        """The request was cancelled (an interrupted cell, a cancelled task): nothing waits
        for the record's decision any more; withdraw it if it is still pending."""
        ...


class RequestJSON(TypedDict):
    """A pending question as the kernel's inbox lists it (the tool's params free-form)."""

    request_id: str
    tool: str
    params: dict[str, Any]
    source: str
    timeout: float
    asked_at: float
    outcome: str | None


@dataclass(eq=False)
class ApprovalRequest:
    """One pending question: may ``tool`` run with ``params``?"""

    request_id: str
    tool: str
    params: dict[str, Any]
    source: str
    """Why approval is needed: the policy's source."""
    timeout: float
    asked_at: float = field(default_factory=time.time)
    outcome: str | None = None
    _settle: Callable[[bool], None] | None = field(default=None, repr=False)

    def describe(self) -> str:
        shown = ", ".join(f"{key}={value!r}" for key, value in self.params.items())
        return f"{self.tool}({shown})"

    def to_json(self) -> RequestJSON:
        return {
            "request_id": self.request_id,
            "tool": self.tool,
            "params": self.params,
            "source": self.source,
            "timeout": self.timeout,
            "asked_at": self.asked_at,
            "outcome": self.outcome,
        }


class Approvals:
    """Pending approval requests of one process (thread-safe)."""

    def __init__(
        self,
        timeout: float = DEFAULT_TIMEOUT,
        *,
        inbox: ApprovalInbox | None = None,
        poll_interval: float = POLL_INTERVAL,
    ) -> None:
        self.inbox = inbox
        self.poll_interval = poll_interval
        self._lock = threading.Lock()
        self._pending: dict[str, ApprovalRequest] = {}
        self._ids = itertools.count(1)
        self._timeout = check_timeout(timeout)
        self.on_request: list[RequestCallback] = []
        """Called with each new request (from the asking loop's thread): show it."""
        self.on_settled: list[RequestCallback] = []
        """Called once a request has its outcome: update what was shown."""
        self._abandoning: set[asyncio.Future[None]] = set()

    @property
    def timeout(self) -> float:
        return self._timeout

    @timeout.setter
    def timeout(self, seconds: float) -> None:
        self._timeout = check_timeout(seconds)

    def pending(self) -> list[ApprovalRequest]:
        """Requests waiting for an answer, oldest first."""
        with self._lock:
            return list(self._pending.values())

    def answer(self, request_id: str, approved: bool) -> ApprovalRequest:
        """Approve (True) or deny (False) a pending request; NotFoundError if it is not
        pending (unknown, already answered, timed out)."""
        if not isinstance(approved, bool):
            raise ValidationError("approved", f"must be true or false, got {approved!r}")
        with self._lock:
            request = self._pending.pop(request_id, None)
        if request is None or request._settle is None:
            raise NotFoundError("pending approval request", request_id)
        request._settle(approved)
        return request

    async def ask(
        self, tool: str, params: Mapping[str, Any], source: str, timeout: float | None = None
    ) -> ApprovalRequest:
        """Wait for an answer; the returned request's ``outcome`` says how it ended."""
        loop = asyncio.get_running_loop()
        answered: asyncio.Future[tuple[str, bool]] = loop.create_future()

        def settle(approved: bool) -> None:
            # The loop may be gone when an answer races the timeout; the request is then over.
            with contextlib.suppress(RuntimeError):
                outcome = APPROVED if approved else DENIED
                loop.call_soon_threadsafe(_resolve, answered, (outcome, True))

        request = ApprovalRequest(
            request_id=f"approval-{next(self._ids)}",
            tool=tool,
            params=dict(params),
            source=source,
            timeout=self._timeout if timeout is None else check_timeout(timeout),
            _settle=settle,
        )
        recorded = await self._record(request)
        with self._lock:
            self._pending[request.request_id] = request
        self._notify(self.on_request, request)
        watching = loop.create_task(self._watch(request, answered)) if recorded else None
        try:
            request.outcome = await self._outcome(request, answered, recorded)
        except asyncio.CancelledError:
            request.outcome = CANCELLED
            if recorded:
                await self._abandon(request)
            raise
        finally:
            if watching is not None:
                watching.cancel()
            with self._lock:
                self._pending.pop(request.request_id, None)
            request._settle = None
            self._notify(self.on_settled, request)
        return request

    async def _record(self, request: ApprovalRequest) -> bool:
        """Make the request a record of the inbox (its id becomes the request's)."""
        if self.inbox is None:
            return False
        try:
            request.request_id = await self.inbox.open(request)
        except Exception as error:
            # Asking here still works; only other surfaces will not see the request.
            log.info("approval of %s not recorded in the inbox: %s", request.tool, error)
            return False
        return True

    async def _outcome(
        self,
        request: ApprovalRequest,
        answered: asyncio.Future[tuple[str, bool]],
        recorded: bool,
    ) -> str:
        try:
            outcome, local = await asyncio.wait_for(answered, request.timeout)
        except asyncio.TimeoutError:
            return TIMEOUT
        if local and recorded and self.inbox is not None:
            with contextlib.suppress(Exception):
                # The inbox's record is the truth: an answer given elsewhere first wins.
                outcome = (
                    await self.inbox.decide(request.request_id, outcome == APPROVED) or outcome
                )
        return outcome

    async def _abandon(self, request: ApprovalRequest) -> None:
        """Withdraw a cancelled request's record, so that nobody is asked to decide a call
        that no longer waits. Shielded: the cancellation under way must not stop it (under a
        cancel scope that cancels again, it finishes in the background)."""
        assert self.inbox is not None
        work = asyncio.ensure_future(self.inbox.abandon(request.request_id))
        self._abandoning.add(work)
        work.add_done_callback(self._abandoned)
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(work)

    def _abandoned(self, work: asyncio.Future[None]) -> None:
        self._abandoning.discard(work)
        if not work.cancelled() and work.exception() is not None:
            log.info("approval request not withdrawn from the inbox: %s", work.exception())

    async def _watch(
        self, request: ApprovalRequest, answered: asyncio.Future[tuple[str, bool]]
    ) -> None:
        """Poll the inbox record until it is settled (or the request ends)."""
        assert self.inbox is not None
        while not answered.done():
            await asyncio.sleep(self.poll_interval)
            try:
                outcome = await self.inbox.outcome(request.request_id)
            except Exception as error:
                log.debug("approval %s: inbox not readable: %s", request.request_id, error)
                continue
            if outcome is not None:
                _resolve(answered, (outcome, False))

    @staticmethod
    def _notify(callbacks: list[RequestCallback], request: ApprovalRequest) -> None:
        # Showing a request must never decide it: a broken display leaves the request pending
        # (it still times out).
        for callback in list(callbacks):
            with contextlib.suppress(Exception):
                callback(request)


def _resolve(future: asyncio.Future[tuple[str, bool]], answer: tuple[str, bool]) -> None:
    if not future.done():
        future.set_result(answer)


def check_timeout(seconds: object) -> float:
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds <= 0:
        raise ValidationError("timeout", f"must be a number of seconds > 0, got {seconds!r}")
    return float(seconds)
