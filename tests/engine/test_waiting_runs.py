"""A run waiting for its turn (``overlap=buffer_one``) when its job changes, through the real
engine on a manual clock and a real SQLite file: paused by hand or after its failures, edited
in what it runs or when, cancelled, it does not execute and is recorded ``skipped`` with why;
renamed, it executes as fired."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_recall.core.clock import ManualClock
from jupyter_recall.core.model import Job, JobStatus, Overlap, Run, RunStatus
from jupyter_recall.core.records import NotificationAction
from jupyter_recall.engine.executors import OutputSink, RunOutcome
from jupyter_recall.engine.scheduler import Scheduler
from tests.engine.support import OWNER, Script, eventually, new, running, wait_runs

pytestmark = pytest.mark.anyio


class BlockThenFail(Script):
    """``block fail``: blocks like ``block``, then fails once released."""

    async def _behave(self, message: str, run: Run, output: OutputSink) -> RunOutcome | None:
        if message == "block fail":
            await super()._behave("block", run, output)
            raise RuntimeError("broke after blocking")
        return await super()._behave(message, run, output)


async def one_queued(engine: Scheduler, script: Script, clock: ManualClock, message: str) -> Job:
    """A ``buffer_one`` job every 10 s whose first run executes and second waits its turn."""
    job = await engine.add_job(
        new("every 10s", message, overlap=Overlap.BUFFER_ONE, pause_after_failures=1),
        owner=OWNER,
    )
    clock.advance(10)
    await eventually(lambda: len(script.blocked) == 1)
    clock.advance(10)
    runs = await wait_runs(engine, job.id, 2, final=False)
    assert [run.status for run in runs] == [RunStatus.RUNNING, RunStatus.RUNNING]
    assert runs[1].started_at is None
    return job


async def ended_runs(engine: Scheduler, job_id: str) -> list[tuple[str, str | None]]:
    return [(run.status.value, run.error) for run in await wait_runs(engine, job_id, 2)]


async def test_a_waiting_run_of_a_job_paused_by_hand_does_not_execute(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        job = await one_queued(engine, script, clock, "block")
        await engine.pause_job(job.id, owner=OWNER)
        script.release()
        assert await ended_runs(engine, job.id) == [
            ("succeeded", None),
            ("skipped", "skipped: its job was paused while the run waited for its turn"),
        ]
        assert len(script.executed(job.id)) == 1


async def test_a_waiting_run_of_a_job_its_failure_paused_does_not_execute(
    db: Path, clock: ManualClock
) -> None:
    script = BlockThenFail()
    async with running(db, script, clock) as engine:
        job = await one_queued(engine, script, clock, "block fail")
        script.release()
        assert await ended_runs(engine, job.id) == [
            ("failed", "RuntimeError: broke after blocking"),
            ("skipped", "skipped: its job was paused while the run waited for its turn"),
        ]
        assert len(script.executed(job.id)) == 1
        paused = await engine.get_job(job.id, owner=OWNER)
        assert (paused.status, paused.failure_streak) == (JobStatus.PAUSED, 1)
        assert paused.paused_reason is not None
        assert paused.paused_reason.startswith("paused after 1 consecutive failed occurrence")


async def test_a_waiting_run_of_a_failing_job_not_paused_yet_executes(
    db: Path, clock: ManualClock
) -> None:
    """The turn waits for the failure to be counted, then goes on when it pauses nothing."""
    script = BlockThenFail()
    async with running(db, script, clock) as engine:
        job = await engine.add_job(
            new("every 10s", "block fail", overlap=Overlap.BUFFER_ONE, pause_after_failures=2),
            owner=OWNER,
        )
        clock.advance(10)
        await eventually(lambda: len(script.blocked) == 1)
        clock.advance(10)
        await wait_runs(engine, job.id, 2, final=False)
        script.release()
        await eventually(lambda: len(script.blocked) == 1)
        script.release()
        runs = await wait_runs(engine, job.id, 2)
        assert [run.status for run in runs] == [RunStatus.FAILED, RunStatus.FAILED]
        assert (await engine.get_job(job.id, owner=OWNER)).status is JobStatus.PAUSED


async def test_a_waiting_run_of_a_job_whose_action_changed_does_not_execute(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        job = await one_queued(engine, script, clock, "block")
        await engine.update_job(job.id, owner=OWNER, action=NotificationAction("ok"))
        script.release()
        assert await ended_runs(engine, job.id) == [
            ("succeeded", None),
            ("skipped", "skipped: its job was edited while the run waited for its turn"),
        ]
        assert len(script.executed(job.id)) == 1
        clock.advance(10)  # the next occurrence runs the new action
        await wait_runs(engine, job.id, 3)
        assert [run.status for run in script.executed(job.id)] == [RunStatus.RUNNING] * 2


async def test_a_waiting_run_of_a_job_whose_schedule_changed_does_not_execute(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        job = await one_queued(engine, script, clock, "block")
        await engine.update_job(job.id, owner=OWNER, when="every 1 hour")
        script.release()
        assert [status for status, _ in await ended_runs(engine, job.id)] == [
            "succeeded",
            "skipped",
        ]
        assert len(script.executed(job.id)) == 1


async def test_a_waiting_run_of_a_cancelled_job_does_not_execute(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        job = await one_queued(engine, script, clock, "block")
        await engine.cancel_job(job.id, owner=OWNER)
        script.release()
        assert await ended_runs(engine, job.id) == [
            ("succeeded", None),
            ("skipped", "skipped: its job was cancelled while the run waited for its turn"),
        ]
        assert len(script.executed(job.id)) == 1


async def test_a_waiting_run_of_a_renamed_job_executes_as_fired(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        job = await one_queued(engine, script, clock, "block")
        await engine.update_job(job.id, owner=OWNER, name="renamed")
        script.release()
        await eventually(lambda: len(script.blocked) == 1)
        script.release()
        assert await ended_runs(engine, job.id) == [("succeeded", None), ("succeeded", None)]
