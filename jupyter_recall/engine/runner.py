"""Executing runs: bounded concurrency, per-job lanes for the overlap policy, stop and shutdown.

``max_concurrent_runs`` worker tasks take runs from a ready queue, so starting a run spawns no
task (at thousands of runs per second, spawning one task per run costs more than the rest of
the run's handling). A run becomes ready when it has

1. its turn in its job's *lane*: the runs of a job whose overlap policy is not ``allow`` execute
   one after another, in the order they fired;
2. a slot of its *target* (``executor.concurrency_key(job)``): at most ``per_target_limit``
   runs of one target execute at once. A run waiting for either holds no worker.

An executing run may step outside both limits while it waits for something that is not work
(``executors.outside_limits``: a server-side tool waiting for a person's approval): it gives
up its target's slot, a new worker takes its place, and on its way back it waits for a slot
and a worker again, ahead of the runs not started yet.

A run fired ahead of its due instant (``firing.fire_due``) first waits for that instant in a
heap, counted in its job's lane already; a change to its job withdraws it (``withdraw_ahead``)
so that the scheduler can undo it. A scheduled run past its instant but not executing yet (in
its lane, waiting for a slot or a worker) of a job paused, cancelled or edited meanwhile is
recorded ``skipped`` instead (``withdraw_waiting``); the lane's turn is held while such a change
is on its way (``turn_held``) and while a failure that may pause the job is being written, so
that the next run does not start first. Each executing run has its own cancel scope, so it can
be stopped alone; a run that waits is simply taken out of its queue. Its end goes to the
writer, which persists it in a batch.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections import deque
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import Enum

import anyio
import anyio.abc

from jupyter_recall.core.clock import Clock
from jupyter_recall.core.model import Job, JobStatus, Run, RunStatus
from jupyter_recall.core.policy import InFlight, counts_as_failure
from jupyter_recall.engine.events import (
    JOB_UPDATED,
    RUN_FINISHED,
    RUN_OUTPUT,
    RUN_STARTED,
    EventBus,
)
from jupyter_recall.engine.executors import CURRENT_LIMITS, Executor
from jupyter_recall.engine.failures import watches_failures
from jupyter_recall.engine.firing import Claim, Ended
from jupyter_recall.engine.retrying import with_retry
from jupyter_recall.engine.writer import RunWriter

NOTHING_IN_FLIGHT = InFlight()

AHEAD_MAX_SLEEP = 30.0
"""Seconds at most between looks at the clock while runs wait for their instant (a jump of
the wall clock is noticed within this)."""

RELEASE_QUANTUM = timedelta(milliseconds=1)
"""Shortest time between two releases of runs fired ahead."""

YIELD_EVERY = 8
"""Runs a worker executes back to back before letting the event loop run other tasks (an
executor that returns without awaiting anything would otherwise hold the loop)."""


@dataclass(frozen=True, slots=True)
class StopReason:
    status: RunStatus
    error: str


STOPPED = StopReason(RunStatus.CANCELLED, "cancelled: stopped on request")
SHUTDOWN = StopReason(
    RunStatus.INTERRUPTED, "interrupted: the engine shut down while the run was in flight"
)
DELETED = StopReason(RunStatus.CANCELLED, "cancelled: its job was deleted")


def not_to_execute(job: Job, *, redefined: bool) -> StopReason | None:
    """Why a scheduled run of ``job`` fired before a change and not executing yet must not
    execute after it (None: it executes as fired). A paused or ended job fires nothing; an
    edit of what its runs do or of its schedule makes the run one of a definition gone."""
    if job.status is not JobStatus.ACTIVE:
        change = job.status.value
    elif redefined:
        change = "edited"
    else:
        return None
    return StopReason(
        RunStatus.SKIPPED, f"skipped: its job was {change} while the run waited for its turn"
    )


def timed_out(limit: float) -> StopReason:
    return StopReason(
        RunStatus.TIMED_OUT, f"timed_out: still running after its limit of {limit:g} s"
    )


class RunOutput:
    """The OutputSink of one run: each chunk is an event at once and persisted in batches."""

    def __init__(self, run: Run, bus: EventBus, writer: RunWriter) -> None:
        self._run = run
        self._bus = bus
        self._writer = writer
        self._written = 0

    def write(self, text: str) -> None:
        if not text:
            return
        self._bus.run(RUN_OUTPUT, self._run, text=text, offset=self._written)
        self._written += len(text)
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
        run.attempt,
    )


class _Where(Enum):
    AHEAD = "fired ahead, waiting for its instant"
    WITHDRAWN = "withdrawn before its instant (to be undone)"
    LANE = "waiting for its turn in its job's lane"
    TARGET = "waiting for a slot of its target"
    READY = "waiting for a worker"
    EXECUTING = "executing"
    OUTSIDE = "executing, outside the limits (waiting for a person)"
    BACK_SLOT = "coming back inside the limits: waiting for a slot of its target"
    BACK_WORKER = "coming back inside the limits: waiting for a worker"


_WAITING = frozenset((_Where.LANE, _Where.TARGET, _Where.READY))
"""Past its instant, not executing yet."""


@dataclass(slots=True)
class _Lane:
    """The scheduled runs of one job held by this engine."""

    running: int = 0
    """Held: executing or waiting, whatever for."""
    busy: bool = False
    """A serial run has the turn."""
    queue: deque[_Item] = field(default_factory=deque)
    """Serial runs waiting for the turn, in firing order."""
    holds: int = 0
    """Reasons to keep the turn from the queue for now (``Runner.turn_held``)."""
    turn_free: bool = False
    """The turn was given back while held: it goes to the queue once the holds are gone."""


@dataclass(slots=True, eq=False)
class _Item:
    """One run held by this engine, and where it stands."""

    job: Job
    run: Run
    key: str
    lane: _Lane | None
    serial: bool
    where: _Where = _Where.LANE
    has_turn: bool = False
    has_slot: bool = False
    scope: anyio.CancelScope | None = None
    reason: StopReason | None = None
    claim: Claim | None = None
    handed_off: bool = False
    """Another engine took it over: its end is that engine's to write."""
    back: anyio.Event | None = None
    """Set when it may come back inside the limits (a slot, then a worker, is its)."""
    time_left: float = math.inf
    """Seconds of its time limit left when it stepped outside the limits (the clock of the
    limit stops there: a person's decision is not the run's work)."""


class _Limits:
    """``executors.RunLimits`` of one executing run."""

    __slots__ = ("_item", "_runner")

    def __init__(self, runner: Runner, item: _Item) -> None:
        self._runner = runner
        self._item = item

    def leave(self) -> bool:
        return self._runner.leave_limits(self._item)

    async def come_back(self) -> None:
        await self._runner.come_back(self._item)


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
        default_timeout: float | None = None,
    ) -> None:
        if max_concurrent_runs < 1:
            raise ValueError(f"max_concurrent_runs must be >= 1, got {max_concurrent_runs}")
        if per_target_limit < 1:
            raise ValueError(f"per_target_limit must be >= 1, got {per_target_limit}")
        self._executor = executor
        self._clock = clock
        self._bus = bus
        self._writer = writer
        self._workers = max_concurrent_runs
        self._per_target_limit = per_target_limit
        self._default_timeout = default_timeout
        """Time limit of the runs whose job sets none (``Policies.timeout``)."""
        self._items: dict[str, _Item] = {}
        self._lanes: dict[str, _Lane] = {}
        self._per_job: dict[str, int] = {}
        self._ready: deque[_Item] = deque()
        self._idle_workers: deque[anyio.Event] = deque()
        """One event per worker waiting for a ready run: a run wakes one worker, not all."""
        self._waking = False
        """A worker was woken and has not taken a run yet: the next wake-up waits for it."""
        self._target_running: dict[str, int] = {}
        self._target_waiting: dict[str, deque[_Item]] = {}
        self._idle = anyio.Event()
        self._idle.set()
        self._scope: anyio.CancelScope | None = None
        self._ahead: list[tuple[datetime, int, _Item]] = []
        """Runs fired ahead, by instant (a heap; withdrawn ones stay until popped)."""
        self._ahead_order = itertools.count()
        self._ahead_changed = anyio.Event()
        self._group: anyio.abc.TaskGroup | None = None
        self._returning: deque[_Item] = deque()
        """Runs coming back inside the limits, waiting for a worker to give them its place."""
        self._surplus = 0
        """Workers to retire: runs that left the limits and ended before coming back."""
        self._outcomes_held: dict[str, _Lane] = {}
        """Lanes held by run id until that run's end is written: a failure that may pause the
        job (``pause_after_failures``) must be counted before the next run takes the turn."""

    # --- the workers ------------------------------------------------------------------------

    async def run(self) -> None:
        """The workers; until ``close``."""
        self._scope = anyio.CancelScope()
        with self._scope:
            async with anyio.create_task_group() as workers:
                self._group = workers
                for _ in range(self._workers):
                    workers.start_soon(self._worker)
                workers.start_soon(self._release_ahead)

    def close(self) -> None:
        """Stop the workers (call after ``stop_all`` and ``wait_idle``)."""
        if self._scope is not None:
            self._scope.cancel()

    async def _worker(self) -> None:
        done = 0
        while True:
            while not self._ready and not self._returning:
                wake = anyio.Event()
                self._idle_workers.append(wake)
                await wake.wait()
                self._waking = False
            if self._returning:
                self._retire_for(self._returning.popleft())
                return
            item = self._ready.popleft()
            if self._ready:
                # Wake-ups are chained: runs released together then start one loop turn
                # apart, and a run that returns at once leaves the next to this worker
                # instead of waking another for nothing.
                self._wake_worker()
            item.where = _Where.EXECUTING
            await self._execute(item)
            if self._surplus:
                self._surplus -= 1
                return
            done += 1
            if done % YIELD_EVERY == 0:
                await anyio.lowlevel.checkpoint()

    async def _release_ahead(self) -> None:
        """Let runs fired ahead go at their instants; after a release, the next one comes at
        least ``RELEASE_QUANTUM`` later (a run starts at most that late, and a burst of runs at
        random instants costs a wake-up per quantum rather than one per run)."""
        released: datetime | None = None
        while True:
            self._ahead_changed = anyio.Event()
            now = self._clock.now()
            if self._release_due(now):
                released = now
            if not self._ahead:
                await self._ahead_changed.wait()
                continue
            wake_at = self._ahead[0][0]
            if released is not None:
                wake_at = max(wake_at, released + RELEASE_QUANTUM)
            # Until then, or until a run fired ahead comes before the first one.
            await self._clock.sleep_until(
                wake_at, max_sleep=AHEAD_MAX_SLEEP, wake=self._ahead_changed
            )

    def _release_due(self, now: datetime) -> bool:
        """Release the runs whose instant has come; whether there was any."""
        any_released = False
        while self._ahead and self._ahead[0][0] <= now:
            item = heapq.heappop(self._ahead)[2]
            if item.where is _Where.AHEAD:
                self._enter(item)
                any_released = True
        return any_released

    # --- state read by the firing pass and the API ---------------------------------------------

    def in_flight(self, job_id: str) -> InFlight:
        """The job's scheduled runs held here, for the overlap policy. Called by the firing
        pass in the store thread: one dict lookup, atomic under the GIL; a value a moment
        stale only makes the decision conservative."""
        lane = self._lanes.get(job_id)
        return NOTHING_IN_FLIGHT if lane is None else InFlight(lane.running, len(lane.queue))

    def held(self, job_id: str) -> int:
        """Runs of the job in flight here, manual ones included."""
        return self._per_job.get(job_id, 0)

    @property
    def releasing(self) -> bool:
        """Whether runs fired ahead wait for their instants: the event loop is about to
        release them (background work waits; ``engine/pruning.py``)."""
        return bool(self._ahead)

    # --- starting and stopping ------------------------------------------------------------------

    def start(
        self,
        job: Job,
        run: Run,
        *,
        lane: bool,
        serial: bool,
        start_at: datetime | None = None,
        claim: Claim | None = None,
    ) -> None:
        """Hold ``run`` until it executes. ``lane``: it counts for the job's overlap policy
        (scheduled runs do, manual ones do not); ``serial``: it takes turns with the job's
        other serial runs; ``start_at``/``claim``: it was fired ahead of that instant."""
        job_lane: _Lane | None = None
        if lane:
            job_lane = self._lanes.get(job.id)
            if job_lane is None:
                job_lane = self._lanes[job.id] = _Lane()
            job_lane.running += 1
        item = _Item(job, run, self._executor.concurrency_key(job), job_lane, serial)
        self._items[run.id] = item
        self._per_job[job.id] = self._per_job.get(job.id, 0) + 1
        if self._idle.is_set():
            self._idle = anyio.Event()
        if start_at is not None and start_at > self._clock.now():
            item.where, item.claim = _Where.AHEAD, claim
            heapq.heappush(self._ahead, (start_at, next(self._ahead_order), item))
            if self._ahead[0][2] is item:
                self._ahead_changed.set()
            return
        self._enter(item)

    def _enter(self, item: _Item) -> None:
        """Its instant has come: queue it in its lane, or go on to its target."""
        job_lane = item.lane
        if item.serial and job_lane is not None:
            if job_lane.busy:
                item.where = _Where.LANE
                job_lane.queue.append(item)
                return
            job_lane.busy = True
            item.has_turn = True
        self._admit(item)

    def _admit(self, item: _Item) -> None:
        """Past its lane: execute it when its target has a slot."""
        running = self._target_running.get(item.key, 0)
        if running >= self._per_target_limit:
            item.where = _Where.TARGET
            self._target_waiting.setdefault(item.key, deque()).append(item)
            return
        self._target_running[item.key] = running + 1
        self._grant_slot(item)

    def _grant_slot(self, item: _Item) -> None:
        item.has_slot = True
        if item.where is _Where.BACK_SLOT and item.back is not None:
            item.back.set()
            return
        item.where = _Where.READY
        self._ready.append(item)
        self._wake_worker()

    def _wake_worker(self) -> None:
        if self._idle_workers and not self._waking:
            self._waking = True
            self._idle_workers.popleft().set()

    def stop(self, run_id: str, reason: StopReason) -> bool:
        item = self._items.get(run_id)
        if item is None:
            return False
        item.reason = item.reason or reason
        if item.scope is not None:
            # Executing, inside the limits or not: its task ends it.
            item.scope.cancel()
            return True
        self._withdraw(item)
        self._end(item, item.run, RunStatus.CANCELLED, None)
        return True

    def _withdraw(self, item: _Item) -> None:
        """Take a waiting run out of the queue it waits in."""
        if item.where is _Where.AHEAD:
            item.where = _Where.WITHDRAWN  # left in the heap, skipped when popped
        elif item.where is _Where.LANE and item.lane is not None:
            item.lane.queue.remove(item)
        elif item.where is _Where.TARGET:
            self._target_waiting[item.key].remove(item)
        elif item.where is _Where.READY:
            self._ready.remove(item)

    def stop_job(self, job_id: str, reason: StopReason) -> None:
        for run_id, item in list(self._items.items()):
            if item.job.id == job_id:
                self.stop(run_id, reason)

    def withdraw_ahead(self, job_id: str | None = None) -> list[Claim]:
        """Take back the runs fired ahead that still wait for their instant (of one job, or
        all): they never execute here, and the scheduler undoes their claims."""
        claims = []
        for item in list(self._items.values()):
            if item.where is not _Where.AHEAD or item.claim is None:
                continue
            if job_id is None or item.job.id == job_id:
                self._withdraw(item)
                self._release(item)
                claims.append(item.claim)
        return claims

    def withdraw_waiting(self, job_id: str, reason: StopReason | None) -> None:
        """End with ``reason`` the job's scheduled runs past their instant that do not execute
        yet (in the lane, waiting for a slot or a worker); None leaves them."""
        if reason is None or job_id not in self._per_job:
            return
        for run_id, item in list(self._items.items()):
            if item.job.id == job_id and item.lane is not None and item.where in _WAITING:
                self.stop(run_id, reason)

    @contextmanager
    def turn_held(self, job_id: str) -> Iterator[None]:
        """Within: the job's lane keeps its turn from its queue (a change to the job is on its
        way, and may withdraw what waits there)."""
        lane = self._lanes.get(job_id)
        if lane is None:
            yield
            return
        lane.holds += 1
        try:
            yield
        finally:
            self._unhold(lane)

    def outcomes_written(self, run_ids: Iterable[str]) -> None:
        """The ends of these runs are written (and the pauses they made withdrew what waited):
        their lanes' turns go on."""
        for run_id in run_ids:
            lane = self._outcomes_held.pop(run_id, None)
            if lane is not None:
                self._unhold(lane)

    def _unhold(self, lane: _Lane) -> None:
        lane.holds -= 1
        if not lane.holds and lane.turn_free:
            lane.turn_free = False
            self._pass_turn(lane)

    def stop_all(self, reason: StopReason) -> None:
        for run_id in list(self._items):
            self.stop(run_id, reason)

    async def wait_idle(self) -> None:
        await self._idle.wait()

    # --- one run --------------------------------------------------------------------------------

    async def _execute(self, item: _Item) -> None:
        job, run = item.job, item.run
        status: RunStatus = RunStatus.CANCELLED
        error: str | None = None
        limit = job.policies.timeout or self._default_timeout
        # The limit counts from when the run executes: time spent waiting for its lane or
        # target is not the run's. A deadline cancels the run as a stop does, so each executor
        # stops its work the way it stops a run (interrupt, shut down, cancel).
        deadline = math.inf if limit is None else anyio.current_time() + limit
        item.scope = anyio.CancelScope(deadline=deadline)
        limits = CURRENT_LIMITS.set(_Limits(self, item))
        try:
            with item.scope:
                run = run_with(run, status=RunStatus.RUNNING, started_at=self._clock.now())
                self._bus.run(RUN_STARTED, run, job=job)
                self._writer.started(run)
                status, error, began = await self._call(item, run)
                if began is not None:
                    run = run_with(run, status=RunStatus.RUNNING, started_at=began)
        finally:
            CURRENT_LIMITS.reset(limits)
            if limit is not None and item.reason is None and item.scope.cancelled_caught:
                item.reason = timed_out(limit)
            self._end(item, run, status, error)

    async def _call(self, item: _Item, run: Run) -> tuple[RunStatus, str | None, datetime | None]:
        """The run's status, its error and, when the executor says so, when its work began."""
        job = item.job
        try:
            outcome = await self._executor.execute(
                job, run, RunOutput(run, self._bus, self._writer)
            )
        except Exception as exc:
            return RunStatus.FAILED, f"{type(exc).__name__}: {exc}", None
        item.handed_off = outcome.handed_off
        if outcome.skipped_reason is not None:
            return RunStatus.SKIPPED, outcome.skipped_reason, None
        if outcome.error is not None:
            return RunStatus.FAILED, outcome.error, outcome.started_at
        return RunStatus.SUCCEEDED, None, outcome.started_at

    def _end(self, item: _Item, run: Run, status: RunStatus, error: str | None) -> None:
        """Release what the run held, let the next runs go, and hand the end to the writer."""
        if item.reason is not None:
            status, error = item.reason.status, item.reason.error
        if item.handed_off:
            self._release(item)
            return
        ended_at = self._clock.now()
        final = run_with(
            run, status=status, started_at=run.started_at, finished_at=ended_at, error=error
        )
        if item.job.policies.retries is not None and item.reason is not DELETED:
            final = with_retry(item.job, final, ended_at=ended_at)
        self._hold_for_outcome(item, final)
        others = self._release(item)
        # The job is only kept for the events announcing the end: ends can wait in the writer
        # by the thousand under a burst, and every object they hold is scanned by the GC. Kept
        # for a listener that does not listen yet: it may by the time the end is written.
        kept = self._bus.subscribed(RUN_FINISHED, JOB_UPDATED) or watches_failures(item.job)
        self._writer.ended(Ended(final, others, item.job if kept else None))

    def _hold_for_outcome(self, item: _Item, final: Run) -> None:
        """Keep the turn of a run whose failure may pause its job from its queue until the
        end is written (``outcomes_written``)."""
        lane = item.lane
        if lane is None or not item.has_turn or not lane.queue or not watches_failures(item.job):
            return
        if counts_as_failure(final.status) and final.retry_at is None:
            lane.holds += 1
            self._outcomes_held[final.id] = lane

    def _release(self, item: _Item) -> int:
        """Forget ``item`` and free what it held; returns how many runs of its job are left."""
        del self._items[item.run.id]
        if item.has_slot:
            self._release_slot(item.key)
        if item.has_turn and item.lane is not None:
            self._pass_turn(item.lane)
        if item.lane is not None:
            item.lane.running -= 1
            if item.lane.running == 0 and self._lanes.get(item.job.id) is item.lane:
                del self._lanes[item.job.id]
        others = self._per_job[item.job.id] - 1
        if others:
            self._per_job[item.job.id] = others
        else:
            del self._per_job[item.job.id]
        if not self._items:
            self._idle.set()
        return others

    def _release_slot(self, key: str) -> None:
        waiting = self._target_waiting.get(key)
        if waiting:
            # The slot goes straight to the next run of the same target.
            self._grant_slot(waiting.popleft())
            return
        running = self._target_running[key] - 1
        if running:
            self._target_running[key] = running
        else:
            del self._target_running[key]
            self._target_waiting.pop(key, None)

    def _pass_turn(self, lane: _Lane) -> None:
        if lane.holds:
            lane.turn_free = True
            return
        if lane.queue:
            item = lane.queue.popleft()
            item.has_turn = True
            self._admit(item)
        else:
            lane.busy = False

    # --- outside the limits (``executors.outside_limits``) ---------------------------------------

    def leave_limits(self, item: _Item) -> bool:
        """The executing ``item`` gives up its slot; a new worker takes its place."""
        if item.where is not _Where.EXECUTING or self._group is None:
            return False
        item.where = _Where.OUTSIDE
        if item.scope is not None:
            item.time_left = item.scope.deadline - anyio.current_time()
            item.scope.deadline = math.inf
        if item.has_slot:
            item.has_slot = False
            self._release_slot(item.key)
        self._group.start_soon(self._worker)
        return True

    async def come_back(self, item: _Item) -> None:
        """Wait for a slot of its target, then for a worker's place, before the runs not
        started yet. Cancelled (stopped) on the way, it holds what it got, for ``_release``."""
        if item.where is not _Where.OUTSIDE:
            return
        await self._slot_back(item)
        await self._worker_back(item)
        if item.scope is not None:
            item.scope.deadline = anyio.current_time() + item.time_left

    async def _slot_back(self, item: _Item) -> None:
        running = self._target_running.get(item.key, 0)
        if running < self._per_target_limit:
            self._target_running[item.key] = running + 1
            item.has_slot = True
            return
        item.where, item.back = _Where.BACK_SLOT, anyio.Event()
        self._target_waiting.setdefault(item.key, deque()).appendleft(item)
        try:
            await item.back.wait()
        finally:
            if not item.has_slot:
                self._target_waiting[item.key].remove(item)

    async def _worker_back(self, item: _Item) -> None:
        item.where, item.back = _Where.BACK_WORKER, anyio.Event()
        self._returning.append(item)
        self._wake_worker()
        try:
            await item.back.wait()
        finally:
            if item.where is _Where.BACK_WORKER:
                # Stopped before a worker made room: its task retires once the run ends.
                self._returning.remove(item)
                self._surplus += 1

    def _retire_for(self, item: _Item) -> None:
        """This worker ends; the run coming back executes in its place."""
        item.where = _Where.EXECUTING
        if item.back is not None:
            item.back.set()
        if self._ready or self._returning:
            self._wake_worker()
