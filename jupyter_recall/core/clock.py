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

    async def sleep_until(
        self, deadline: datetime, *, max_sleep: float, wake: anyio.Event | None = None
    ) -> None:
        """Return at ``deadline``, after ``max_sleep`` seconds, or once ``wake`` is set,
        whichever comes first."""
        ...


class SystemClock:
    """The wall clock. Sleeps are bounded so that jumps of the wall clock are noticed."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    async def sleep_until(
        self, deadline: datetime, *, max_sleep: float, wake: anyio.Event | None = None
    ) -> None:
        delay = max(0.0, min((deadline - self.now()).total_seconds(), max_sleep))
        if wake is None:
            await anyio.sleep(delay)
            return
        # One cancel scope with a deadline, no helper task: the engine sleeps like this
        # thousands of times a second in a burst.
        with anyio.move_on_after(delay):
            await wake.wait()


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

    async def sleep_until(
        self, deadline: datetime, *, max_sleep: float, wake: anyio.Event | None = None
    ) -> None:
        limit = min(deadline, self._now + timedelta(seconds=max_sleep))
        while self._now < limit:
            if wake is None:
                await self._moved.wait()
                continue
            if wake.is_set():
                return
            await _first_of(self._moved, wake)


async def _first_of(*events: anyio.Event) -> None:
    """Until one of ``events`` is set."""
    async with anyio.create_task_group() as waiting:

        async def wait_then_stop(event: anyio.Event) -> None:
            await event.wait()
            waiting.cancel_scope.cancel()

        for event in events:
            waiting.start_soon(wait_then_stop, event)


def monotonic() -> float:
    """Monotonic seconds, for measuring durations (never for scheduling decisions)."""
    return time.monotonic()
