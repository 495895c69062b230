"""The Scheduler: the firing loop, the public API over jobs and runs, and the engine's lease.

The loop sleeps until half ``fire_ahead`` before the earliest ``next_fire_at`` or a wake-up
(a new or changed job), never on a fixed poll, and re-reads the clock at least every
``max_sleep`` seconds to notice jumps of the wall clock. Each pass fires one batch of due jobs
in one transaction (``firing.fire_due``), those due within ``fire_ahead`` included, and hands
the runs to the ``Runner``, which holds the early ones until their instant; their ends are
written in batches by the ``RunWriter``.

Every store call goes through one worker thread (``engine/store_thread.py``) so that the event
loop of the host (the Jupyter server's) never blocks on SQLite. Nothing here reads the time
except through the injected ``Clock``. The firing model is described in ``docs/engine.md``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from contextlib import AsyncExitStack
from datetime import datetime, timedelta
from functools import partial
from typing import TypeVar

import anyio

from jupyter_recall.core.clock import Clock, SystemClock
from jupyter_recall.core.errors import ConflictError
from jupyter_recall.core.lifecycle import Retention
from jupyter_recall.core.model import Job, Policies, Run, new_id
from jupyter_recall.core.policy import earliest
from jupyter_recall.core.records import Action, JobOptions, Target
from jupyter_recall.engine import dependencies, firing, jobs, owners, retrying
from jupyter_recall.engine.dependency_trigger import DependencyTrigger
from jupyter_recall.engine.event_relay import EventRelay
from jupyter_recall.engine.events import (
    JOB_CREATED,
    JOB_DELETED,
    JOB_UPDATED,
    RUN_FINISHED,
    ApprovalEvent,
    Event,
    EventBus,
    Listener,
)
from jupyter_recall.engine.executors import Executor
from jupyter_recall.engine.jobs import JobChanges, NewJob
from jupyter_recall.engine.pruning import Pruning
from jupyter_recall.engine.retention import DeletedRuns
from jupyter_recall.engine.runner import DELETED, SHUTDOWN, STOPPED, Runner, not_to_execute
from jupyter_recall.engine.store_thread import StoreThread
from jupyter_recall.engine.writer import FiringGate, RunWriter
from jupyter_recall.store.base import JobCount, JobFilter, RunFilter, RunsNow, Store
from jupyter_recall.store.changes import ChangeFeed, ChangeListener, EventFeed

__all__ = ["Event", "NewJob", "Scheduler"]

log = logging.getLogger("jupyter_recall.engine")

T = TypeVar("T")

ANY_JOB = JobFilter()
ANY_RUN = RunFilter()

ERROR_BACKOFF = 1.0
"""Seconds before the loop tries again after the store failed (the host keeps running)."""


class Scheduler:
    """Fires jobs persisted in a Store through an Executor. Use as ``async with``."""

    def __init__(
        self,
        store: Store,
        executor: Executor,
        *,
        clock: Clock | None = None,
        default_tz: str = "UTC",
        engine_id: str | None = None,
        max_concurrent_runs: int = 16,
        per_target_limit: int = 4,
        output_limit: int = 100_000,
        max_sleep: float = 30.0,
        lease_seconds: float = 30.0,
        batch_size: int = 500,
        fire_ahead: float = 0.25,
        fire_owner: str | None = None,
        default_timeout: float | None = None,
        keep_runs: int | None = None,
        keep_runs_for: float | None = None,
        prune_interval: float = 60.0,
    ) -> None:
        if fire_ahead < 0:
            raise ValueError(f"fire_ahead must be >= 0 seconds, got {fire_ahead}")
        self.store = store
        self.executor = executor
        self.clock: Clock = clock or SystemClock()
        self.default_tz = default_tz
        self.engine_id = engine_id or f"engine-{new_id()}"
        self.max_sleep = max_sleep
        self.lease_seconds = lease_seconds
        self.batch_size = batch_size
        self.fire_ahead = fire_ahead
        self.fire_owner = fire_owner
        """Fire only this user's jobs (None: every user's): a user's server on a shared store."""
        self._ahead = timedelta(seconds=fire_ahead)
        # A small call runs on the event loop when the store can at once (SQLite, not PostgreSQL).
        self._store_thread = StoreThread(now=store.run_now if isinstance(store, RunsNow) else None)
        self._bus = EventBus()
        self._gate = FiringGate()
        self._writer = RunWriter(
            self._in_store,
            store,
            self.clock,
            output_limit=output_limit,
            on_flushed=self._flushed,
            read_back=lambda: self._bus.wants(JOB_UPDATED),
            gate=self._gate,
        )
        self._runner = Runner(
            executor,
            self.clock,
            self._bus,
            self._writer,
            max_concurrent_runs=max_concurrent_runs,
            per_target_limit=per_target_limit,
            default_timeout=default_timeout,
        )
        self._dependencies = DependencyTrigger(
            store,
            self._in_store,
            self._runner,
            self._bus,
            self.clock,
            engine_id=self.engine_id,
            owner=fire_owner,
        )
        """Fires the jobs that wait for another job's runs, on their run.finished."""
        self._bus.subscribe(self._dependencies.heard, types={RUN_FINISHED})
        self._wake = anyio.Event()
        self._sleeping_until: datetime | None = None
        self._planning = True
        self._runs_ended = anyio.Event()
        """Set (and replaced) each time ended runs are committed; waiters then re-read."""
        self._relay = (
            EventRelay(
                store,
                store,
                self._bus,
                self._in_store,
                engine_id=self.engine_id,
            )
            if isinstance(store, EventFeed)
            else None
        )
        """Events to and from the other engines on the store, when it carries them."""
        self._deleted_runs_listeners: list[Callable[[DeletedRuns], None]] = []
        self._pruning = Pruning(
            self._in_store,
            store,
            self.clock,
            Retention(keep_runs, keep_runs_for),
            interval=prune_interval,
            gate=self._gate,
            busy=lambda: self._runner.releasing,
            deleted=self._runs_deleted,
        )
        """Retention of runs: the background sweep and prune_runs (engine/pruning.py)."""
        self._paused_listeners: list[Callable[[Job], None]] = []
        self._withdrawn: dict[str, tuple[Job, list[firing.Claim]]] = {}
        """Runs fired ahead for jobs paused after their failures, by job, with the job as
        paused: undone at the next pass (or first thing by the next change to the job)."""
        self._stack: AsyncExitStack | None = None
        self._loops: anyio.CancelScope | None = None
        self._loops_done = anyio.Event()

    # --- lifecycle --------------------------------------------------------------------------

    async def __aenter__(self) -> Scheduler:
        if self._stack is not None:
            raise RuntimeError("this Scheduler is already running")
        stack = AsyncExitStack()
        tasks = await stack.enter_async_context(anyio.create_task_group())
        try:
            recovered = await self._renew_lease(starting=True)
        except BaseException:
            tasks.cancel_scope.cancel()
            await stack.aclose()
            self._store_thread.close()
            raise
        self._stack = stack
        if isinstance(self.store, ChangeFeed):
            stack.callback(self.store.listen_for_changes(self._heard()))
        # Made here, not in the task: a stop that comes before the task starts still cancels.
        self._loops = anyio.CancelScope()
        self._announce_recovery(recovered)
        tasks.start_soon(self._runner.run)
        tasks.start_soon(self._writer.run)
        tasks.start_soon(self._run_loops, self._loops)
        return self

    async def __aexit__(self, *exc: object) -> None:
        """Stop firing; runs in flight end ``interrupted``; release the lease; no task is left."""
        stack, self._stack = self._stack, None
        if stack is None:
            return
        try:
            if self._loops is not None:
                self._loops.cancel()
            await self._loops_done.wait()
            # Runs fired ahead of their instant are undone, so that the next engine fires them.
            await self._unclaim_all()
            self._runner.stop_all(SHUTDOWN)
            await self._runner.wait_idle()
            self._runner.close()
            await self._writer.close()
            with anyio.CancelScope(shield=True):
                await self._in_store(partial(self.store.release_lease, self.engine_id))
        finally:
            await stack.aclose()
            self._store_thread.close()

    async def _unclaim_all(self) -> None:
        """Undo the runs fired ahead of their instant, so that the next engine fires them; if
        the store refuses, they stay recorded and the next start interrupts them."""
        claims = [*self._take_withdrawn(None), *self._runner.withdraw_ahead()]
        if not claims:
            return
        with anyio.CancelScope(shield=True):
            try:
                await self._in_store(partial(firing.unclaim, self.store, claims))
            except Exception:
                log.exception("could not undo %d runs fired ahead at shutdown", len(claims))

    async def _run_loops(self, loops_scope: anyio.CancelScope) -> None:
        try:
            with loops_scope:
                async with anyio.create_task_group() as loops:
                    loops.start_soon(self._fire_loop)
                    loops.start_soon(self._lease_loop)
                    loops.start_soon(self._pruning.run)
                    if self._relay is not None:
                        loops.start_soon(self._relay.run)
                    loops.start_soon(self._dependencies.run)
        finally:
            self._loops_done.set()

    async def _in_store_unclaimed(
        self, job_id: str | None, func: Callable[[], T], *, ahead: bool = True
    ) -> T:
        """Run ``func`` (a change to jobs) in the store thread after undoing the runs fired
        ahead for the job (or all jobs: ``None``), in the same call, so that no firing pass
        comes between: the change applies as if they had not been fired. Claims already
        withdrawn (a pause after failures) are undone first in any case; ``ahead=False``
        leaves the runs still waiting for their instant alone (a change that cannot concern
        them: resuming paused jobs)."""
        claims = self._take_withdrawn(job_id)
        if ahead:
            claims += self._runner.withdraw_ahead(job_id)
        if not claims:
            return await self._in_store(func)

        def unclaimed_then() -> T:
            firing.unclaim(self.store, claims)
            return func()

        return await self._in_store(unclaimed_then)

    def _take_withdrawn(self, job_id: str | None) -> list[firing.Claim]:
        """The claims withdrawn from the runner but not undone yet, of one job (or all): the
        caller undoes them in its next store call, before anything else touches the job."""
        if job_id is None:
            taken, self._withdrawn = list(self._withdrawn.values()), {}
        else:
            entry = self._withdrawn.pop(job_id, None)
            taken = [] if entry is None else [entry]
        return [claim for _, claims in taken for claim in claims]

    def _require_running(self) -> None:
        if self._stack is None:
            raise RuntimeError("the Scheduler is not running: use it as `async with scheduler:`")

    def _in_store(self, func: Callable[[], T], *, small: bool = False) -> Awaitable[T]:
        """Run ``func`` in the store thread; the event loop never waits on SQLite, but for a
        ``small`` call (one row, by its key) that can run at once (``engine/store_thread``).
        The store thread's own awaitable, not one more coroutine around it."""
        return self._store_thread.run(func, small=small)

    # --- events -----------------------------------------------------------------------------

    def subscribe(
        self,
        listener: Listener,
        *,
        types: Iterable[str] | None = None,
        listening: Callable[[], bool] | None = None,
        remote: bool = False,
    ) -> Callable[[], None]:
        """Call ``listener`` for the events of ``types`` (None: all) while ``listening()`` says
        it listens (None: always); returns the function that unsubscribes it. What no listener
        wants is not computed: see ``EventBus``. ``remote``: a live view, which also gets the
        events of other engines on the store (``relays_events``, or ``relay_foreign_runs``)."""
        return self._bus.subscribe(listener, types=types, listening=listening, remote=remote)

    def publish(self, event: ApprovalEvent) -> None:
        """An event of the server's own (an approval request's) to this engine's listeners
        and, on a store that carries events, to the views of the other servers on it."""
        self._bus.emit(event)

    @property
    def relays_events(self) -> bool:
        """Whether the events of other engines on the store reach this engine's ``remote``
        listeners as they happen (the store is an ``EventFeed``: PostgreSQL)."""
        return self._relay is not None

    def views_changed(self) -> None:
        """A live view (``remote`` listener) opened or closed: other engines learn at once
        whether to send their events here."""
        if self._relay is not None:
            self._relay.views_changed()

    def _announce_recovery(self, recovered: firing.Recovery) -> None:
        for run in recovered.runs:
            log.warning("run %s of job %s: %s", run.id, run.job_id, run.error)
            self._bus.run(RUN_FINISHED, run)
        for job in recovered.jobs:
            self._bus.job(JOB_UPDATED, job)

    def _flushed(self, result: firing.FlushResult, ended: Sequence[firing.Ended]) -> None:
        if self._bus.wants(RUN_FINISHED, JOB_UPDATED):
            self._announce_ends(result, ended)
        self._pruning.ended(run.job_id for run in result.runs if run.status.is_final)
        for job in result.paused:
            self._paused_for_failures(job)
        self._runner.outcomes_written(item.run.id for item in ended)
        if any(run.status.is_final for run in result.runs):
            self._runs_ended.set()
            self._runs_ended = anyio.Event()
        # A retry just planned may be due before the pass the loop sleeps towards.
        self._poke(earliest([run.retry_at for run in result.runs]))

    def _announce_ends(self, result: firing.FlushResult, ended: Sequence[firing.Ended]) -> None:
        fired = {item.run.job_id: item.job for item in ended if item.job is not None}
        settled = {
            state.id: state.applied_to(fired[state.id])
            for state in result.states
            if state.id in fired
        }
        # While nobody wants job.updated, no state was read back: run.finished carries the job
        # as fired (its definition, for free). Once someone does, never that stale state.
        as_fired = {} if self._bus.wants(JOB_UPDATED) else fired
        for run in result.runs:
            if run.status.is_final:
                job = settled.get(run.job_id) or as_fired.get(run.job_id)
                self._bus.run(RUN_FINISHED, run, job=job)
        for job in settled.values():
            self._bus.job(JOB_UPDATED, job)

    def on_paused_for_failures(self, listener: Callable[[Job], None]) -> Callable[[], None]:
        """Call ``listener(job)`` (from the event loop) when the engine pauses a job after its
        failures (``policies.pause_after_failures``); returns the function that unsubscribes."""
        self._paused_listeners.append(listener)
        return lambda: self._paused_listeners.remove(listener)

    def on_runs_deleted(self, listener: Callable[[DeletedRuns], None]) -> Callable[[], None]:
        """Call ``listener(deleted)`` (from the event loop) when runs of a job that leave files
        (``retention.leaving_files``) are deleted: by retention, or with their job (by hand, or
        by its owner's declaration); returns the function that unsubscribes."""
        self._deleted_runs_listeners.append(listener)
        return lambda: self._deleted_runs_listeners.remove(listener)

    def _runs_deleted(self, deleted: DeletedRuns) -> None:
        """Tell the listeners; each source tells only runs of jobs that leave files."""
        for listener in list(self._deleted_runs_listeners):
            try:
                listener(deleted)
            except Exception:
                log.exception("a listener of deleted runs failed")

    def _paused_for_failures(self, job: Job) -> None:
        log.warning("job %s paused: %s", job.id, job.paused_reason)
        # A run fired ahead of its instant must not execute now that the job is paused, nor
        # one waiting for its turn.
        self._runner.withdraw_waiting(job.id, not_to_execute(job, redefined=False))
        claims = self._runner.withdraw_ahead(job.id)
        if claims:
            _, earlier = self._withdrawn.get(job.id, (job, []))
            self._withdrawn[job.id] = (job, [*earlier, *claims])
            self._wake.set()
        self._bus.job(JOB_UPDATED, job)
        for listener in list(self._paused_listeners):
            try:
                listener(job)
            except Exception:
                log.exception("a listener of paused jobs failed")

    @property
    def retention(self) -> Retention:
        """The engine's default retention, for jobs whose policies set none."""
        return self._pruning.defaults

    async def prune_runs(self, *, owner: str | None, dry_run: bool = False) -> dict[str, int]:
        """Delete the runs past their jobs' retention now (``owner``'s jobs, every job with
        None); the count per job id. ``dry_run``: count them, delete nothing."""
        self._require_running()
        return await self._pruning.prune(owner=owner, dry_run=dry_run)

    # --- the firing loop -----------------------------------------------------------------------

    def _heard(self) -> ChangeListener:
        """What the store calls, from its thread, when a job changed through any store object
        on the database (another server's included): a wake-up, in the event loop."""
        token = anyio.lowlevel.current_token()

        def heard(fire_at: datetime | None) -> None:
            try:
                anyio.from_thread.run_sync(self._changed_elsewhere, fire_at, token=token)
            except RuntimeError:  # the event loop is gone: nothing left to wake
                return

        return heard

    def _changed_elsewhere(self, fire_at: datetime | None) -> None:
        if fire_at is None:
            self._wake.set()
        else:
            self._poke(fire_at)

    def _poke(self, fire_at: datetime | None) -> None:
        """Wake the loop if ``fire_at`` needs a pass earlier than the one it sleeps towards.

        The loop itself sleeps until the pass of the earliest job (``firing.pass_for``): a job
        due then or later needs no earlier pass. Asked with the whole window, every job created
        at the instant of the earliest (a batch of "every day at 9:00", of "tomorrow", of one
        cron line) woke the loop for a pass of its own."""
        if fire_at is None:
            return
        pass_at = firing.pass_for(fire_at, self._ahead)
        if self._planning or self._sleeping_until is None or pass_at < self._sleeping_until:
            self._wake.set()

    async def _fire_loop(self) -> None:
        while True:
            self._planning = True
            self._gate.firing()
            self._wake = anyio.Event()
            try:
                result = await self._fire_once()
            except Exception:
                log.exception("firing pass failed; trying again in %s s", ERROR_BACKOFF)
                self._planning = False
                self._gate.sleeping(ERROR_BACKOFF)
                await anyio.sleep(ERROR_BACKOFF)
                continue
            if result.full_batch:
                await anyio.lowlevel.checkpoint()
                continue
            await self._sleep(result.next_pass_at)

    async def _undo_withdrawn(self) -> None:
        """Undo the runs withdrawn from jobs paused after their failures, and announce those
        jobs as undone (their next occurrence is the withdrawn one again)."""
        taken, self._withdrawn = self._withdrawn, {}
        claims = [claim for _, claims in taken.values() for claim in claims]
        try:
            states = await self._in_store(partial(firing.unclaim, self.store, claims))
        except BaseException:
            # Still to undo: by the next pass, a change to the job, or the shutdown.
            self._withdrawn = {**taken, **self._withdrawn}
            raise
        for state in states:
            if state.id in taken:
                self._bus.job(JOB_UPDATED, state.applied_to(taken[state.id][0]))

    async def _fire_once(self) -> firing.FireResult:
        if self._withdrawn:
            await self._undo_withdrawn()
        now = self.clock.now()
        result = await self._in_store(
            partial(
                firing.fire_due,
                self.store,
                now=now,
                engine_id=self.engine_id,
                batch_size=self.batch_size,
                in_flight=self._runner.in_flight,
                ahead=self.fire_ahead,
                owner=self.fire_owner,
            )
        )
        for retried in result.retried:
            self._runner.start(retried.job, retried.run, lane=True, serial=retried.serial)
            self._bus.job(JOB_UPDATED, retried.job)
        for fired in result.fired:
            self._runner.start(
                fired.job,
                fired.run,
                lane=True,
                serial=fired.serial,
                start_at=fired.start_at,
                claim=fired.claim,
            )
        for run in result.recorded:
            self._bus.run(RUN_FINISHED, run)
        for job in result.jobs:
            self._bus.job(JOB_UPDATED, job)
        return result

    async def _sleep(self, deadline: datetime | None) -> None:
        """Until ``deadline`` (at most ``max_sleep``), or a wake-up, whichever comes first."""
        now = self.clock.now()
        if deadline is not None and deadline <= now:
            return
        target = deadline or now + timedelta(seconds=self.max_sleep)
        self._sleeping_until = deadline
        self._planning = False
        self._gate.sleeping(None if deadline is None else (deadline - now).total_seconds())
        await self.clock.sleep_until(target, max_sleep=self.max_sleep, wake=self._wake)

    async def _renew_lease(self, *, starting: bool) -> firing.Recovery:
        """Renew this engine's lease and interrupt the runs of engines whose lease is gone."""
        return await self._in_store(
            partial(
                firing.renew_and_recover,
                self.store,
                engine_id=self.engine_id,
                now=self.clock.now(),
                lease_seconds=self.lease_seconds,
                starting=starting,
            )
        )

    async def _lease_loop(self) -> None:
        period = self.lease_seconds / 3
        while True:
            renew_at = self.clock.now() + timedelta(seconds=period)
            await self.clock.sleep_until(renew_at, max_sleep=period)
            try:
                recovered = await self._renew_lease(starting=False)
            except Exception:
                log.exception("could not renew the lease of engine %s", self.engine_id)
                continue
            self._announce_recovery(recovered)

    # --- jobs -----------------------------------------------------------------------------------

    async def add_job(self, new: NewJob, *, owner: str) -> Job:
        (job,) = await self.add_jobs([new], owner=owner)
        return job

    async def add_jobs(self, news: Sequence[NewJob], *, owner: str) -> list[Job]:
        """Create jobs in one transaction: all of them, or none (the error names the index)."""
        self._require_running()
        created = await self._in_store(
            partial(
                jobs.create_jobs,
                self.store,
                list(news),
                owner=owner,
                now=self.clock.now(),
                default_tz=self.default_tz,
            ),
            small=len(news) == 1,
        )
        for job in created:
            self._bus.job(JOB_CREATED, job)
        self._poke(earliest([job.next_fire_at for job in created]))
        return created

    async def get_job(self, job_id: str, *, owner: str) -> Job:
        return await self._in_store(partial(self.store.get_job, job_id, owner=owner), small=True)

    async def list_jobs(self, *, owner: str, where: JobFilter = ANY_JOB) -> list[Job]:
        return await self._in_store(partial(self.store.list_jobs, owner=owner, where=where))

    async def count_jobs_by_status(
        self, *, owner: str, where: JobFilter = ANY_JOB
    ) -> list[JobCount]:
        count = partial(self.store.count_jobs_by_status, owner=owner, where=where)
        return await self._in_store(count)

    def _changed(self, job: Job, *, redefined: bool = False) -> Job:
        """Announce a job changed; its runs waiting for their turn that it no longer runs do
        not execute (``runner.not_to_execute``)."""
        self._runner.withdraw_waiting(job.id, not_to_execute(job, redefined=redefined))
        self._bus.job(JOB_UPDATED, job)
        self._poke(job.next_fire_at)
        return job

    async def update_job(
        self,
        job_id: str,
        *,
        owner: str,
        when: str | None = None,
        tz: str | None = None,
        name: str | None = None,
        action: Action | None = None,
        target: Target | None = None,
        policies: Policies | None = None,
        options: JobOptions | None = None,
    ) -> Job:
        """Change a job. A new ``when``/``tz`` is parsed at the time of the update and the
        schedule restarts from it; new policies apply from the next occurrence on."""
        changes = JobChanges(when, tz, name, action, target, policies, options)
        return await self.change_job(job_id, owner=owner, changes=changes)

    async def change_job(self, job_id: str, *, owner: str, changes: JobChanges) -> Job:
        """``update_job`` with its changes as one record (as the REST edge parses them)."""
        self._require_running()
        await self._guard(job_id, owner, "edited")
        now = self.clock.now()
        update = partial(jobs.update_job, self.store, job_id, owner=owner, now=now, changes=changes)
        with self._runner.turn_held(job_id):
            job = await self._in_store_unclaimed(job_id, update)
            return self._changed(job, redefined=changes.redefines)

    async def pause_job(self, job_id: str, *, owner: str) -> Job:
        self._require_running()
        pause = partial(jobs.pause_job, self.store, job_id, owner=owner, now=self.clock.now())
        with self._runner.turn_held(job_id):
            return self._changed(await self._in_store_unclaimed(job_id, pause))

    async def resume_job(self, job_id: str, *, owner: str, catch_up: bool = False) -> Job:
        """Resume from now on; with ``catch_up`` the occurrences since the pause are due at once
        and handled by the job's catch-up policy."""
        self._require_running()
        await self._guard(job_id, owner, "resumed")
        now = self.clock.now()

        def resume() -> tuple[Job, datetime | None]:
            in_flight, retry_at = self._in_flight(job_id)
            job = jobs.resume_job(
                self.store, job_id, owner=owner, now=now, catch_up=catch_up, in_flight=in_flight
            )
            return job, retry_at

        job, retry_at = await self._in_store_unclaimed(job_id, resume, ahead=False)
        after = job.schedule.after
        if after is not None:  # with catch_up, the upstream runs ended during the pause
            self._dependencies.upstream_changed(after.after.job, catching_up=catch_up)
        # A retry kept through the pause may be due already: the loop, asleep since no active
        # job's retry was pending, must not wait for its next pass (max_sleep) to fire it.
        self._poke(retry_at)
        return self._changed(job)

    def _in_flight(self, job_id: str) -> tuple[int, datetime | None]:
        """For a job resumed (in the store thread): its runs in flight, a pending retry counted
        among them (a one-shot job resumed with one is not over), and that retry's instant,
        which the firing loop must be woken for."""
        retry_at = retrying.pending_at(self.store, job_id)
        return self._runner.held(job_id) + (retry_at is not None), retry_at

    async def skip_job(self, job_id: str, *, owner: str) -> Job:
        """Skip the next occurrence of a recurring job (recorded as a ``skipped`` run)."""
        self._require_running()
        job, skipped = await self._in_store_unclaimed(
            job_id,
            partial(
                jobs.skip_job,
                self.store,
                job_id,
                owner=owner,
                now=self.clock.now(),
                engine_id=self.engine_id,
                in_flight=self._runner.held(job_id),
            ),
        )
        if skipped is not None:
            self._bus.run(RUN_FINISHED, skipped, job=job)
        return self._changed(job)

    async def trigger_job(self, job_id: str, *, owner: str) -> Run:
        """Run the job now (trigger ``manual``); its schedule does not move."""
        self._require_running()
        await self._guard(job_id, owner, "run")
        job, run = await self._in_store(
            partial(
                jobs.trigger_job,
                self.store,
                job_id,
                owner=owner,
                now=self.clock.now(),
                engine_id=self.engine_id,
            )
        )
        self._bus.job(JOB_UPDATED, job)
        self._runner.start(job, run, lane=False, serial=False)
        return run

    async def cancel_job(self, job_id: str, *, owner: str, reason: str | None = None) -> Job:
        """Nothing more fires; runs already in flight finish (``stop_run`` stops them). A
        ``reason`` (a cancellation nobody asked for in person) becomes the job's last error."""
        self._require_running()
        await self._guard(job_id, owner, "cancelled")
        now = self.clock.now()
        cancel = partial(jobs.cancel_job, self.store, job_id, owner=owner, now=now, reason=reason)
        with self._runner.turn_held(job_id):
            job = await self._in_store_unclaimed(
                job_id, partial(retrying.dropping_retries, self.store, job_id, cancel)
            )
            return self._changed(job)

    async def delete_job(self, job_id: str, *, owner: str) -> None:
        """Delete a job and its runs; its runs in flight are cancelled."""
        self._require_running()
        await self._guard(job_id, owner, "deleted")
        delete = partial(
            dependencies.delete_job, self.store, job_id, owner=owner, now=self.clock.now()
        )
        self._runner.stop_job(job_id, DELETED)
        deleted = await self._in_store(delete)
        self._deleted(deleted.jobs, deleted.cancelled, deleted.runs)

    # --- jobs declared by owners (engine/owners.py) ---------------------------------------------

    async def _guard(self, job_id: str, owner: str, action: str) -> None:
        await self._in_store(partial(owners.guard, self.store, job_id, owner=owner, action=action))

    async def reconcile(
        self, plugin_owner: str, specs: Sequence[owners.OwnedJob], *, owner: str
    ) -> owners.Reconciled:
        """Make the user's jobs declared by ``plugin_owner`` exactly ``specs`` (by key)."""
        self._require_running()
        result = await self._in_store_unclaimed(
            None,
            partial(
                owners.reconcile,
                self.store,
                plugin_owner,
                list(specs),
                owner=owner,
                now=self.clock.now(),
                default_tz=self.default_tz,
            ),
        )
        self._deleted(result.deleted, result.cancelled, result.deleted_runs)
        for job in result.created:
            self._bus.job(JOB_CREATED, job)
        for job in result.updated:
            self._changed(job)
        self._poke(earliest([job.next_fire_at for job in result.created]))
        return result

    async def delete_owned(self, plugin_owner: str, *, owner: str) -> list[Job]:
        self._require_running()
        result = await self._in_store(
            partial(
                owners.delete_owned, self.store, plugin_owner, owner=owner, now=self.clock.now()
            )
        )
        self._deleted(result.deleted, result.cancelled, result.deleted_runs)
        return result.deleted

    def _deleted(
        self,
        deleted: Sequence[Job],
        cancelled: Sequence[Job],
        deleted_runs: Sequence[DeletedRuns],
    ) -> None:
        """Announce jobs deleted with their runs, the dependents their deletion cancelled, and
        the runs deleted with them that left files."""
        for job in deleted:
            self._runner.stop_job(job.id, DELETED)
            self._bus.job(JOB_DELETED, job)
        for dependent in cancelled:
            self._bus.job(JOB_UPDATED, dependent)
        for runs in deleted_runs:
            self._runs_deleted(runs)

    async def list_owned(self, plugin_owner: str, *, owner: str) -> list[Job]:
        return await self._in_store(
            partial(owners.list_owned, self.store, plugin_owner, owner=owner)
        )

    async def disable_owner(self, plugin_owner: str, *, owner: str) -> list[Job]:
        """Nothing of ``plugin_owner`` fires for this user until ``enable_owner``."""
        self._require_running()
        paused = await self._in_store_unclaimed(
            None,
            partial(
                owners.disable_owner, self.store, plugin_owner, owner=owner, now=self.clock.now()
            ),
        )
        return [self._changed(job) for job in paused]

    async def enable_owner(self, plugin_owner: str, *, owner: str) -> list[Job]:
        self._require_running()
        now = self.clock.now()

        def enable() -> tuple[list[Job], list[datetime]]:
            retries: list[datetime] = []

            def in_flight(job_id: str) -> int:
                count, retry_at = self._in_flight(job_id)
                if retry_at is not None:
                    retries.append(retry_at)
                return count

            resumed = owners.enable_owner(
                self.store, plugin_owner, owner=owner, now=now, in_flight=in_flight
            )
            return resumed, retries

        resumed, retries = await self._in_store_unclaimed(None, enable, ahead=False)
        self._poke(earliest(retries))
        return [self._changed(job) for job in resumed]

    async def owner_disabled(self, plugin_owner: str, *, owner: str) -> bool:
        held = await self._in_store(
            partial(self.store.get_disabled_owner, owner, owners.check_owner_name(plugin_owner))
        )
        return held is not None

    # --- runs -------------------------------------------------------------------------------------

    async def get_run(self, run_id: str, *, owner: str) -> Run:
        return await self._in_store(partial(self.store.get_run, run_id, owner=owner), small=True)

    async def list_runs(self, *, owner: str, where: RunFilter = ANY_RUN) -> list[Run]:
        return await self._in_store(partial(self.store.list_runs, owner=owner, where=where))

    async def stop_run(self, run_id: str, *, owner: str) -> Run:
        """Cancel a run in flight (executing or waiting its turn): it ends ``cancelled``."""
        self._require_running()
        run = await self.get_run(run_id, owner=owner)
        if run.status.is_final:
            raise ConflictError(f"run {run_id} already ended: {run.status.value}")
        if not self._runner.stop(run_id, STOPPED):
            raise ConflictError(
                f"run {run_id} is held by engine {run.engine_id}, not by this one "
                f"({self.engine_id}); it can only be stopped there"
            )
        return await self.wait_run(run_id, owner=owner, timeout=float("inf"))

    async def wait_run(self, run_id: str, *, owner: str, timeout: float) -> Run:
        """The run once it is final, or as it is when ``timeout`` seconds have passed."""
        with anyio.move_on_after(timeout):
            while True:
                # Taken before the read: an end committed after the read sets this very event.
                ended = self._runs_ended
                run = await self.get_run(run_id, owner=owner)
                if run.status.is_final:
                    return run
                await ended.wait()
        return await self.get_run(run_id, owner=owner)
