"""Pause after failures and retention of runs through the real engine, on a manual clock and a
real SQLite file: a job paused after N failed occurrences with its reason, the count reset by a
success and by resuming, a retried occurrence counted once; retention by count and by age under
a burst of runs, dry runs, and pruned occurrences never firing again after a restart."""

from __future__ import annotations

import contextlib
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from jupyter_recall.core.clock import ManualClock
from jupyter_recall.core.errors import StoreError
from jupyter_recall.core.model import Job, JobStatus, Policies, Run, new_id
from jupyter_recall.core.records import NotebookAction
from jupyter_recall.core.retries import Retries
from jupyter_recall.engine.executors import OutputSink, RunOutcome
from jupyter_recall.engine.jobs import NewJob
from jupyter_recall.engine.retention import DeletedRuns
from jupyter_recall.engine.scheduler import Scheduler
from jupyter_recall.store.base import RunFilter
from jupyter_recall.store.sqlite import SQLiteStore
from tests.engine.support import OWNER, T0, Script, eventually, new, running, runs_of, wait_runs

pytestmark = pytest.mark.anyio


class Switchable(Script):
    """``switch``: fails while ``failing`` is true; other messages as ``Script``."""

    failing = True

    async def _behave(self, message: str, run: Run, output: OutputSink) -> RunOutcome | None:
        if message == "switch":
            if self.failing:
                raise RuntimeError(f"attempt {run.attempt} broke")
            return None
        return await super()._behave(message, run, output)


async def job_now(engine: Scheduler, job_id: str) -> Job:
    return await engine.get_job(job_id, owner=OWNER)


async def test_a_job_pauses_after_n_consecutive_failed_occurrences_with_its_reason(
    db: Path, clock: ManualClock
) -> None:
    script = Switchable()
    paused: list[Job] = []
    async with running(db, script, clock) as engine:
        engine.on_paused_for_failures(paused.append)
        job = await engine.add_job(
            new("every 1 minute", "switch", pause_after_failures=2), owner=OWNER
        )
        clock.advance(60)
        await wait_runs(engine, job.id, 1)
        await eventually(lambda: _streak(engine, job.id, 1))
        assert (await job_now(engine, job.id)).status is JobStatus.ACTIVE
        clock.advance(60)
        await wait_runs(engine, job.id, 2)
        await eventually(lambda: _status(engine, job.id, JobStatus.PAUSED))
        stopped = await job_now(engine, job.id)
        assert stopped.failure_streak == 2
        assert stopped.paused_reason == (
            "paused after 2 consecutive failed occurrences; "
            "last error: RuntimeError: attempt 1 broke"
        )
        assert [item.id for item in paused] == [job.id]
        # Paused: nothing more fires (now +270, between two occurrences).
        clock.advance(150)
        assert len(script.executed(job.id)) == 2
        # Resuming resets the count and the reason.
        resumed = await engine.resume_job(job.id, owner=OWNER)
        assert (resumed.status, resumed.failure_streak, resumed.paused_reason) == (
            JobStatus.ACTIVE,
            0,
            None,
        )
        clock.advance(30)  # +300: the first occurrence after resuming
        await wait_runs(engine, job.id, 3)
        await eventually(lambda: _streak(engine, job.id, 1))
        assert (await job_now(engine, job.id)).status is JobStatus.ACTIVE


async def test_a_success_resets_the_count(db: Path, clock: ManualClock) -> None:
    script = Switchable()
    async with running(db, script, clock) as engine:
        job = await engine.add_job(
            new("every 1 minute", "switch", pause_after_failures=2), owner=OWNER
        )
        clock.advance(60)
        await wait_runs(engine, job.id, 1)
        await eventually(lambda: _streak(engine, job.id, 1))
        script.failing = False
        clock.advance(60)
        await wait_runs(engine, job.id, 2)
        await eventually(lambda: _streak(engine, job.id, 0))
        script.failing = True
        clock.advance(60)
        await wait_runs(engine, job.id, 3)
        await eventually(lambda: _streak(engine, job.id, 1))
        assert (await job_now(engine, job.id)).status is JobStatus.ACTIVE


async def test_a_retried_occurrence_counts_once_when_no_retry_remains(
    db: Path, clock: ManualClock
) -> None:
    script = Switchable()
    retries = Retries(max=1, backoff=1)
    async with running(db, script, clock) as engine:
        job = await engine.add_job(
            new("every 1 hour", "switch", pause_after_failures=2, retries=retries), owner=OWNER
        )
        clock.advance(3600)
        await eventually(lambda: len(script.executed(job.id)) == 1)
        await eventually(lambda: _any_pending_retry(engine, job.id))
        # The first attempt failed, a retry is pending: not yet a failed occurrence.
        assert (await job_now(engine, job.id)).failure_streak == 0
        clock.advance(1)
        await wait_runs(engine, job.id, 2)
        await eventually(lambda: _streak(engine, job.id, 1))
        assert (await job_now(engine, job.id)).status is JobStatus.ACTIVE


async def test_keep_runs_keeps_exactly_the_newest_under_a_burst(
    db: Path, clock: ManualClock
) -> None:
    async with running(db, Script(), clock, prune_interval=3600) as engine:
        kept = await engine.add_job(new("every 1 second", keep_runs=3), owner=OWNER)
        other = await engine.add_job(new("every 1 second"), owner=OWNER)
        for _ in range(12):
            clock.advance(1)
            await eventually(lambda: _count_runs(engine, kept.id, at_least=1))
        await wait_runs(engine, other.id, 12)
        before = await runs_of(engine, kept.id)
        assert len(before) >= 12
        counted = (await job_now(engine, kept.id)).run_count
        dry = await engine.prune_runs(owner=OWNER, dry_run=True)
        assert dry == {kept.id: len(before) - 3}
        assert len(await runs_of(engine, kept.id)) == len(before)
        done = await engine.prune_runs(owner=OWNER)
        assert done == dry
        after = await runs_of(engine, kept.id)
        assert [run.id for run in after] == [run.id for run in before[-3:]]
        # Another job without retention keeps all of its runs; counts are untouched.
        assert len(await runs_of(engine, other.id)) >= 12
        assert (await job_now(engine, kept.id)).run_count == counted


async def test_keep_runs_for_lets_runs_go_once_past_their_age(db: Path, clock: ManualClock) -> None:
    async with running(db, Script(), clock, keep_runs_for=120, prune_interval=3600) as engine:
        job = await engine.add_job(new("every 1 minute"), owner=OWNER)
        for count in range(1, 4):
            clock.advance(60)
            await wait_runs(engine, job.id, count)
        # Runs ended at +60, +120, +180; now is +180: none is older than 120 s.
        assert await engine.prune_runs(owner=OWNER) == {}
        clock.advance(30)  # +210: only the run of +60 ended more than 120 s ago
        assert await engine.prune_runs(owner=OWNER, dry_run=True) == {job.id: 1}
        assert await engine.prune_runs(owner=OWNER) == {job.id: 1}
        remaining = await runs_of(engine, job.id)
        assert [run.finished_at for run in remaining] == [
            T0 + timedelta(seconds=s) for s in (120, 180)
        ]


async def test_the_background_sweep_prunes_and_never_a_running_run(
    db: Path, clock: ManualClock
) -> None:
    script = Script()
    async with running(db, script, clock, keep_runs=1, prune_interval=30) as engine:
        job = await engine.add_job(new("in 1 minute", "block"), owner=OWNER)
        done = await engine.add_job(new("every 1 minute"), owner=OWNER)
        clock.advance(60)
        await eventually(lambda: len(script.blocked) == 1)
        for count in range(2, 4):
            clock.advance(60)
            await eventually(lambda n=count: len(script.executed(done.id)) == n)
        # The background sweep (every 30 s of the clock) leaves one run of the other job.
        clock.advance(30)
        await eventually(lambda: _count_runs(engine, done.id, exactly=1))
        assert len(await runs_of(engine, job.id)) == 1  # the running one stays
        script.release()
        await wait_runs(engine, job.id, 1)


async def test_the_deleted_runs_of_notebook_jobs_are_told_by_id(
    db: Path, clock: ManualClock
) -> None:
    # Their executed copies go with them (``ExecutedCopies``); runs of other actions leave
    # nothing outside the store, and nobody is told of them.
    told: list[DeletedRuns] = []
    notebook = NewJob("every 1 second", NotebookAction("nb.ipynb"), policies=Policies(keep_runs=1))
    async with running(db, Script(), clock, prune_interval=3600) as engine:
        engine.on_runs_deleted(told.append)
        report = await engine.add_job(notebook, owner=OWNER)
        note = await engine.add_job(new("every 1 second", keep_runs=1), owner=OWNER)
        for count in range(1, 4):
            clock.advance(1)
            await wait_runs(engine, report.id, count)
            await wait_runs(engine, note.id, count)
        before = [run.id for run in await runs_of(engine, report.id)]
        assert await engine.prune_runs(owner=OWNER) == {report.id: 2, note.id: 2}
        assert [(d.job.id, sorted(d.run_ids)) for d in told] == [(report.id, sorted(before[:2]))]
        told.clear()
        await engine.delete_job(report.id, owner=OWNER)
        await engine.delete_job(note.id, owner=OWNER)
        assert [(d.job.id, d.run_ids) for d in told] == [(report.id, (before[2],))]


async def test_a_run_recorded_by_another_server_while_a_job_is_deleted_is_told_too(
    db: Path, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The runs that leave files are read in the deletion's own transaction: another server
    # (a second connection to the file) cannot record a run between that read and the
    # deletion, whose executed copy would then be left behind untold.
    told: list[DeletedRuns] = []
    notebook = NewJob("every 1 second", NotebookAction("nb.ipynb"))
    other = SQLiteStore(db, busy_timeout=0.05)
    recorded: list[str] = []
    async with running(db, Script(), clock, prune_interval=3600) as engine:
        engine.on_runs_deleted(told.append)
        job = await engine.add_job(notebook, owner=OWNER)
        clock.advance(1)
        await wait_runs(engine, job.id, 1)
        before = [run.id for run in await runs_of(engine, job.id)]
        read_runs = engine.store.list_runs

        def read_then_another_server_records(*, owner: str | None, where: RunFilter) -> list[Run]:
            runs = read_runs(owner=owner, where=where)
            latest = runs[-1]
            interloper = replace(
                latest, id=new_id(), scheduled_for=latest.scheduled_for + timedelta(hours=1)
            )
            with contextlib.suppress(StoreError):  # "database is locked"
                other.insert_runs([interloper])
                recorded.append(interloper.id)
            return runs

        monkeypatch.setattr(engine.store, "list_runs", read_then_another_server_records)
        await engine.delete_job(job.id, owner=OWNER)
    other.close()
    assert [(d.job.id, set(d.run_ids)) for d in told] == [(job.id, {*before, *recorded})]
    assert recorded == []


async def test_pruned_occurrences_never_fire_again_after_a_restart(
    db: Path, clock: ManualClock
) -> None:
    script = Script()
    async with running(db, script, clock, keep_runs=0, prune_interval=3600) as engine:
        job = await engine.add_job(new("every 1 minute", max_runs=3), owner=OWNER)
        for count in range(1, 3):
            clock.advance(60)
            await wait_runs(engine, job.id, count)
        assert await engine.prune_runs(owner=OWNER) == {job.id: 2}
        assert await runs_of(engine, job.id) == []
    async with running(db, script, clock, keep_runs=0, prune_interval=3600) as engine:
        clock.advance(60)
        await eventually(lambda: len(script.executed(job.id)) == 3)
        await eventually(lambda: _status(engine, job.id, JobStatus.COMPLETED))
        clock.advance(600)
        restarted = await job_now(engine, job.id)
        assert restarted.run_count == 3
    # Three occurrences fired once each, across the prune and the restart.
    fired = [run.scheduled_for for run in script.executed(job.id)]
    assert len(fired) == len(set(fired)) == 3


async def _streak(engine: Scheduler, job_id: str, count: int) -> bool:
    return (await job_now(engine, job_id)).failure_streak == count


async def _status(engine: Scheduler, job_id: str, status: JobStatus) -> bool:
    return (await job_now(engine, job_id)).status is status


async def _any_pending_retry(engine: Scheduler, job_id: str) -> bool:
    return any(run.retry_at is not None for run in await runs_of(engine, job_id))


async def _count_runs(
    engine: Scheduler, job_id: str, *, at_least: int | None = None, exactly: int | None = None
) -> bool:
    runs = [run for run in await runs_of(engine, job_id) if run.status.is_final]
    if exactly is not None:
        return len(runs) == exactly
    return len(runs) >= (at_least or 0)
