"""Test support for the engine: a scripted executor function, job shorthands, waiting helpers.

The executor is a real ``CallableExecutor`` running an async function; what the function does
is chosen by the job's message (``ok``, ``fail``, ``block``, ``print``), so each test reads as
the behaviour it needs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import anyio

from jupyter_recall.core.clock import Clock
from jupyter_recall.core.model import Job, Policies, Run, RunStatus
from jupyter_recall.core.records import NotificationAction
from jupyter_recall.engine.executors import CallableExecutor, OutputSink, RunOutcome
from jupyter_recall.engine.scheduler import Event, NewJob, Scheduler
from jupyter_recall.store.base import RunFilter
from jupyter_recall.store.sqlite import SQLiteStore

UTC = timezone.utc
T0 = datetime(2030, 1, 1, tzinfo=UTC)
OWNER = "alice"


@dataclass
class Call:
    job_id: str
    run: Run


@dataclass
class Script:
    """The behaviour of runs, per job message; records every call."""

    calls: list[Call] = field(default_factory=list)
    blocked: list[tuple[Run, anyio.Event]] = field(default_factory=list)
    active: int = 0
    most_active: int = 0

    async def __call__(self, job: Job, run: Run, output: OutputSink) -> RunOutcome | None:
        self.calls.append(Call(job.id, run))
        self.active += 1
        self.most_active = max(self.most_active, self.active)
        try:
            return await self._behave(job.action.headline, run, output)
        finally:
            self.active -= 1

    async def _behave(self, message: str, run: Run, output: OutputSink) -> RunOutcome | None:
        if message == "fail":
            raise RuntimeError("boom")
        if message == "error":
            return RunOutcome(error="reported failure")
        if message.startswith("print"):
            for line in message.split()[1:]:
                output.write(line + "\n")
        if message == "block":
            gate = anyio.Event()
            self.blocked.append((run, gate))
            await gate.wait()
        return None

    def release(self, index: int = 0) -> Run:
        run, gate = self.blocked.pop(index)
        gate.set()
        return run

    def executed(self, job_id: str) -> list[Run]:
        return [call.run for call in self.calls if call.job_id == job_id]


def new(when: str, message: str = "ok", **policies: Any) -> NewJob:
    return NewJob(
        when=when,
        action=NotificationAction(message),
        policies=Policies(**policies),
    )


async def eventually(
    check: Callable[[], Awaitable[bool]] | Callable[[], bool], *, timeout: float = 5.0
) -> None:
    """Poll ``check`` (the engine works in real threads, even on a manual clock)."""
    with anyio.fail_after(timeout):
        while True:
            result = check()
            if not isinstance(result, bool):
                result = await result
            if result:
                return
            await anyio.sleep(0.005)


async def runs_of(scheduler: Scheduler, job_id: str) -> list[Run]:
    """The job's runs, oldest occurrence first."""
    runs = await scheduler.list_runs(owner=OWNER, where=RunFilter(job_id=job_id))
    return sorted(runs, key=lambda run: (run.scheduled_for, run.created_at))


async def wait_runs(
    scheduler: Scheduler, job_id: str, count: int, *, final: bool = True
) -> list[Run]:
    """Wait until the job has ``count`` runs (all final unless ``final`` is False)."""
    found: list[Run] = []

    async def enough() -> bool:
        nonlocal found
        found = await runs_of(scheduler, job_id)
        return len(found) >= count and (not final or all(r.status.is_final for r in found))

    await eventually(enough)
    return found


def shape(runs: list[Run]) -> list[tuple[str, str]]:
    return [(run.status.value, run.trigger.value) for run in runs]


@asynccontextmanager
async def running(
    path: Path,
    script: Script,
    clock: Clock,
    **options: Any,
) -> AsyncIterator[Scheduler]:
    store = SQLiteStore(path)
    try:
        async with Scheduler(store, CallableExecutor(script), clock=clock, **options) as engine:
            yield engine
    finally:
        store.close()


@dataclass
class Events:
    """Collects events for assertions."""

    seen: list[Event] = field(default_factory=list)

    def __call__(self, event: Event) -> None:
        self.seen.append(event)

    def types(self, run_or_job_id: str | None = None) -> list[str]:
        return [
            event.type
            for event in self.seen
            if run_or_job_id is None
            or (event.run is not None and event.run.id == run_or_job_id)
            or (event.job is not None and event.job.id == run_or_job_id and event.run is None)
        ]


FINAL = tuple(status for status in RunStatus if status.is_final)
