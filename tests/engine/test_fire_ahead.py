"""Firing ahead: a job due within ``fire_ahead`` is fired by the pass before its instant and
executes at its instant; a change to the job before then undoes the claim, as if it had never
been fired (``docs/engine.md``, "Firing ahead")."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from jupyter_recall.core.clock import ManualClock
from jupyter_recall.core.model import Job, JobStatus, RunStatus
from jupyter_recall.engine.executors import CallableExecutor
from jupyter_recall.engine.scheduler import Scheduler
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
    shape,
)

pytestmark = pytest.mark.anyio

DUE = T0 + timedelta(seconds=10)
AHEAD = 0.5


async def claimed(engine: Scheduler, job_id: str) -> None:
    """Wait until the pass has fired the job ahead (its run is recorded, not executed)."""

    async def recorded() -> bool:
        return len(await runs_of(engine, job_id)) == 1

    await eventually(recorded)


async def claim(engine: Scheduler, clock: ManualClock, when: str, *, at: float) -> Job:
    """A job, and the clock moved to ``at`` seconds, where a pass has fired it ahead."""
    job = await engine.add_job(new(when), owner=OWNER)
    clock.advance(at)
    await claimed(engine, job.id)
    return job


async def nothing_ran_after(
    engine: Scheduler, clock: ManualClock, script: Script, seconds: float
) -> None:
    clock.advance(seconds)
    await engine.list_jobs(owner=OWNER)  # a round trip through the store thread
    assert script.calls == []


async def test_a_run_fired_ahead_executes_at_its_instant(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock, fire_ahead=AHEAD) as engine:
        job = await claim(engine, clock, "in 10s", at=9.6)
        (run,) = await runs_of(engine, job.id)
        assert (run.status, run.started_at, run.scheduled_for) == (RunStatus.RUNNING, None, DUE)
        advanced = await engine.get_job(job.id, owner=OWNER)
        assert (advanced.next_fire_at, advanced.run_count, advanced.last_run_at) == (None, 1, DUE)
        await nothing_ran_after(engine, clock, script, 0.3999)
        clock.advance(0.0001)
        await eventually(lambda: len(script.calls) == 1)
        assert script.calls[0].run.started_at == DUE


async def test_without_fire_ahead_nothing_is_recorded_before_the_instant(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock, fire_ahead=0) as engine:
        job = await engine.add_job(new("in 10s"), owner=OWNER)
        clock.advance(9.999)
        await engine.list_jobs(owner=OWNER)
        assert await runs_of(engine, job.id) == []
        clock.advance(0.001)
        await eventually(lambda: len(script.calls) == 1)


async def test_pausing_before_the_instant_undoes_the_claim(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock, fire_ahead=AHEAD) as engine:
        job = await claim(engine, clock, "in 10s", at=9.8)
        paused = await engine.pause_job(job.id, owner=OWNER)
        # Paused, it has no next fire; its occurrence stays for resuming (docs/rest.md).
        assert (paused.status, paused.next_occurrence, paused.next_fire_at, paused.run_count) == (
            JobStatus.PAUSED,
            DUE,
            None,
            0,
        )
        assert paused.last_run_id is None
        assert await runs_of(engine, job.id) == []
        await nothing_ran_after(engine, clock, script, 1)
        await engine.resume_job(job.id, owner=OWNER, catch_up=True)
        await eventually(lambda: len(script.calls) == 1)
        assert script.calls[0].run.scheduled_for == DUE


async def test_cancelling_before_the_instant_runs_nothing(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock, fire_ahead=AHEAD) as engine:
        job = await claim(engine, clock, "every 10s", at=9.7)
        cancelled = await engine.cancel_job(job.id, owner=OWNER)
        assert cancelled.status is JobStatus.CANCELLED
        await nothing_ran_after(engine, clock, script, 1)
        assert await runs_of(engine, job.id) == []


async def test_skipping_before_the_instant_skips_the_claimed_occurrence(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock, fire_ahead=AHEAD) as engine:
        job = await claim(engine, clock, "every 10s", at=9.7)
        skipped = await engine.skip_job(job.id, owner=OWNER)
        assert skipped.next_occurrence == DUE + timedelta(seconds=10)
        (run,) = await runs_of(engine, job.id)
        assert (run.status, run.scheduled_for) == (RunStatus.SKIPPED, DUE)
        await nothing_ran_after(engine, clock, script, 0.5)


async def test_an_edit_before_the_instant_applies_to_the_claimed_occurrence(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock, fire_ahead=AHEAD) as engine:
        job = await claim(engine, clock, "in 10s", at=9.7)
        edited = await engine.update_job(job.id, owner=OWNER, when="in 1m")
        assert edited.next_fire_at == T0 + timedelta(seconds=9.7 + 60)
        assert await runs_of(engine, job.id) == []
        await nothing_ran_after(engine, clock, script, 1)


async def test_a_job_with_a_run_in_flight_is_decided_at_its_instant(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock, fire_ahead=AHEAD) as engine:
        job = await engine.add_job(new("every 10s", "block"), owner=OWNER)
        clock.advance(10)
        await eventually(lambda: len(script.blocked) == 1)
        clock.advance(9.8)
        await engine.list_jobs(owner=OWNER)
        assert len(await runs_of(engine, job.id)) == 1  # not fired ahead: its run still runs
        script.release()
        await eventually(lambda: script.active == 0)
        clock.advance(0.2)
        await eventually(lambda: len(script.blocked) == 1)
        runs = await runs_of(engine, job.id)
        assert shape(runs) == [("succeeded", "schedule"), ("running", "schedule")]
        script.release()


async def test_a_claim_withdrawn_at_shutdown_is_fired_by_the_next_engine(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock, fire_ahead=AHEAD) as engine:
        job = await claim(engine, clock, "in 10s", at=9.8)
    store = SQLiteStore(db)
    try:
        assert store.list_runs(owner=OWNER) == []
        async with Scheduler(
            store, CallableExecutor(script), clock=clock, fire_ahead=AHEAD
        ) as again:
            clock.advance(0.2)
            await eventually(lambda: len(script.calls) == 1)
            assert script.calls[0].run.scheduled_for == DUE
            await eventually(lambda: script.active == 0)
            (run,) = await runs_of(again, job.id)
            assert run.engine_id == again.engine_id
    finally:
        store.close()


async def test_fire_ahead_must_not_be_negative(db: Path, script: Script) -> None:
    store = SQLiteStore(db)
    try:
        with pytest.raises(ValueError, match="fire_ahead must be >= 0 seconds, got -1"):
            Scheduler(store, CallableExecutor(script), fire_ahead=-1)
    finally:
        store.close()


async def test_runs_fired_ahead_start_at_most_a_millisecond_apart(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock, fire_ahead=AHEAD) as engine:
        first = await engine.add_job(new(DUE.isoformat()), owner=OWNER)
        second_at = DUE + timedelta(microseconds=500)
        second = await engine.add_job(new(second_at.isoformat()), owner=OWNER)
        clock.advance(9.8)
        await claimed(engine, first.id)
        await claimed(engine, second.id)
        clock.set(DUE)
        await eventually(lambda: len(script.calls) == 1)
        clock.set(second_at)
        await engine.list_jobs(owner=OWNER)
        assert len(script.calls) == 1  # released a millisecond after the previous release
        clock.set(DUE + timedelta(milliseconds=1))
        await eventually(lambda: len(script.calls) == 2)
        assert [call.job_id for call in script.calls] == [first.id, second.id]
        assert script.calls[1].run.started_at == DUE + timedelta(milliseconds=1)


async def test_a_run_fired_ahead_for_a_job_its_failures_paused_is_undone(
    db: Path, script: Script, clock: ManualClock
) -> None:
    """A manual run fails while the next occurrence waits fired ahead; the failure pauses the
    job (``pause_after_failures``): the claim is withdrawn and undone, nothing more executes,
    the job is as if the occurrence had not been fired, and resuming with catch-up fires it."""
    paused: list[Job] = []
    updates = Events()
    async with running(db, script, clock, fire_ahead=AHEAD) as engine:
        engine.on_paused_for_failures(paused.append)
        job = await engine.add_job(new("every 10s", "fail", pause_after_failures=1), owner=OWNER)
        clock.advance(9.7)
        await claimed(engine, job.id)
        engine.subscribe(updates, types={"job.updated"})
        manual = await engine.trigger_job(job.id, owner=OWNER)

        async def undone() -> bool:
            return [run.id for run in await runs_of(engine, job.id)] == [manual.id]

        await eventually(undone)
        assert [item.id for item in paused] == [job.id]
        held = await engine.get_job(job.id, owner=OWNER)
        assert (held.status, held.next_occurrence, held.next_fire_at, held.run_count) == (
            JobStatus.PAUSED,
            DUE,
            DUE,
            0,
        )
        assert (held.last_run_id, held.last_status) == (manual.id, RunStatus.FAILED)
        assert held.paused_reason is not None
        # Its instant passes: only the manual run executed.
        clock.advance(1)
        await engine.list_jobs(owner=OWNER)
        assert [call.run.id for call in script.calls] == [manual.id]
        # The job's state once undone went out too (a view shows the occurrence still due).
        await eventually(lambda: _announced(updates, job.id, DUE))
        await engine.resume_job(job.id, owner=OWNER, catch_up=True)
        await eventually(lambda: len(script.calls) == 2)
        assert script.calls[1].run.scheduled_for == DUE


def _announced(updates: Events, job_id: str, next_fire_at: datetime) -> bool:
    last = [event.job for event in updates.seen if event.job is not None and event.job.id == job_id]
    return bool(last) and last[-1].next_fire_at == next_fire_at
