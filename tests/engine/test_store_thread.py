"""The engine's store thread: calls run one at a time in the order made, results and errors
come back to their callers, and a cancelled caller waits for its call to end."""

from __future__ import annotations

import threading

import anyio
import pytest

from jupyter_recall.engine.store_thread import StoreThread

pytestmark = pytest.mark.anyio


async def test_calls_run_in_order_on_one_thread_and_answer_their_callers() -> None:
    store_thread = StoreThread()
    seen: list[tuple[int, str]] = []

    def call(index: int) -> int:
        seen.append((index, threading.current_thread().name))
        return index * 10

    results: dict[int, int] = {}

    async def caller(index: int) -> None:
        results[index] = await store_thread.run(lambda: call(index))

    async with anyio.create_task_group() as tasks:
        for index in range(50):
            tasks.start_soon(caller, index)
    store_thread.close()
    assert results == {index: index * 10 for index in range(50)}
    assert sorted(seen) == seen  # started in the order made, one after the other
    assert {name for _, name in seen} == {"recall-store"}


async def test_an_error_reaches_its_caller_and_the_thread_goes_on() -> None:
    store_thread = StoreThread()

    def fail() -> None:
        raise LookupError("no such row")

    with pytest.raises(LookupError, match="no such row"):
        await store_thread.run(fail)
    assert await store_thread.run(lambda: "still serving") == "still serving"
    store_thread.close()


async def test_a_cancelled_caller_waits_for_its_call_to_end() -> None:
    store_thread = StoreThread()
    started, release = threading.Event(), threading.Event()
    ended: list[str] = []
    scopes: list[anyio.CancelScope] = []

    def slow() -> None:
        started.set()
        release.wait(30)
        ended.append("written")

    async def caller() -> None:
        with anyio.CancelScope() as scope:
            scopes.append(scope)
            await store_thread.run(slow)
        ended.append("caller done")

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(caller)
        await anyio.to_thread.run_sync(started.wait, 30)
        scopes[0].cancel()
        await anyio.sleep(0.05)
        assert ended == []  # cancelled, the caller still waits for its call
        release.set()
    assert ended == ["written", "caller done"]
    assert scopes[0].cancelled_caught
    store_thread.close()


async def test_a_closed_thread_starts_again_on_the_next_call() -> None:
    store_thread = StoreThread()
    assert await store_thread.run(lambda: 1) == 1
    store_thread.close()
    assert await store_thread.run(lambda: 2) == 2
    store_thread.close()
