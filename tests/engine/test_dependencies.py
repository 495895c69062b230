"""Dependencies through the real engine on a real SQLite file: a job fired by another job's
runs (``after``): a chain fires in order, once per upstream run, across restarts and with two
engines on one file; cycles and unknown upstreams are refused; pause, max_runs, coalesce and
deletion of the upstream behave as docs/engine.md says."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from jupyter_recall.core.clock import ManualClock, SystemClock
from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.model import Job, JobStatus, Overlap, Run, RunStatus, RunTrigger, new_id
from jupyter_recall.core.retries import Retries
from jupyter_recall.engine.executors import CallableExecutor
from jupyter_recall.engine.scheduler import Scheduler
from jupyter_recall.store.sqlite import SQLiteStore
from jupyter_recall.store.urls import open_store
from tests.engine.support import OWNER, Script, eventually, new, running, runs_of, wait_runs

pytestmark = pytest.mark.anyio


async def upstream_and_dependent(
    engine: Scheduler, verb: str = "succeeds", **policies: Any
) -> tuple[Job, Job]:
    """An hourly job A and a job B after it."""
    a = await engine.add_job(new("every 1h"), owner=OWNER)
    b = await engine.add_job(new(f"after {a.id} {verb}", **policies), owner=OWNER)
    return a, b


async def run_upstream(engine: Scheduler, clock: ManualClock, a: Job, times: int) -> None:
    """Run A by hand ``times`` times, a second apart, each to its end."""
    done = len(await runs_of(engine, a.id))
    for count in range(done + 1, done + times + 1):
        clock.advance(1)
        await engine.trigger_job(a.id, owner=OWNER)
        await wait_runs(engine, a.id, count)


async def test_a_chain_fires_in_order_once_per_upstream_run(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        a = await engine.add_job(new("every 1h", "ok"), owner=OWNER)
        b = await engine.add_job(new(f"after {a.id} succeeds", "ok"), owner=OWNER)
        c = await engine.add_job(new(f"after {b.id} finishes", "ok"), owner=OWNER)
        assert b.schedule.describe() == f"after {a.id} succeeds"
        assert b.next_fire_at is None
        assert b.status is JobStatus.ACTIVE
        await engine.trigger_job(a.id, owner=OWNER)
        (c_run,) = await wait_runs(engine, c.id, 1)
        (b_run,) = await runs_of(engine, b.id)
        (a_run,) = await runs_of(engine, a.id)
        assert a_run.finished_at is not None
        assert b_run.finished_at is not None
        assert b_run.trigger is RunTrigger.AFTER
        assert b_run.status is RunStatus.SUCCEEDED
        assert b_run.scheduled_for == a_run.finished_at
        assert c_run.scheduled_for == b_run.finished_at
        assert [call.job_id for call in script.calls] == [a.id, b.id, c.id]
        clock.advance(1)
        await engine.trigger_job(a.id, owner=OWNER)
        await wait_runs(engine, c.id, 2)
        assert len(await runs_of(engine, b.id)) == 2
        job_b = await engine.get_job(b.id, owner=OWNER)
        assert job_b.status is JobStatus.ACTIVE
        assert job_b.run_count == 2


async def test_outcomes_choose_what_fires(db: Path, script: Script, clock: ManualClock) -> None:
    async with running(db, script, clock) as engine:
        failing = await engine.add_job(new("every 1h", "fail"), owner=OWNER)
        on_success = await engine.add_job(new(f"after {failing.id} succeeds"), owner=OWNER)
        on_failure = await engine.add_job(new(f"after {failing.id} fails"), owner=OWNER)
        await engine.trigger_job(failing.id, owner=OWNER)
        await wait_runs(engine, on_failure.id, 1)
        # The same end was handled for both dependents in one pass: none is left for the other.
        await eventually(lambda: len(script.calls) == 2)
        assert await runs_of(engine, on_success.id) == []


async def test_an_upstream_run_ended_while_down_fires_once_at_start(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        a, b = await upstream_and_dependent(engine)
    # A's run ends while no engine runs: written as a process that crashed right after
    # committing the end (before handling its dependents) leaves it.
    clock.advance(60)
    ended = Run(
        id=new_id(),
        job_id=a.id,
        owner=OWNER,
        scheduled_for=clock.now(),
        trigger=RunTrigger.MANUAL,
        status=RunStatus.SUCCEEDED,
        created_at=clock.now(),
        started_at=clock.now(),
        finished_at=clock.now(),
    )
    store = SQLiteStore(db)
    try:
        store.insert_runs([ended])
    finally:
        store.close()
    for _ in range(2):  # two starts: the second finds nothing left
        async with running(db, script, clock) as engine:
            (b_run,) = await wait_runs(engine, b.id, 1)
            assert b_run.scheduled_for == ended.finished_at
            await anyio.sleep(0.2)
            assert len(await runs_of(engine, b.id)) == 1
    assert len(script.executed(b.id)) == 1


async def test_a_run_ended_at_shutdown_fires_at_the_next_start(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        a = await engine.add_job(new("every 1h", "block"), owner=OWNER)
        b = await engine.add_job(new(f"after {a.id} finishes"), owner=OWNER)
        await engine.trigger_job(a.id, owner=OWNER)
        await eventually(lambda: len(script.blocked) == 1)
    # A's run ended interrupted as the engine shut down; B fires on the next start.
    async with running(db, script, clock) as engine:
        (a_run,) = await runs_of(engine, a.id)
        assert a_run.status is RunStatus.INTERRUPTED
        (b_run,) = await wait_runs(engine, b.id, 1)
        assert b_run.scheduled_for == a_run.finished_at


async def test_two_engines_on_one_file_fire_the_downstream_once(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as first, running(db, script, clock) as second:
        a = await first.add_job(new("every 1h"), owner=OWNER)
        b = await first.add_job(new(f"after {a.id} succeeds"), owner=OWNER)
        for _ in range(3):
            clock.advance(1)
            await first.trigger_job(a.id, owner=OWNER)
            await wait_runs(first, a.id, len(script.executed(a.id)) + 1)
            clock.advance(1)
            await second.trigger_job(a.id, owner=OWNER)
            await wait_runs(first, a.id, len(script.executed(a.id)) + 1)
        await wait_runs(first, a.id, 6)
        # Both engines look at B's dependency for every end they heard, and again at once.
        for engine in (first, second):
            engine._dependencies.upstream_changed(a.id)
        await wait_runs(first, b.id, 6)
        await anyio.sleep(0.3)
        runs = await runs_of(first, b.id)
        assert len(runs) == 6
        assert len({run.scheduled_for for run in runs}) == 6


async def test_cycles_and_unknown_upstreams_are_refused(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        a, b = await upstream_and_dependent(engine)
        c = await engine.add_job(new(f"after {b.id} succeeds"), owner=OWNER)
        with pytest.raises(ValidationError) as cycle:
            await engine.update_job(a.id, owner=OWNER, when=f"after {c.id} fails")
        assert cycle.value.field == "after.job"
        assert f"{a.id} -> {c.id} -> {b.id} -> {a.id}" in cycle.value.message
        with pytest.raises(ValidationError) as itself:
            await engine.update_job(a.id, owner=OWNER, when=f"after {a.id} fails")
        assert itself.value.field == "after.job"
        with pytest.raises(ValidationError) as unknown:
            await engine.add_job(new("after 000000000000 succeeds"), owner=OWNER)
        assert unknown.value.field == "after.job"
        with pytest.raises(ValidationError) as foreign:
            await engine.add_job(new(f"after {a.id} succeeds"), owner="bob")
        assert foreign.value.field == "after.job"
        assert (await engine.get_job(a.id, owner=OWNER)).schedule.kind == "interval"


async def test_a_new_job_after_a_cancelled_one_is_refused(
    db: Path, script: Script, clock: ManualClock
) -> None:
    """A cancelled job fires nothing more, not even by hand: a job after it would wait for
    ever. One already waiting keeps its link through an edit; a paused upstream is fine."""
    async with running(db, script, clock) as engine:
        a, b = await upstream_and_dependent(engine)
        paused = await engine.add_job(new("every 1h"), owner=OWNER)
        await engine.pause_job(paused.id, owner=OWNER)
        await engine.add_job(new(f"after {paused.id} succeeds"), owner=OWNER)
        c = await engine.add_job(new(f"after {a.id} succeeds"), owner=OWNER)
        await engine.cancel_job(a.id, owner=OWNER)
        edited = await engine.update_job(c.id, owner=OWNER, when=f"after {a.id} fails")
        assert edited.when == f"after {a.id} fails"
        with pytest.raises(ValidationError) as refused:
            await engine.add_job(new(f"after {a.id} succeeds"), owner=OWNER)
        assert refused.value.field == "after.job"
        assert f"job {a.id} is cancelled" in refused.value.message
        other = await engine.add_job(new("every 1h"), owner=OWNER)
        moved = await engine.update_job(b.id, owner=OWNER, when=f"after {other.id} fails")
        with pytest.raises(ValidationError, match="is cancelled"):
            await engine.update_job(moved.id, owner=OWNER, when=f"after {a.id} succeeds")


async def test_deleting_the_upstream_cancels_its_dependents(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        a, b = await upstream_and_dependent(engine)
        await engine.delete_job(a.id, owner=OWNER)
        job = await engine.get_job(b.id, owner=OWNER)
        assert job.status is JobStatus.CANCELLED
        assert job.last_error is not None
        assert a.id in job.last_error


async def test_pause_passes_over_and_max_runs_completes(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        a, b = await upstream_and_dependent(engine, max_runs=2)
        await engine.pause_job(b.id, owner=OWNER)
        await run_upstream(engine, clock, a, 1)
        await anyio.sleep(0.2)
        assert await runs_of(engine, b.id) == []
        await engine.resume_job(b.id, owner=OWNER)  # no catch-up: that end is passed over
        await anyio.sleep(0.2)
        assert await runs_of(engine, b.id) == []
        await run_upstream(engine, clock, a, 3)
        await wait_runs(engine, b.id, 2)
        await anyio.sleep(0.2)
        assert len(await runs_of(engine, b.id)) == 2
        job = await engine.get_job(b.id, owner=OWNER)
        assert job.status is JobStatus.COMPLETED
        assert job.run_count == 2


async def test_resume_with_catch_up_coalesces_the_ends_of_the_pause(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        a, b = await upstream_and_dependent(engine)
        await engine.pause_job(b.id, owner=OWNER)
        await run_upstream(engine, clock, a, 3)
        await engine.resume_job(b.id, owner=OWNER, catch_up=True)
        runs = await wait_runs(engine, b.id, 3)
        assert [run.status for run in runs] == [
            RunStatus.MISSED,
            RunStatus.MISSED,
            RunStatus.SUCCEEDED,
        ]


async def test_recalls_cannot_wait_for_a_job(db: Path, script: Script, clock: ManualClock) -> None:
    from dataclasses import replace

    from jupyter_recall.core.model import JobKind

    async with running(db, script, clock) as engine:
        a = await engine.add_job(new("every 1h"), owner=OWNER)
        recall = replace(new(f"after {a.id} succeeds"), kind=JobKind.RECALL, session="nb.ipynb")
        with pytest.raises(ValidationError) as refused:
            await engine.add_job(recall, owner=OWNER)
        assert refused.value.field == "after"


async def ended_runs(engine: Scheduler, job_id: str, count: int) -> None:
    """Wait (up to 30 s: a database server on a loaded machine) for ``count`` ended runs."""

    async def enough() -> bool:
        runs = await runs_of(engine, job_id)
        return sum(run.status.is_final for run in runs) >= count

    await eventually(enough, timeout=30)


async def test_two_engines_on_postgresql_fire_the_downstream_once_per_upstream_run(
    postgres_db_url: str, script: Script
) -> None:
    stores = [open_store(postgres_db_url), open_store(postgres_db_url)]
    first, second = (
        Scheduler(store, CallableExecutor(script), clock=SystemClock()) for store in stores
    )
    try:
        async with first, second:
            # overlap=allow: a B run still going when the next A run ends is not skipped.
            a, b = await upstream_and_dependent(first, "finishes", overlap=Overlap.ALLOW)
            for number, engine in enumerate((first, second, first, second), start=1):
                await engine.trigger_job(a.id, owner=OWNER)
                await ended_runs(first, a.id, number)
            # Each engine fired B for the runs it ended; now both look again at every end.
            for engine in (first, second):
                engine._dependencies.upstream_changed(a.id)
            await ended_runs(first, b.id, 4)
            await anyio.sleep(0.5)
            runs = await runs_of(second, b.id)
            assert [run.status for run in runs] == [RunStatus.SUCCEEDED] * 4
            assert len(script.executed(b.id)) == 4
    finally:
        for store in stores:
            store.close()


async def test_only_the_last_attempt_of_a_retried_occurrence_fires(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        a = await engine.add_job(
            new("every 1h", "fail", retries=Retries(max=2, backoff=0.0)), owner=OWNER
        )
        b = await engine.add_job(new(f"after {a.id} fails"), owner=OWNER)
        await engine.trigger_job(a.id, owner=OWNER)
        attempts = await wait_runs(engine, a.id, 3)
        assert sorted(run.attempt for run in attempts) == [1, 2, 3]
        (b_run,) = await wait_runs(engine, b.id, 1)
        last = max(attempts, key=lambda run: run.attempt)
        assert b_run.scheduled_for == last.finished_at
        await anyio.sleep(0.3)
        assert len(await runs_of(engine, b.id)) == 1
