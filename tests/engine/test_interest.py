"""Interest on the event bus: a listener gets only the types it wants, nothing while it does not
listen, and the engine skips the work of events nobody wants (reading back settled job states)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from functools import partial
from pathlib import Path

import pytest

from jupyter_recall.core.clock import ManualClock
from jupyter_recall.core.errors import StoreError, ValidationError
from jupyter_recall.core.model import Job, Run, RunStatus
from jupyter_recall.engine.events import (
    JOB_CREATED,
    JOB_UPDATED,
    RUN_FINISHED,
    RUN_STARTED,
    Event,
    EventBus,
)
from jupyter_recall.engine.executors import CallableExecutor
from jupyter_recall.engine.jobs import build_job
from jupyter_recall.engine.scheduler import Scheduler
from jupyter_recall.store.base import JobState, RunEnd
from jupyter_recall.store.sqlite import SQLiteStore
from tests.engine.support import OWNER, T0, Events, Script, eventually, new, wait_runs

pytestmark = pytest.mark.anyio


class CountingStore(SQLiteStore):
    """Counts how often the settled job states are read back (what only job.updated needs)."""

    read_backs = 0
    before_failing: Callable[[], None] | None = None
    """Called, then the next settle fails (its batch is written again a second later)."""

    def get_job_states(self, job_ids: Sequence[str]) -> dict[str, JobState]:
        self.read_backs += 1
        return super().get_job_states(job_ids)

    def settle_job_states(self, ends: Sequence[RunEnd], *, now: datetime) -> None:
        hook = self.before_failing
        if hook is not None and ends:
            self.before_failing = None
            hook()
            raise StoreError("the disk hiccuped")
        super().settle_job_states(ends, now=now)


@asynccontextmanager
async def counting(
    db: Path, executor: CallableExecutor, clock: ManualClock
) -> AsyncIterator[tuple[Scheduler, CountingStore]]:
    store = CountingStore(db)
    try:
        async with Scheduler(store, executor, clock=clock) as engine:
            yield engine, store
    finally:
        store.close()


class Switch:
    """A listener's ``listening``: off until turned on."""

    def __init__(self) -> None:
        self.on = False

    def __call__(self) -> bool:
        return self.on


def a_job(job_id: str = "j1") -> Job:
    return build_job(new("in 1h"), owner=OWNER, now=T0, default_tz="UTC").evolve(id=job_id)


# --- the bus ----------------------------------------------------------------------------------


def test_a_listener_gets_only_the_types_it_wants() -> None:
    bus = EventBus()
    finished = Events()
    bus.subscribe(finished, types={RUN_FINISHED})
    assert bus.wants(RUN_FINISHED)
    assert not bus.wants(JOB_UPDATED, RUN_STARTED)
    everything = Events()
    bus.subscribe(everything)
    job = a_job()
    bus.job(JOB_CREATED, job)
    bus.job(JOB_UPDATED, job)
    assert _types(everything.seen) == [JOB_CREATED, JOB_UPDATED]
    assert finished.seen == []
    assert bus.wants(JOB_UPDATED, RUN_STARTED)


def test_nothing_is_wanted_while_the_listener_does_not_listen() -> None:
    bus = EventBus()
    events, switch = Events(), Switch()
    unsubscribe = bus.subscribe(events, types={JOB_CREATED}, listening=switch)
    bus.job(JOB_CREATED, a_job())
    assert events.seen == []
    assert not bus.wants(JOB_CREATED)
    assert bus.subscribed(JOB_CREATED)
    assert not bus.subscribed(JOB_UPDATED)
    switch.on = True
    assert bus.wants(JOB_CREATED, JOB_UPDATED)
    assert not bus.wants(JOB_UPDATED)
    bus.job(JOB_CREATED, a_job("j2"))
    assert [e.job.id for e in events.seen if e.job is not None] == ["j2"]
    unsubscribe()
    assert not bus.wants(JOB_CREATED)
    assert not bus.subscribed(JOB_CREATED)


def test_unknown_types_are_refused() -> None:
    with pytest.raises(ValidationError, match=r"job\.renamed") as refused:
        EventBus().subscribe(Events(), types={JOB_UPDATED, "job.renamed"})
    assert refused.value.field == "types"
    assert JOB_UPDATED in refused.value.accepted


def test_a_failing_listening_check_counts_as_listening(caplog: pytest.LogCaptureFixture) -> None:
    def broken() -> bool:
        raise RuntimeError("check bug")

    bus = EventBus()
    events = Events()
    bus.subscribe(events, listening=broken)
    with caplog.at_level(logging.ERROR, logger="jupyter_recall.engine"):
        bus.job(JOB_CREATED, a_job())
    assert [e.type for e in events.seen] == [JOB_CREATED]
    assert "listening() failed" in caplog.text


# --- the engine -------------------------------------------------------------------------------


async def test_nobody_listening_means_no_event_and_no_read_back(
    db: Path, script: Script, clock: ManualClock
) -> None:
    events, switch = Events(), Switch()
    async with counting(db, CallableExecutor(script), clock) as (engine, store):
        engine.subscribe(events, listening=switch)
        job = await engine.add_job(new("every 1s"), owner=OWNER)
        clock.advance(1)
        await wait_runs(engine, job.id, 1)
        assert events.seen == []
        assert store.read_backs == 0

        switch.on = True
        clock.advance(1)
        runs = await wait_runs(engine, job.id, 2)
        await eventually(lambda: bool(_settled_by(events, runs[1])))
    assert store.read_backs >= 1
    assert events.types(runs[1].id) == [RUN_STARTED, RUN_FINISHED]
    assert _settled_by(events, runs[0]) == []


async def test_a_run_finished_listener_gets_the_job_as_fired_without_a_read_back(
    db: Path, script: Script, clock: ManualClock
) -> None:
    finished = Events()
    async with counting(db, CallableExecutor(script), clock) as (engine, store):
        engine.subscribe(finished, types={RUN_FINISHED})
        job, run = await _fire_one_shot(engine, clock)
        await eventually(lambda: bool(finished.seen))
    assert store.read_backs == 0
    (event,) = finished.seen
    assert (event.type, event.run.id if event.run else None) == (RUN_FINISHED, run.id)
    # The definition, for free: the state is the one of the firing (the run still running).
    assert event.job is not None
    assert (event.job.id, event.job.action) == (job.id, job.action)
    assert (event.job.last_run_id, event.job.last_status) == (run.id, RunStatus.RUNNING)


async def test_run_finished_carries_the_settled_job_when_job_updated_is_wanted(
    db: Path, script: Script, clock: ManualClock
) -> None:
    finished, updated = Events(), Events()
    async with counting(db, CallableExecutor(script), clock) as (engine, store):
        engine.subscribe(finished, types={RUN_FINISHED})
        engine.subscribe(updated, types={JOB_UPDATED}, listening=lambda: True)
        _, run = await _fire_one_shot(engine, clock)
        await eventually(lambda: bool(finished.seen))
    assert store.read_backs >= 1
    (event,) = finished.seen
    assert event.job is not None
    assert (event.job.last_run_id, event.job.last_status) == (run.id, RunStatus.SUCCEEDED)


async def test_a_listener_that_listens_by_the_time_an_end_is_written_gets_the_settled_job(
    db: Path, script: Script, clock: ManualClock
) -> None:
    events, switch = Events(), Switch()
    async with counting(db, CallableExecutor(script), clock) as (engine, store):
        engine.subscribe(events, listening=switch)
        store.before_failing = partial(setattr, switch, "on", True)
        _, run = await _fire_one_shot(engine, clock)
        await eventually(lambda: bool(_settled_by(events, run)))
    # The end was taken while nobody listened, and written once someone did.
    assert events.types(run.id) == [RUN_FINISHED]
    assert store.before_failing is None
    assert store.read_backs == 1


async def _fire_one_shot(engine: Scheduler, clock: ManualClock) -> tuple[Job, Run]:
    """A job due in 1 s, the clock moved there, and its run once recorded."""
    job = await engine.add_job(new("in 1s"), owner=OWNER)
    clock.advance(1)
    (run,) = await wait_runs(engine, job.id, 1)
    return job, run


def _types(events: list[Event]) -> list[str]:
    return [event.type for event in events]


def _settled_by(events: Events, run: Run) -> list[Job]:
    """The job.updated events announcing the end of ``run`` (not its firing)."""
    return [
        e.job
        for e in events.seen
        if e.type == JOB_UPDATED
        and e.job is not None
        and (e.job.last_run_id, e.job.last_status) == (run.id, RunStatus.SUCCEEDED)
    ]
