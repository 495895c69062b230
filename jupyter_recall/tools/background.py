"""Background tool calls: start now, come back for the result later.

A task runs on a ``LoopThread`` (so it goes on while the kernel is idle), is cancellable, and
calls ``on_finished`` callbacks once it has its outcome (the kernel turns that into a
notification and updates the cell that started it). ``wait`` is bounded (default 60 s, at most
an hour) and a timeout is an answer (``timed_out: true``), not an error.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import threading
import time
import uuid
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, TypedDict, overload

from jupyter_recall.core.errors import NotFoundError, ValidationError
from jupyter_recall.tools.loop import LoopThread
from jupyter_recall.tools.registry import ToolResult, failed

RUNNING = "running"
SUCCEEDED = "succeeded"
FAILED = "failed"
CANCELLED = "cancelled"
STATUSES = (RUNNING, SUCCEEDED, FAILED, CANCELLED)
HEADINGS = {SUCCEEDED: "COMPLETED", FAILED: "FAILED", CANCELLED: "CANCELLED"}
DEFAULT_WAIT = 60.0
MAX_WAIT = 3600.0
NOTIFICATION_CLIP = 2000
ELAPSED_DIGITS = 2
"""Decimals of a task's reported elapsed seconds."""
"""Characters of a result shown in a notification; the rest is a pointer to the full result."""
CANCEL_WAIT = 5.0
"""Seconds ``cancel`` waits for the task to have stopped (a killed process reaped)."""
MAX_FINISHED = 1000
"""Finished tasks kept for ``background_result``; the oldest are forgotten beyond this."""

ToolCall = Callable[[str, dict[str, Any]], Coroutine[Any, Any, ToolResult]]
FinishedCallback = Callable[["BackgroundTask"], Any]


def _iso(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return datetime.fromtimestamp(epoch, timezone.utc).isoformat().replace("+00:00", "Z")


class TaskSummary(TypedDict):
    """A background task as listed: the call, its status and its times (ISO, UTC)."""

    task_id: str
    tool: str
    params: dict[str, Any]
    status: str
    started_at: str | None
    finished_at: str | None
    elapsed: float


class TaskWithResult(TaskSummary):
    result: ToolResult | None


class TaskWaited(TaskWithResult):
    """The answer of ``wait`` for one task: ``timed_out`` if it was still running then."""

    timed_out: bool


class TasksWaited(TypedDict):
    """The answer of ``wait`` for every running task."""

    tasks: list[TaskSummary]
    timed_out: bool


@dataclass(eq=False)
class BackgroundTask:
    task_id: str
    name: str
    params: dict[str, Any]
    started_at: float = field(default_factory=time.time)
    status: str = RUNNING
    result: ToolResult | None = None
    finished_at: float | None = None
    _started: float = field(default_factory=time.monotonic, repr=False)
    _ended: float | None = field(default=None, repr=False)
    _done: threading.Event = field(default_factory=threading.Event, repr=False)
    _running: bool = field(default=False, repr=False)
    _future: concurrent.futures.Future[None] | None = field(default=None, repr=False)

    @property
    def done(self) -> bool:
        return self._done.is_set()

    @property
    def elapsed(self) -> float:
        end = self._ended if self._ended is not None else time.monotonic()
        return end - self._started

    @property
    def elapsed_shown(self) -> float:
        """Seconds, rounded once to what is shown: every field and text that reports a task's
        time uses this value (rounding the text and a field apart made them disagree)."""
        return round(self.elapsed, ELAPSED_DIGITS)

    def summary(self) -> TaskSummary:
        return {
            "task_id": self.task_id,
            "tool": self.name,
            "params": self.params,
            "status": self.status,
            "started_at": _iso(self.started_at),
            "finished_at": _iso(self.finished_at),
            "elapsed": self.elapsed_shown,
        }

    def with_result(self) -> TaskWithResult:
        return {**self.summary(), "result": self.result}


def notification_text(
    task: BackgroundTask, clip: int = NOTIFICATION_CLIP, *, elapsed: float | None = None
) -> str:
    """``[BACKGROUND TASK COMPLETED] task_id=..., tool=..., elapsed=...s`` and the result, cut
    to ``clip`` characters with a pointer to the full result. ``elapsed`` is the value the
    caller reports beside the text (default: the task's ``elapsed_shown``)."""
    heading = HEADINGS.get(task.status, task.status.upper())
    elapsed = task.elapsed_shown if elapsed is None else elapsed
    head = (
        f"[BACKGROUND TASK {heading}] task_id={task.task_id}, tool={task.name}, "
        f"elapsed={elapsed:.{ELAPSED_DIGITS}f}s"
    )
    body = json.dumps(task.result, ensure_ascii=False, default=repr)
    if len(body) > clip:
        body = (
            f"{body[:clip]}\n[truncated: {clip} of {len(body)} characters shown; full result: "
            f"background_result('{task.task_id}')]"
        )
    return f"{head}\n{body}"


def check_wait_timeout(timeout: object) -> float:
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise ValidationError("timeout", f"must be a number of seconds, got {timeout!r}")
    if not 0 <= timeout <= MAX_WAIT:
        raise ValidationError("timeout", f"must be in [0, {MAX_WAIT:g}] seconds, got {timeout!r}")
    return float(timeout)


class BackgroundTasks:
    """The background tasks of one process (thread-safe)."""

    def __init__(self, loop: LoopThread, call: ToolCall) -> None:
        self._loop = loop
        self._call = call
        self._lock = threading.Lock()
        self._tasks: dict[str, BackgroundTask] = {}
        self.on_finished: list[FinishedCallback] = []

    def start(
        self,
        name: str,
        params: Mapping[str, Any] | None = None,
        *,
        before: Callable[[BackgroundTask], Any] | None = None,
    ) -> BackgroundTask:
        """Start a task; ``before(task)`` runs first (so that what it sets up, e.g. where the
        end is shown, exists when even a very quick task ends)."""
        task = BackgroundTask(f"bg-{uuid.uuid4().hex[:10]}", name, dict(params or {}))
        with self._lock:
            self._tasks[task.task_id] = task
            self._forget_oldest()
        if before is not None:
            before(task)
        future = self._loop.submit(self._run(task))
        task._future = future
        future.add_done_callback(lambda _: self._finish_unstarted(task))
        return task

    def _forget_oldest(self) -> None:
        finished = [task for task in self._tasks.values() if task.done]
        for task in finished[: max(0, len(finished) - MAX_FINISHED)]:
            del self._tasks[task.task_id]

    def _finish_unstarted(self, task: BackgroundTask) -> None:
        # A task cancelled before its coroutine started never reaches _run's handlers; one that
        # started is finished by _run, once its cancellation has been handled (process killed).
        if not task._running:
            self._finish(task, CANCELLED, failed(f"background task {task.task_id} was cancelled"))

    async def _run(self, task: BackgroundTask) -> None:
        task._running = True
        try:
            result = await self._call(task.name, task.params)
        except asyncio.CancelledError:
            self._finish(task, CANCELLED, failed(f"background task {task.task_id} was cancelled"))
            raise
        except Exception as error:  # run_tool never raises; this guards the guard
            result = failed(f"{task.name}: {type(error).__name__}: {error}")
        self._finish(task, SUCCEEDED if result.get("success") else FAILED, result)

    def _finish(self, task: BackgroundTask, status: str, result: ToolResult) -> None:
        with self._lock:
            if task.done:
                return
            task.status, task.result = status, result
            task.finished_at, task._ended = time.time(), time.monotonic()
            task._done.set()
            callbacks = list(self.on_finished)
        for callback in callbacks:
            with contextlib.suppress(Exception):
                callback(task)

    def get(self, task_id: object) -> BackgroundTask:
        with self._lock:
            task = self._tasks.get(task_id) if isinstance(task_id, str) else None
        if task is None:
            raise NotFoundError("background task", str(task_id))
        return task

    def cancel(self, task_id: str) -> BackgroundTask:
        """Cancel a running task (a finished one is left as it is)."""
        task = self.get(task_id)
        if not task.done and task._future is not None:
            task._future.cancel()
            if not self._loop.in_loop_thread():
                task._done.wait(CANCEL_WAIT)
        return task

    def list(self, status: str | None = None) -> list[BackgroundTask]:
        if status is not None and status not in STATUSES:
            raise ValidationError("status", f"unknown status {status!r}", accepted=STATUSES)
        with self._lock:
            tasks = list(self._tasks.values())
        return [task for task in tasks if status is None or task.status == status]

    @overload
    def wait(self, task_id: str, timeout: float = DEFAULT_WAIT) -> TaskWaited: ...

    @overload
    def wait(self, task_id: None = None, timeout: float = DEFAULT_WAIT) -> TasksWaited: ...

    def wait(
        self, task_id: str | None = None, timeout: float = DEFAULT_WAIT
    ) -> TaskWaited | TasksWaited:
        """Block until the task (or, without an id, every running task) is done or ``timeout``
        seconds pass. The answer says which: ``timed_out``."""
        seconds = check_wait_timeout(timeout)
        if self._loop.in_loop_thread():
            raise RuntimeError("background_wait would block the loop its tasks run on")
        if task_id is not None:
            task = self.get(task_id)
            done = task._done.wait(seconds)
            return {**task.with_result(), "timed_out": not done}
        deadline = time.monotonic() + seconds
        tasks = self.list(RUNNING)
        for task in tasks:
            task._done.wait(max(0.0, deadline - time.monotonic()))
        return {
            "tasks": [task.summary() for task in tasks],
            "timed_out": not all(task.done for task in tasks),
        }

    def cancel_all(self) -> None:
        for task in self.list(RUNNING):
            if task._future is not None:
                task._future.cancel()
