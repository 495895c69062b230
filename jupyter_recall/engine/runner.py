"""Executing runs: bounded concurrency, per-job lanes for the overlap policy, stop and shutdown.

Each run is a task with its own cancel scope (so it can be stopped alone). It waits for its
turn in its job's lane (runs of a job whose overlap policy is not ``allow`` execute one after
another), then for a slot of its target and a global slot, then calls the executor. Its end
goes to the writer, which persists it in a batch.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import anyio
from anyio.abc import TaskGroup

from jupyter_recall.core.clock import Clock
from jupyter_recall.core.model import Job, Run, RunStatus
from jupyter_recall.core.policy import InFlight
from jupyter_recall.engine.events import RUN_OUTPUT, RUN_STARTED, EventBus
from jupyter_recall.engine.executors import Executor
from jupyter_recall.engine.firing import Ended
from jupyter_recall.engine.writer import RunWriter


@dataclass(frozen=True, slots=True)
class StopReason:
    status: RunStatus
    error: str


STOPPED = StopReason(RunStatus.CANCELLED, "cancelled: stopped on request")
SHUTDOWN = StopReason(
    RunStatus.INTERRUPTED, "interrupted: the engine shut down while the run was in flight"
)
DELETED = StopReason(RunStatus.CANCELLED, "cancelled: its job was deleted")


class RunOutput:
    """The OutputSink of one run: each chunk is an event at once and persisted in batches."""

    def __init__(self, run: Run, bus: EventBus, writer: RunWriter) -> None:
        self._run = run
        self._bus = bus
        self._writer = writer

    def write(self, text: str) -> None:
        if not text:
            return
        self._bus.run(RUN_OUTPUT, self._run, text=text)
        self._writer.output(self._run.id, text)


@dataclass(slots=True)
class _Lane:
    """The runs of one job held by this engine."""

    running: int = 0
    waiting: int = 0
    tail: anyio.Event | None = None
    """Set when the last run queued in this lane ends; the next one waits for it."""


@dataclass(slots=True)
class _Flight:
    job_id: str
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    reason: StopReason | None = None


class Runner:
    def __init__(
        self,
        executor: Executor,
        clock: Clock,
        bus: EventBus,
        writer: RunWriter,
        *,
        max_concurrent_runs: int,
        per_target_limit: int,
    ) -> None:
        self._executor = executor
        self._clock = clock
        self._bus = bus
        self._writer = writer
        self._global = anyio.CapacityLimiter(max_concurrent_runs)
        self._per_target_limit = per_target_limit
        self._targets: dict[str, anyio.CapacityLimiter] = {}
        self._lanes: dict[str, _Lane] = {}
        self._flights: dict[str, _Flight] = {}
        self._per_job: dict[str, int] = {}
        self._idle = anyio.Event()
        self._idle.set()
        self._tasks: TaskGroup | None = None

    def bind(self, tasks: TaskGroup) -> None:
        self._tasks = tasks

    # --- state read by the firing pass -----------------------------------------------------

    def in_flight(self) -> dict[str, InFlight]:
        """A snapshot per job (taken before a firing pass, which runs in the store thread)."""
        return {
            job_id: InFlight(lane.running, lane.waiting) for job_id, lane in self._lanes.items()
        }

    def held(self, job_id: str) -> int:
        """Runs of the job in flight here, manual ones included."""
        return self._per_job.get(job_id, 0)

    def holds(self, run_id: str) -> bool:
        return run_id in self._flights

    # --- starting and stopping ------------------------------------------------------------------

    def start(self, job: Job, run: Run, *, lane: bool, serial: bool) -> None:
        """Execute ``run`` in a new task. ``lane``: it counts for the job's overlap policy
        (scheduled runs do, manual ones do not); ``serial``: it waits for the job's previous
        run in the lane."""
        if self._tasks is None:
            raise RuntimeError("the runner is not bound to a task group (scheduler not started)")
        job_lane = self._lanes.setdefault(job.id, _Lane()) if lane else None
        previous: anyio.Event | None = None
        mine: anyio.Event | None = None
        if job_lane is not None:
            job_lane.running += 1
            if serial:
                previous, mine = job_lane.tail, anyio.Event()
                job_lane.tail = mine
                if previous is not None and not previous.is_set():
                    job_lane.waiting += 1
                else:
                    previous = None
        flight = _Flight(job.id)
        self._flights[run.id] = flight
        self._per_job[job.id] = self._per_job.get(job.id, 0) + 1
        self._idle = anyio.Event()
        self._tasks.start_soon(self._execute, job, run, flight, job_lane, (previous, mine))

    def stop(self, run_id: str, reason: StopReason) -> bool:
        flight = self._flights.get(run_id)
        if flight is None:
            return False
        flight.reason = flight.reason or reason
        flight.scope.cancel()
        return True

    def stop_job(self, job_id: str, reason: StopReason) -> None:
        for run_id, flight in list(self._flights.items()):
            if flight.job_id == job_id:
                self.stop(run_id, reason)

    def stop_all(self, reason: StopReason) -> None:
        for run_id in list(self._flights):
            self.stop(run_id, reason)

    async def wait_idle(self) -> None:
        await self._idle.wait()

    # --- one run --------------------------------------------------------------------------------

    async def _execute(
        self,
        job: Job,
        run: Run,
        flight: _Flight,
        lane: _Lane | None,
        turn: tuple[anyio.Event | None, anyio.Event | None],
    ) -> None:
        previous, mine = turn
        status: RunStatus = RunStatus.CANCELLED
        error: str | None = "cancelled before it started"
        try:
            with flight.scope:
                if previous is not None:
                    try:
                        await previous.wait()
                    finally:
                        assert lane is not None
                        lane.waiting -= 1
                async with self._target(job), self._global:
                    run = run.evolve(started_at=self._clock.now())
                    self._bus.run(RUN_STARTED, run, job=job)
                    self._writer.started(run)
                    status, error = await self._call(job, run)
        finally:
            others = self._release(job.id, run.id, lane, mine)
        if flight.reason is not None:
            status, error = flight.reason.status, flight.reason.error
        final = run.evolve(status=status, error=error, finished_at=self._clock.now())
        self._writer.ended(Ended(final, others))

    async def _call(self, job: Job, run: Run) -> tuple[RunStatus, str | None]:
        try:
            outcome = await self._executor.execute(
                job, run, RunOutput(run, self._bus, self._writer)
            )
        except Exception as exc:
            return RunStatus.FAILED, f"{type(exc).__name__}: {exc}"
        if outcome.skipped_reason is not None:
            return RunStatus.SKIPPED, outcome.skipped_reason
        if outcome.error is not None:
            return RunStatus.FAILED, outcome.error
        return RunStatus.SUCCEEDED, None

    def _target(self, job: Job) -> anyio.CapacityLimiter:
        key = self._executor.concurrency_key(job)
        limiter = self._targets.get(key)
        if limiter is None:
            limiter = self._targets[key] = anyio.CapacityLimiter(self._per_target_limit)
        return limiter

    def _release(
        self, job_id: str, run_id: str, lane: _Lane | None, mine: anyio.Event | None
    ) -> int:
        """Bookkeeping at the end of a run; returns how many runs of the job (manual ones
        included) remain in flight."""
        self._flights.pop(run_id, None)
        if mine is not None:
            mine.set()
        if lane is not None:
            lane.running -= 1
            if lane.running == 0 and self._lanes.get(job_id) is lane:
                del self._lanes[job_id]
        remaining = self._per_job.get(job_id, 1) - 1
        if remaining:
            self._per_job[job_id] = remaining
        else:
            self._per_job.pop(job_id, None)
        if not self._flights:
            self._idle.set()
        return remaining
