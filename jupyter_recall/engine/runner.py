"""Executing runs: bounded concurrency, per-job lanes for the overlap policy, stop and shutdown.

Each run is a task with its own cancel scope (so it can be stopped alone). It waits for its
turn in its job's lane (runs of a job whose overlap policy is not ``allow`` execute one after
another), then for a slot of its target and a global slot, then calls the executor. Its end
goes to the writer, which persists it in a batch.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from datetime import datetime

import anyio
from anyio.abc import TaskGroup

from jupyter_recall.core.clock import Clock
from jupyter_recall.core.model import Job, Run, RunStatus
from jupyter_recall.core.policy import InFlight
from jupyter_recall.engine.events import RUN_OUTPUT, RUN_STARTED, EventBus
from jupyter_recall.engine.executors import Executor
from jupyter_recall.engine.firing import Ended
from jupyter_recall.engine.writer import RunWriter

NOTHING_IN_FLIGHT = InFlight()


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


def run_with(
    run: Run,
    *,
    status: RunStatus,
    started_at: datetime | None,
    finished_at: datetime | None = None,
    error: str | None = None,
) -> Run:
    """A copy of ``run`` with a new state; the constructor is ten times cheaper than
    ``dataclasses.replace``, and this is done twice per run."""
    return Run(
        run.id,
        run.job_id,
        run.owner,
        run.scheduled_for,
        run.trigger,
        status,
        run.created_at,
        started_at,
        finished_at,
        run.output,
        error,
        run.engine_id,
    )


async def _acquire(limiter: anyio.CapacityLimiter) -> None:
    """Take a token; without a wait when one is free (``async with limiter`` always yields to
    the event loop twice, which at thousands of runs per second is most of a run's cost)."""
    try:
        limiter.acquire_nowait()
    except anyio.WouldBlock:
        await limiter.acquire()


@dataclass(slots=True)
class _Lane:
    """The scheduled runs of one job held by this engine.

    Serial runs take turns: the first one goes, the others wait on a ticket in ``queue``; the
    run that ends hands the turn to the next ticket. An event is only made for a run that
    actually has to wait.
    """

    running: int = 0
    busy: bool = False
    queue: deque[anyio.Event] = field(default_factory=deque)

    @property
    def waiting(self) -> int:
        return len(self.queue)

    def pass_turn(self) -> None:
        if self.queue:
            self.queue.popleft().set()
        else:
            self.busy = False


@dataclass(slots=True)
class _Flight:
    """One run held by this engine: how to stop it, and its place in its job's lane."""

    job_id: str
    lane: _Lane | None = None
    serial: bool = False
    ticket: anyio.Event | None = None
    """Set when the run must wait for its turn in the lane."""
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

    def in_flight(self, job_id: str) -> InFlight:
        """The job's scheduled runs held here, for the overlap policy. Called by the firing
        pass in the store thread: one dict lookup, atomic under the GIL; a value a moment
        stale only makes the decision conservative."""
        lane = self._lanes.get(job_id)
        return NOTHING_IN_FLIGHT if lane is None else InFlight(lane.running, lane.waiting)

    def held(self, job_id: str) -> int:
        """Runs of the job in flight here, manual ones included."""
        return self._per_job.get(job_id, 0)

    # --- starting and stopping ------------------------------------------------------------------

    def start(self, job: Job, run: Run, *, lane: bool, serial: bool) -> None:
        """Execute ``run`` in a new task. ``lane``: it counts for the job's overlap policy
        (scheduled runs do, manual ones do not); ``serial``: it takes turns with the job's
        other serial runs."""
        if self._tasks is None:
            raise RuntimeError("the runner is not bound to a task group (scheduler not started)")
        job_lane: _Lane | None = None
        ticket: anyio.Event | None = None
        if lane:
            job_lane = self._lanes.get(job.id)
            if job_lane is None:
                job_lane = self._lanes[job.id] = _Lane()
            job_lane.running += 1
            if serial and job_lane.busy:
                ticket = anyio.Event()
                job_lane.queue.append(ticket)
            elif serial:
                job_lane.busy = True
        flight = _Flight(job.id, job_lane, serial, ticket)
        self._flights[run.id] = flight
        self._per_job[job.id] = self._per_job.get(job.id, 0) + 1
        if self._idle.is_set():
            self._idle = anyio.Event()
        self._tasks.start_soon(self._execute, job, run, flight)

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

    async def _execute(self, job: Job, run: Run, flight: _Flight) -> None:
        lane, ticket = flight.lane, flight.ticket
        status: RunStatus = RunStatus.CANCELLED
        error: str | None = "cancelled before it started"
        has_turn = flight.serial and ticket is None
        try:
            with flight.scope:
                if ticket is not None and lane is not None:
                    await self._wait_turn(lane, ticket)
                    has_turn = True
                target = self._target(job)
                await _acquire(target)
                try:
                    await _acquire(self._global)
                    try:
                        run = run_with(run, status=RunStatus.RUNNING, started_at=self._clock.now())
                        self._bus.run(RUN_STARTED, run, job=job)
                        self._writer.started(run)
                        status, error = await self._call(job, run)
                    finally:
                        self._global.release()
                finally:
                    target.release()
        finally:
            if has_turn and lane is not None:
                lane.pass_turn()
            others = self._release(job.id, run.id, lane)
        if flight.reason is not None:
            status, error = flight.reason.status, flight.reason.error
        final = run_with(
            run,
            status=status,
            started_at=run.started_at,
            finished_at=self._clock.now(),
            error=error,
        )
        self._writer.ended(Ended(final, others, job))

    @staticmethod
    async def _wait_turn(lane: _Lane, ticket: anyio.Event) -> None:
        try:
            await ticket.wait()
        except BaseException:
            if ticket.is_set():
                # The turn was handed over just as this run was stopped: pass it on.
                lane.pass_turn()
            else:
                lane.queue.remove(ticket)
            raise

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

    def _release(self, job_id: str, run_id: str, lane: _Lane | None) -> int:
        """Bookkeeping at the end of a run; returns how many runs of the job (manual ones
        included) remain in flight."""
        self._flights.pop(run_id, None)
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
