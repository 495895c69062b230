"""The executor protocol: how the engine hands a run to whatever executes it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
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
