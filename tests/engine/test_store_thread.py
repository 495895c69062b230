"""The engine's store thread: calls run one at a time in the order made, results and errors
come back to their callers, and a cancelled caller waits for its call to end; a small call runs
inline when the thread is idle and the store can run it at once, else it is queued."""

from __future__ import annotations

import itertools
import sqlite3
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest

from jupyter_recall.core.clock import ManualClock
from jupyter_recall.core.errors import StoreBusy
from jupyter_recall.core.model import Job
from jupyter_recall.engine.store_thread import StoreThread
from tests.engine.support import OWNER, Script, eventually, new, running

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


class Now:
    """A store's ``run_now`` as the store thread sees it: records where each call ran, and
    refuses (``StoreBusy``, nothing done) while ``busy`` is set."""

    def __init__(self) -> None:
        self.busy = False
        self.inline: list[str] = []

    def __call__(self, func: Callable[[], Any]) -> Any:
        if self.busy:
            raise StoreBusy("a lock is held elsewhere")
        self.inline.append(threading.current_thread().name)
        return func()


async def test_a_small_call_runs_at_once_on_the_loop_thread_when_the_thread_is_idle() -> None:
    now = Now()
    store_thread = StoreThread(now=now)
    loop_thread = threading.current_thread().name
    assert await store_thread.run(lambda: threading.current_thread().name, small=True) == (
        loop_thread
    )
    assert now.inline == [loop_thread]
    # A call not marked small still goes to the thread.
    assert await store_thread.run(lambda: threading.current_thread().name) == "recall-store"
    assert now.inline == [loop_thread]
    store_thread.close()


async def test_a_small_call_waits_behind_the_calls_made_before_it() -> None:
    now = Now()
    store_thread = StoreThread(now=now)
    started, release = threading.Event(), threading.Event()
    order: list[str] = []

    def slow() -> str:
        started.set()
        release.wait(30)
        order.append("slow")
        return "slow"

    def queued() -> str:
        order.append("queued")
        return "queued"

    def small() -> str:
        order.append("small")
        return threading.current_thread().name

    results: dict[str, str] = {}

    async def call(name: str, func: Callable[[], str], *, is_small: bool = False) -> None:
        results[name] = await store_thread.run(func, small=is_small)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(call, "slow", slow)
        await anyio.to_thread.run_sync(started.wait, 30)
        tasks.start_soon(call, "queued", queued)
        await anyio.sleep(0.01)
        tasks.start_soon(partial(call, "small", small, is_small=True))
        await anyio.sleep(0.05)
        assert order == []  # the running call holds both back: nothing overtakes it
        release.set()
    assert order == ["slow", "queued", "small"]
    assert results["small"] == "recall-store"  # queued behind the others, so in the thread
    assert now.inline == []
    store_thread.close()


async def test_a_small_call_the_store_cannot_run_at_once_goes_to_the_thread() -> None:
    now = Now()
    now.busy = True
    store_thread = StoreThread(now=now)
    assert await store_thread.run(lambda: threading.current_thread().name, small=True) == (
        "recall-store"
    )
    now.busy = False
    assert await store_thread.run(lambda: 1, small=True) == 1
    assert len(now.inline) == 1
    store_thread.close()


async def test_an_error_of_an_inline_call_reaches_its_caller() -> None:
    store_thread = StoreThread(now=Now())

    def fail() -> None:
        raise LookupError("no such row")

    with pytest.raises(LookupError, match="no such row"):
        await store_thread.run(fail, small=True)
    assert await store_thread.run(lambda: "still serving", small=True) == "still serving"
    store_thread.close()


async def test_calls_inline_and_queued_never_overlap() -> None:
    """Many callers, small and not, while calls keep the thread busy: every call runs alone
    (a real SQLite connection would see one transaction at a time) and each small one that
    ran inline found nothing queued."""
    now = Now()
    store_thread = StoreThread(now=now)
    running = threading.Lock()
    overlaps: list[int] = []

    def call(index: int) -> int:
        if not running.acquire(blocking=False):
            overlaps.append(index)
            return index
        try:
            sum(range(2000))  # long enough for the other thread to try
            return index
        finally:
            running.release()

    results: dict[int, int] = {}

    async def caller(index: int) -> None:
        await anyio.sleep(0.0005 * (index % 7))
        results[index] = await store_thread.run(partial(call, index), small=index % 2 == 0)

    async with anyio.create_task_group() as tasks:
        for index in range(300):
            tasks.start_soon(caller, index)
    store_thread.close()
    assert results == {index: index for index in range(300)}
    assert overlaps == []
    assert now.inline  # some ran inline, the rest in the thread


async def test_a_creation_while_another_connection_writes_waits_off_the_loop(
    db: Path, script: Script, clock: ManualClock
) -> None:
    """The scheduler's one-job creation runs inline on SQLite; while another process's
    connection holds the write lock, it is queued to the store thread, which waits within the
    busy timeout (10 s), and the event loop goes on meanwhile: never held for that long."""
    async with running(db, script, clock) as engine:
        first = await engine.add_job(new("in 1 hour"), owner=OWNER)
        holder = sqlite3.connect(db, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        ticks: list[float] = []

        async def tick() -> None:
            while True:
                ticks.append(time.monotonic())
                await anyio.sleep(0.01)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(tick)
            creating = anyio.Event()
            created: list[Job] = []

            async def create() -> None:
                creating.set()
                created.append(await engine.add_job(new("in 2 hours"), owner=OWNER))

            tasks.start_soon(create)
            await creating.wait()
            ticked = len(ticks)
            await eventually(lambda: len(ticks) >= ticked + 5, timeout=30)  # the loop runs ...
            assert created == []  # ... while the creation waits for the lock, in the thread
            holder.execute("COMMIT")
            await eventually(lambda: bool(created), timeout=30)
            tasks.cancel_scope.cancel()
        holder.close()
        assert max(after - before for before, after in itertools.pairwise(ticks)) < 5
        listed = await engine.list_jobs(owner=OWNER)
        assert {job.id for job in listed} == {first.id, created[0].id}
