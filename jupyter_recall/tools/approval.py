"""Approval requests: a tool whose policy is ``approve`` waits here for a person's answer.

The waiting side is a coroutine (``Approvals.ask``) on whatever event loop runs the tool; the
answering side (``answer``) may be any thread: a widget's button callback, a test, another
subshell. A request ends ``approved``, ``denied``, ``timeout`` or ``cancelled``: never a hang.
How a request is shown is left to ``on_request`` callbacks (the kernel draws buttons).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from jupyter_recall.core.errors import NotFoundError, ValidationError

DEFAULT_TIMEOUT = 300.0
APPROVED = "approved"
DENIED = "denied"
TIMEOUT = "timeout"
CANCELLED = "cancelled"

RequestCallback = Callable[["ApprovalRequest"], Any]


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

    def to_json(self) -> dict[str, Any]:
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

    def __init__(self, timeout: float = DEFAULT_TIMEOUT) -> None:
        self._lock = threading.Lock()
        self._pending: dict[str, ApprovalRequest] = {}
        self._ids = itertools.count(1)
        self._timeout = check_timeout(timeout)
        self.on_request: list[RequestCallback] = []
        """Called with each new request (from the asking loop's thread): show it."""
        self.on_settled: list[RequestCallback] = []
        """Called once a request has its outcome: update what was shown."""

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
        self, tool: str, params: dict[str, Any], source: str, timeout: float | None = None
    ) -> ApprovalRequest:
        """Wait for an answer; the returned request's ``outcome`` says how it ended."""
        loop = asyncio.get_running_loop()
        answered: asyncio.Future[bool] = loop.create_future()

        def settle(approved: bool) -> None:
            # The loop may be gone when an answer races the timeout; the request is then over.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_resolve, answered, approved)

        request = ApprovalRequest(
            request_id=f"approval-{next(self._ids)}",
            tool=tool,
            params=dict(params),
            source=source,
            timeout=self._timeout if timeout is None else check_timeout(timeout),
            _settle=settle,
        )
        with self._lock:
            self._pending[request.request_id] = request
        self._notify(self.on_request, request)
        try:
            approved = await asyncio.wait_for(answered, request.timeout)
            request.outcome = APPROVED if approved else DENIED
        except asyncio.TimeoutError:
            request.outcome = TIMEOUT
        except asyncio.CancelledError:
            request.outcome = CANCELLED
            raise
        finally:
            with self._lock:
                self._pending.pop(request.request_id, None)
            request._settle = None
            self._notify(self.on_settled, request)
        return request

    @staticmethod
    def _notify(callbacks: list[RequestCallback], request: ApprovalRequest) -> None:
        # Showing a request must never decide it: a broken display leaves the request pending
        # (it still times out).
        for callback in list(callbacks):
            with contextlib.suppress(Exception):
                callback(request)


def _resolve(future: asyncio.Future[bool], approved: bool) -> None:
    if not future.done():
        future.set_result(approved)


def check_timeout(seconds: object) -> float:
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds <= 0:
        raise ValidationError("timeout", f"must be a number of seconds > 0, got {seconds!r}")
    return float(seconds)
