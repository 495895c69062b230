"""Clocks: how the engine reads the time and waits for an instant, a bound or a wake-up."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

import anyio
import pytest

from jupyter_recall.core.clock import ManualClock, SystemClock

pytestmark = pytest.mark.anyio

UTC = timezone.utc
T0 = datetime(2030, 1, 1, tzinfo=UTC)


async def test_the_system_clock_sleeps_until_the_deadline_or_the_bound() -> None:
    clock = SystemClock()
    started = time.monotonic()
    await clock.sleep_until(clock.now() + timedelta(seconds=0.05), max_sleep=10)
    assert 0.04 <= time.monotonic() - started < 1
    started = time.monotonic()
    await clock.sleep_until(clock.now() + timedelta(hours=1), max_sleep=0.05)
    assert 0.04 <= time.monotonic() - started < 1


async def wait_long(clock: SystemClock, wake: anyio.Event) -> None:
    await clock.sleep_until(clock.now() + timedelta(hours=1), max_sleep=60, wake=wake)


async def test_the_system_clock_wakes_when_told() -> None:
    clock = SystemClock()
    wake = anyio.Event()
    started = time.monotonic()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(wait_long, clock, wake)
        await anyio.sleep(0.02)
        wake.set()
    assert time.monotonic() - started < 1
    with anyio.fail_after(1):
        await clock.sleep_until(clock.now() + timedelta(hours=1), max_sleep=60, wake=wake)


async def test_the_manual_clock_returns_when_moved_past_the_deadline_or_woken() -> None:
    clock = ManualClock(T0)
    done: list[str] = []

    async def sleeper(name: str, wake: anyio.Event | None) -> None:
        await clock.sleep_until(T0 + timedelta(seconds=10), max_sleep=60, wake=wake)
        done.append(name)

    wake = anyio.Event()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(sleeper, "plain", None)
        tasks.start_soon(sleeper, "wakeable", wake)
        await anyio.sleep(0.01)
        clock.advance(5)
        await anyio.sleep(0.01)
        assert done == []
        wake.set()
        await anyio.sleep(0.01)
        assert done == ["wakeable"]
        clock.advance(5)
    assert done == ["wakeable", "plain"]
