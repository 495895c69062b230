"""A private event loop in a daemon thread, for sync callers (a notebook cell) of async work.

A cell cannot ``asyncio.run`` (the kernel's own loop is running in its thread) and must not
block the kernel's loop with ``run_until_complete``; it hands coroutines to this loop instead
and waits for their result. Background tasks live on the same loop, so they go on running while
the kernel is idle.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class LoopThread:
    """An event loop running forever in a daemon thread, started on first use."""

    def __init__(self, name: str = "jupyter_recall-loop") -> None:
        self._name = name
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                self._start()
            assert self._loop is not None
            return self._loop

    def _start(self) -> None:
        loop = asyncio.new_event_loop()
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(loop)
            loop.call_soon(ready.set)
            loop.run_forever()

        self._thread = threading.Thread(target=run, name=self._name, daemon=True)
        self._thread.start()
        ready.wait()
        self._loop = loop

    def in_loop_thread(self) -> bool:
        return self._thread is not None and threading.current_thread() is self._thread

    def submit(
        self, coroutine: Coroutine[Any, Any, T], context: contextvars.Context | None = None
    ) -> concurrent.futures.Future[T]:
        """Schedule ``coroutine`` on the loop; cancelling the returned future cancels it.

        The coroutine runs in ``context`` (default: a copy of the caller's), so context
        variables of the caller apply to it, e.g. the kernel's parent message, which routes
        what it prints and displays to the cell that started it.
        """
        loop = self.loop
        context = context if context is not None else contextvars.copy_context()
        future: concurrent.futures.Future[T] = concurrent.futures.Future()

        def start() -> None:
            if future.cancelled():
                coroutine.close()
                return
            task = context.run(loop.create_task, coroutine)
            task.add_done_callback(lambda done: _copy_outcome(done, future))
            future.add_done_callback(
                lambda f: loop.call_soon_threadsafe(task.cancel) if f.cancelled() else None
            )

        loop.call_soon_threadsafe(start)
        return future

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coroutine`` on the loop and wait for its result in this thread.

        An interrupt (KeyboardInterrupt in a cell) or a timeout cancels the coroutine.
        """
        if self.in_loop_thread():
            coroutine.close()
            raise RuntimeError(
                "cannot wait for the jupyter_recall loop from inside it: use the *_async "
                "function (await jupyter_recall.run_parallel_async(...))"
            )
        future = self.submit(coroutine)
        try:
            return future.result(timeout)
        except BaseException:
            future.cancel()
            raise

    def stop(self, timeout: float = 5.0) -> None:
        """Cancel what still runs on the loop, then stop and close it."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or loop.is_closed():
            return
        if thread is not None and thread.is_alive():
            with_cancel = asyncio.run_coroutine_threadsafe(_cancel_all(), loop)
            with contextlib.suppress(concurrent.futures.TimeoutError, RuntimeError):
                with_cancel.result(timeout)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout)
        if not loop.is_running():
            loop.close()


def _copy_outcome(task: asyncio.Task[T], future: concurrent.futures.Future[T]) -> None:
    # The future stays pending while the task runs, so that cancelling it is possible.
    if task.cancelled():
        future.cancel()
        return
    if not future.set_running_or_notify_cancel():
        return
    if task.exception() is not None:
        future.set_exception(task.exception())
    else:
        future.set_result(task.result())


async def _cancel_all() -> None:
    current = asyncio.current_task()
    tasks = [task for task in asyncio.all_tasks() if task is not current]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
