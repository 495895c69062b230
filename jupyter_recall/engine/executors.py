"""The executor protocol: how the engine hands a run to whatever executes it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from jupyter_recall.core.model import Job, Run


class OutputSink(Protocol):
    """Where an executor writes a run's output as it is produced (bounded by the engine)."""

    def write(self, text: str) -> None: ...


class CollectingSink:
    """An OutputSink that keeps what is written, for executions whose output is read back."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, text: str) -> None:
        self.parts.append(text)

    @property
    def text(self) -> str:
        return "".join(self.parts)


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """What an executor reports. ``error`` set means the run failed."""

    error: str | None = None
    skipped_reason: str | None = None
    """Set when the executor decided not to run it (e.g. exclusive job, kernel busy too long)."""
    started_at: datetime | None = None
    """When the work itself began, when the executor first waited (an exclusive run waits for
    an idle kernel): the run's ``started_at`` then."""
    handed_off: bool = False
    """Another engine took the run over (``engine/handoff.py``) and records its end: this engine
    writes nothing more of it."""


class Executor(Protocol):
    def concurrency_key(self, job: Job) -> str:
        """Runs sharing a key share the per-target concurrency limit (e.g. one kernel)."""
        ...

    async def execute(self, job: Job, run: Run, output: OutputSink) -> RunOutcome:
        """Execute one run. Raising is the same as returning an outcome with the error text.
        Cancellation (stop, shutdown) arrives as the usual anyio cancellation."""
        ...


class NoopExecutor:
    """Does nothing, successfully. Used by benchmarks and tests of the firing model."""

    def concurrency_key(self, job: Job) -> str:
        return "noop"

    async def execute(self, job: Job, run: Run, output: OutputSink) -> RunOutcome:
        return RunOutcome()


class RunLimits(Protocol):
    """What a run executing holds of the engine's limits: a worker and its target's slot."""

    def leave(self) -> bool:
        """Give both up; False when they are not held (already left)."""
        ...

    async def come_back(self) -> None:
        """Take both again, waiting for them as a new run would (before the runs waiting)."""
        ...


CURRENT_LIMITS: ContextVar[RunLimits | None] = ContextVar("recall_run_limits", default=None)
"""Set by the engine while an executor executes a run (``engine/runner.py``)."""


@asynccontextmanager
async def outside_limits() -> AsyncIterator[None]:
    """Within this, the run being executed holds neither a worker nor its target's slot.

    For a wait that is not work, such as a person's decision: other runs of the same target
    execute meanwhile. On the way out the run waits for its slot and a worker again, so the
    work that follows is bounded as before. Outside an engine's run it does nothing.
    """
    limits = CURRENT_LIMITS.get()
    if limits is None or not limits.leave():
        yield
        return
    try:
        yield
    finally:
        await limits.come_back()


RunCallable = Callable[[Job, Run, OutputSink], Awaitable[RunOutcome | None]]


class CallableExecutor:
    """Runs an async function per run; ``None`` as the result means success."""

    def __init__(self, func: RunCallable, *, key: str = "callable") -> None:
        self._func = func
        self._key = key

    def concurrency_key(self, job: Job) -> str:
        return self._key

    async def execute(self, job: Job, run: Run, output: OutputSink) -> RunOutcome:
        outcome = await self._func(job, run, output)
        return outcome if outcome is not None else RunOutcome()
