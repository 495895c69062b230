"""The engine's store thread: store calls run there, one at a time, in the order made.

What ``anyio.to_thread.run_sync`` with a ``CapacityLimiter(1)`` does, for the one hop every
REST call and firing pass makes, at a third of its cost (34-47 µs a round trip against 88-94 µs
here): a C lock wakes the thread (a queue's condition variable is Python code, run while the
event loop waits for the GIL back), and no cancel scope is entered per call. Like anyio's
default, a call cannot be abandoned: a caller cancelled while its call runs waits for the call
to end, then gets its cancellation (a store transaction is never half-known).
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_Call = tuple[Callable[[], Any], "asyncio.Future[Any]", asyncio.AbstractEventLoop]


class StoreThread:
    """A daemon thread started on the first call and ended by ``close``."""

    def __init__(self, name: str = "recall-store") -> None:
        self._name = name
        self._calls: deque[_Call | None] = deque()
        self._signal = threading.Lock()
        """Held while no call waits: releasing it wakes the thread."""
        self._signal.acquire()
        self._thread: threading.Thread | None = None

    async def run(self, func: Callable[[], T]) -> T:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._submit((func, future, loop))
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            await _until_done(future)
            raise

    def _submit(self, call: _Call | None) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name=self._name, daemon=True)
            self._thread.start()
        self._calls.append(call)
        # Only the event loop's thread releases: locked means the thread has taken every
        # signal so far, and will look at the calls again once released.
        if self._signal.locked():
            self._signal.release()

    def _serve(self) -> None:
        calls, wait = self._calls, self._signal.acquire
        while True:
            wait()
            while calls:
                call = calls.popleft()
                if call is None:
                    return
                func, future, loop = call
                try:
                    result = func()
                except BaseException as exc:
                    loop.call_soon_threadsafe(_fail, future, exc)
                else:
                    loop.call_soon_threadsafe(_succeed, future, result)

    def close(self) -> None:
        """End the thread after the calls already made (call from the event loop's thread)."""
        if self._thread is None:
            return
        self._submit(None)
        self._thread.join()
        self._thread = None


async def _until_done(future: asyncio.Future[Any]) -> None:
    while not future.done():
        try:
            await asyncio.shield(future)
        except asyncio.CancelledError:
            continue
        except BaseException:
            break
    if not future.cancelled():
        future.exception()  # retrieved: the caller is told of its cancellation instead


def _succeed(future: asyncio.Future[Any], result: Any) -> None:
    if not future.cancelled():
        future.set_result(result)


def _fail(future: asyncio.Future[Any], exc: BaseException) -> None:
    if not future.cancelled():
        future.set_exception(exc)
