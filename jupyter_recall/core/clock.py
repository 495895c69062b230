"""Clocks: the engine never calls ``datetime.now()`` itself, it asks the clock it was given."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone
from typing import Protocol

import anyio

UTC = timezone.utc


class Clock(Protocol):
    """Where the engine gets the time and how it waits for an instant."""

    def now(self) -> datetime:
        """The current instant as an aware UTC datetime."""
        ...

    async def sleep_until(self, deadline: datetime, *, max_sleep: float) -> None:
        """Return at ``deadline`` or after ``max_sleep`` seconds, whichever comes first."""
        ...


class SystemClock:
    """The wall clock. Sleeps are bounded so that jumps of the wall clock are noticed."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    async def sleep_until(self, deadline: datetime, *, max_sleep: float) -> None:
        delay = (deadline - self.now()).total_seconds()
        await anyio.sleep(max(0.0, min(delay, max_sleep)))


class ManualClock:
    """A clock that only moves when told to; for tests and simulations.

    ``sleep_until`` returns as soon as ``advance``/``set`` moves the time to or past the
    deadline (``max_sleep`` is measured on this clock too).
    """

    def __init__(self, start: datetime) -> None:
        if start.tzinfo is None:
            raise ValueError(f"ManualClock start must be timezone-aware, got {start!r}")
        self._now = start.astimezone(UTC)
        self._moved = anyio.Event()

    def now(self) -> datetime:
        return self._now

    def set(self, instant: datetime) -> None:
        self._now = instant.astimezone(UTC)
        self._moved.set()
        self._moved = anyio.Event()

    def advance(self, seconds: float) -> None:
        self.set(self._now + timedelta(seconds=seconds))

    async def sleep_until(self, deadline: datetime, *, max_sleep: float) -> None:
        limit = min(deadline, self._now + timedelta(seconds=max_sleep))
        while self._now < limit:
            await self._moved.wait()


def monotonic() -> float:
    """Monotonic seconds, for measuring durations (never for scheduling decisions)."""
    return time.monotonic()
