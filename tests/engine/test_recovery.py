"""Crash recovery and shutdown: runs left ``running`` become ``interrupted`` unless their engine
is alive, a shutdown interrupts the runs in flight, and leases are renewed and released."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from jupyter_recall.core.clock import ManualClock
from jupyter_recall.core.model import JobStatus, Run, RunStatus, RunTrigger, new_id
from jupyter_recall.engine.jobs import build_job
from jupyter_recall.store.sqlite import SQLiteStore
from tests.engine.support import (
    OWNER,
    T0,
    Events,
    Script,
    eventually,
    new,
    running,
    runs_of,
    wait_runs,
)

pytestmark = pytest.mark.anyio


def left_running(db: Path, *, engine_id: str, when: str = "in 1s") -> tuple[str, str]:
    """A job and a run that an engine left ``running`` in the file (as after a crash)."""
    store = SQLiteStore(db)
    job = build_job(new(when), owner=OWNER, now=T0 - timedelta(seconds=5), default_tz="UTC")
    assert job.next_occurrence is not None
    run = Run(
        id=new_id(),
        job_id=job.id,
        owner=OWNER,
        scheduled_for=job.next_occurrence,
        trigger=RunTrigger.SCHEDULE,
        status=RunStatus.RUNNING,
        created_at=job.next_occurrence,
        started_at=job.next_occurrence,
        engine_id=engine_id,
    )
    with store.atomic():
        store.insert_jobs([job.evolve(next_occurrence=None, next_fire_at=None, run_count=1)])
        store.insert_runs([run])
    store.close()
    return job.id, run.id


async def test_a_run_left_running_by_a_dead_engine_is_interrupted_at_start(
    db: Path, script: Script, clock: ManualClock
) -> None:
    job_id, run_id = left_running(db, engine_id="engine-crashed")
    events = Events()
    store = SQLiteStore(db)
    from jupyter_recall.engine.executors import CallableExecutor
    from jupyter_recall.engine.scheduler import Scheduler

    engine = Scheduler(store, CallableExecutor(script), clock=clock)
    engine.subscribe(events)
    async with engine:
        run = await engine.get_run(run_id, owner=OWNER)
        assert (run.status, run.finished_at) == (RunStatus.INTERRUPTED, T0)
        assert "engine-crashed" in (run.error or "")
        job = await engine.get_job(job_id, owner=OWNER)
        assert (job.status, job.last_status) == (JobStatus.FAILED, RunStatus.INTERRUPTED)
        assert job.failure_count == 0
    store.close()
    assert events.types(run_id) == ["run.finished"]


async def test_an_engine_restarted_under_the_same_id_interrupts_its_own_leftovers(
    db: Path, script: Script, clock: ManualClock
) -> None:
    _, run_id = left_running(db, engine_id="engine-main")
    store = SQLiteStore(db)
    with store.atomic():  # its lease from before the restart has not even expired yet
        store.renew_lease("engine-main", now=T0, until=T0 + timedelta(minutes=5))
    store.close()
    async with running(db, script, clock, engine_id="engine-main") as engine:
        run = await engine.get_run(run_id, owner=OWNER)
        assert run.status is RunStatus.INTERRUPTED
        assert "restarted" in (run.error or "")


async def test_runs_of_a_live_engine_are_left_alone_until_its_lease_expires(
    db: Path, script: Script, clock: ManualClock
) -> None:
    _, run_id = left_running(db, engine_id="engine-other")
    store = SQLiteStore(db)
    with store.atomic():
        store.renew_lease("engine-other", now=T0, until=T0 + timedelta(seconds=15))
    store.close()
    async with running(db, script, clock, lease_seconds=30) as engine:
        assert (await engine.get_run(run_id, owner=OWNER)).status is RunStatus.RUNNING
        clock.advance(10)  # the lease loop renews ours and sweeps: the other one still lives
        await engine.list_jobs(owner=OWNER)
        assert (await engine.get_run(run_id, owner=OWNER)).status is RunStatus.RUNNING
        clock.advance(10)  # now its lease has expired

        async def interrupted() -> bool:
            run = await engine.get_run(run_id, owner=OWNER)
            return run.status is RunStatus.INTERRUPTED

        await eventually(interrupted)
        run = await engine.get_run(run_id, owner=OWNER)
        assert "stopped renewing its lease" in (run.error or "")


async def test_shutdown_interrupts_the_runs_in_flight(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        once = await engine.add_job(new("in 1s", "block"), owner=OWNER)
        recurring = await engine.add_job(new("every 1s", "block"), owner=OWNER)
        clock.advance(1)
        await eventually(lambda: len(script.blocked) == 2)
    assert script.active == 0
    async with running(db, script, clock) as engine:
        (run,) = await runs_of(engine, once.id)
        assert run.status is RunStatus.INTERRUPTED
        assert run.error == "interrupted: the engine shut down while the run was in flight"
        assert run.finished_at == T0 + timedelta(seconds=1)
        job = await engine.get_job(once.id, owner=OWNER)
        assert job.status is JobStatus.FAILED
        still = await engine.get_job(recurring.id, owner=OWNER)
        assert (still.status, still.last_status) == (JobStatus.ACTIVE, RunStatus.INTERRUPTED)


async def test_the_lease_is_released_at_shutdown(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock, engine_id="engine-a"):
        store = SQLiteStore(db)
        rows = store.db.execute("SELECT engine_id FROM leases").fetchall()
        assert rows == [("engine-a",)]
    assert store.db.execute("SELECT engine_id FROM leases").fetchall() == []
    store.close()


async def test_a_restart_does_not_fire_an_occurrence_twice(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        job = await engine.add_job(new("every 10s"), owner=OWNER)
        clock.advance(10)
        await wait_runs(engine, job.id, 1)
    async with running(db, script, clock) as engine:
        clock.advance(10)
        runs = await wait_runs(engine, job.id, 2)
        assert [r.scheduled_for for r in runs] == [T0 + timedelta(seconds=s) for s in (10, 20)]
    assert len(script.calls) == 2
