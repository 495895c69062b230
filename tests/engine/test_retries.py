"""Retries (``policies.retries``) through the real engine on a manual clock and a real SQLite
file: attempts of one occurrence, backoff, exhaustion, a restart with a retry pending or an
attempt in flight, overlap, max_runs and the job's end."""

from __future__ import annotations

from datetime import timedelta
from functools import partial
from pathlib import Path

import anyio
import pytest

from jupyter_recall.core.clock import ManualClock, SystemClock
from jupyter_recall.core.model import Job, JobStatus, Overlap, Policies, Run, RunStatus
from jupyter_recall.core.records import NotificationAction
from jupyter_recall.core.retries import Retries
from jupyter_recall.engine.executors import CallableExecutor, OutputSink, RunOutcome
from jupyter_recall.engine.owners import OwnedJob
from jupyter_recall.engine.scheduler import Scheduler
from jupyter_recall.store.urls import open_store
from tests.engine.support import (
    OWNER,
    T0,
    Script,
    eventually,
    new,
    running,
)
from tests.engine.support import runs_of as _runs_of
from tests.engine.support import wait_runs as _wait_runs

pytestmark = pytest.mark.anyio


class Flaky(Script):
    """``flaky N``: attempts 1..N fail, the next succeeds; other messages as ``Script``."""

    async def _behave(self, message: str, run: Run, output: OutputSink) -> RunOutcome | None:
        if message.startswith("flaky"):
            failures = int(message.split()[1])
            if run.attempt <= failures:
                raise RuntimeError(f"attempt {run.attempt} failed")
            return None
        return await super()._behave(message, run, output)


def attempts(runs: list[Run]) -> list[tuple[int, str, bool]]:
    return [(run.attempt, run.status.value, run.retry_at is not None) for run in runs]


async def runs_of(engine: Scheduler, job_id: str) -> list[Run]:
    """The job's runs by occurrence, then attempt (attempts may share a creation instant on
    the manual clock)."""
    return sorted(await _runs_of(engine, job_id), key=lambda run: (run.scheduled_for, run.attempt))


async def wait_runs(engine: Scheduler, job_id: str, count: int, *, final: bool = True) -> list[Run]:
    await _wait_runs(engine, job_id, count, final=final)
    return await runs_of(engine, job_id)


@pytest.fixture
def flaky() -> Flaky:
    return Flaky()


async def test_a_job_failing_twice_then_succeeding_has_three_attempts_of_one_occurrence(
    db: Path, flaky: Flaky, clock: ManualClock
) -> None:
    retries = Retries(max=2, backoff=5, factor=2)
    async with running(db, flaky, clock) as engine:
        job = await engine.add_job(new("in 1m", "flaky 2", retries=retries), owner=OWNER)
        clock.advance(60)
        await eventually(lambda: len(flaky.executed(job.id)) == 1)
        await eventually(lambda: _pending(engine, job.id))
        first = (await runs_of(engine, job.id))[0]
        assert (first.finished_at, first.retry_at) == (
            T0 + timedelta(seconds=60),
            T0 + timedelta(seconds=65),
        )
        assert not first.is_final_for_occurrence
        # Not before its backoff.
        clock.advance(4)
        assert len(flaky.executed(job.id)) == 1
        clock.advance(1)
        await eventually(lambda: len(flaky.executed(job.id)) == 2)
        await eventually(lambda: _pending(engine, job.id))
        second = (await runs_of(engine, job.id))[1]
        # factor 2: twice the backoff after the second attempt.
        assert (second.finished_at, second.retry_at) == (
            T0 + timedelta(seconds=65),
            T0 + timedelta(seconds=75),
        )
        clock.advance(10)
        runs = await wait_runs(engine, job.id, 3)
        # A retry fired is no longer pending: retry_at is cleared as the next attempt starts.
        assert attempts(runs) == [
            (1, "failed", False),
            (2, "failed", False),
            (3, "succeeded", False),
        ]
        # One occurrence: every attempt has its instant.
        assert {run.scheduled_for for run in runs} == {T0 + timedelta(minutes=1)}
        await eventually(lambda: _status(engine, job.id, JobStatus.COMPLETED))
        done = await engine.get_job(job.id, owner=OWNER)
        assert (done.run_count, done.failure_count) == (1, 0)


async def _pending(engine: Scheduler, job_id: str) -> bool:
    runs = await runs_of(engine, job_id)
    return bool(runs) and runs[-1].retry_at is not None


async def _status(engine: Scheduler, job_id: str, status: JobStatus) -> bool:
    return (await engine.get_job(job_id, owner=OWNER)).status is status


async def test_retries_exhausted_leave_the_occurrence_failed(
    db: Path, flaky: Flaky, clock: ManualClock
) -> None:
    async with running(db, flaky, clock) as engine:
        job = await engine.add_job(
            new("in 1m", "fail", retries=Retries(max=1, backoff=1)), owner=OWNER
        )
        clock.advance(60)
        await eventually(lambda: _pending(engine, job.id))
        clock.advance(1)
        runs = await wait_runs(engine, job.id, 2)
        assert attempts(runs) == [(1, "failed", False), (2, "failed", False)]
        await eventually(lambda: _status(engine, job.id, JobStatus.FAILED))
        failed = await engine.get_job(job.id, owner=OWNER)
        # The occurrence failed once, whatever its attempts.
        assert failed.failure_count == 1
        assert failed.last_status is RunStatus.FAILED


async def test_run_now_of_an_ended_job_plans_no_retry_that_would_never_fire(
    db: Path, flaky: Flaky, clock: ManualClock
) -> None:
    # Nothing fires for an ended job, its retries included: a retry_at written for its Run now
    # would promise an attempt that never comes.
    async with running(db, flaky, clock) as engine:
        job = await engine.add_job(
            new("in 1m", "fail", retries=Retries(max=1, backoff=1)), owner=OWNER
        )
        clock.advance(60)
        await eventually(lambda: _pending(engine, job.id))
        clock.advance(1)
        await wait_runs(engine, job.id, 2)
        await eventually(lambda: _status(engine, job.id, JobStatus.FAILED))
        await engine.trigger_job(job.id, owner=OWNER)
        runs = await wait_runs(engine, job.id, 3)
        [manual] = [run for run in runs if run.trigger.value == "manual"]
        assert (manual.status, manual.retry_at) == (RunStatus.FAILED, None)
        assert (await engine.get_job(job.id, owner=OWNER)).status is JobStatus.FAILED


async def test_a_status_not_in_on_is_not_retried(
    db: Path, flaky: Flaky, clock: ManualClock
) -> None:
    retries = Retries(max=3, backoff=1, on=("timed_out",))
    async with running(db, flaky, clock) as engine:
        job = await engine.add_job(new("in 1m", "fail", retries=retries), owner=OWNER)
        clock.advance(60)
        runs = await wait_runs(engine, job.id, 1)
        assert attempts(runs) == [(1, "failed", False)]
        await eventually(lambda: _status(engine, job.id, JobStatus.FAILED))


async def test_a_pending_retry_survives_a_restart_and_fires_once_after_it(
    db: Path, flaky: Flaky, clock: ManualClock
) -> None:
    async with running(db, flaky, clock) as engine:
        job = await engine.add_job(
            new("in 1m", "flaky 1", retries=Retries(max=1, backoff=30)), owner=OWNER
        )
        clock.advance(60)
        await eventually(lambda: _pending(engine, job.id))
    # Down past the retry's instant.
    clock.advance(120)
    async with running(db, flaky, clock) as engine:
        runs = await wait_runs(engine, job.id, 2)
        assert attempts(runs) == [(1, "failed", False), (2, "succeeded", False)]
        await eventually(lambda: _status(engine, job.id, JobStatus.COMPLETED))
    # A third engine on the file finds nothing left to retry.
    async with running(db, flaky, clock) as engine:
        clock.advance(60)
        assert len(await runs_of(engine, job.id)) == 2
    assert [run.attempt for run in flaky.executed(job.id)] == [1, 2]


async def test_two_engines_on_one_file_fire_a_pending_retry_once(
    db: Path, flaky: Flaky, clock: ManualClock
) -> None:
    async with running(db, flaky, clock) as engine:
        job = await engine.add_job(
            new("in 1m", "flaky 1", retries=Retries(max=1, backoff=30)), owner=OWNER
        )
        clock.advance(60)
        await eventually(lambda: _pending(engine, job.id))
    async with running(db, flaky, clock) as one, running(db, flaky, clock) as two:
        clock.advance(30)
        await wait_runs(one, job.id, 2)
        clock.advance(60)
        await wait_runs(two, job.id, 2)
    assert [run.attempt for run in flaky.executed(job.id)] == [1, 2]


async def test_an_attempt_interrupted_by_a_shutdown_is_retried_after_the_restart(
    db: Path, flaky: Flaky, clock: ManualClock
) -> None:
    async with running(db, flaky, clock) as engine:
        job = await engine.add_job(
            new("in 1m", "block", retries=Retries(max=1, backoff=0)), owner=OWNER
        )
        clock.advance(60)
        await eventually(lambda: len(flaky.blocked) == 1)
    flaky.blocked.clear()
    async with running(db, flaky, clock) as engine:
        runs = await wait_runs(engine, job.id, 2, final=False)
        assert (runs[0].attempt, runs[0].status.value) == (1, "interrupted")
        assert runs[1].attempt == 2
        await eventually(lambda: len(flaky.blocked) == 1)
        flaky.release()
        await wait_runs(engine, job.id, 2)
        await eventually(lambda: _status(engine, job.id, JobStatus.COMPLETED))


async def test_overlap_skip_sees_the_retrying_occurrence_as_running(
    db: Path, flaky: Flaky, clock: ManualClock
) -> None:
    retries = Retries(max=1, backoff=90)
    async with running(db, flaky, clock) as engine:
        job = await engine.add_job(new("every 1m", "flaky 1", retries=retries), owner=OWNER)
        clock.advance(60)
        await eventually(lambda: _pending(engine, job.id))
        # The next occurrence comes during the backoff: skipped, its occurrence is running.
        clock.advance(60)
        runs = await wait_runs(engine, job.id, 2)
        assert runs[1].status is RunStatus.SKIPPED
        assert "overlap=skip" in (runs[1].error or "")
        clock.advance(30)
        runs = await wait_runs(engine, job.id, 3)
        retried = [run for run in runs if run.attempt == 2]
        assert [run.status for run in retried] == [RunStatus.SUCCEEDED]
        assert retried[0].scheduled_for == T0 + timedelta(minutes=1)
        # max_runs and run_count count occurrences, not attempts.
        assert (await engine.get_job(job.id, owner=OWNER)).run_count == 1


async def test_overlap_buffer_one_waits_for_the_retry_then_runs(
    db: Path, flaky: Flaky, clock: ManualClock
) -> None:
    retries = Retries(max=1, backoff=90)
    policies = {"retries": retries, "overlap": Overlap.BUFFER_ONE}
    async with running(db, flaky, clock) as engine:
        job = await engine.add_job(new("every 1m", "flaky 1", **policies), owner=OWNER)
        clock.advance(60)
        await eventually(lambda: _pending(engine, job.id))
        clock.advance(60)  # the second occurrence is due, the retry is 30 s away
        assert len(flaky.executed(job.id)) == 1
        clock.advance(30)
        await eventually(lambda: len(flaky.executed(job.id)) == 3)
        executed = flaky.executed(job.id)
        # The retry of the first occurrence ran before the second occurrence.
        assert [(run.scheduled_for, run.attempt) for run in executed] == [
            (T0 + timedelta(minutes=1), 1),
            (T0 + timedelta(minutes=1), 2),
            (T0 + timedelta(minutes=2), 1),
        ]


async def test_max_runs_counts_an_occurrence_once_whatever_its_attempts(
    db: Path, flaky: Flaky, clock: ManualClock
) -> None:
    policies = {"retries": Retries(max=2, backoff=1), "max_runs": 1}
    async with running(db, flaky, clock) as engine:
        job = await engine.add_job(new("every 1m", "flaky 2", **policies), owner=OWNER)
        clock.advance(60)
        await eventually(lambda: _pending(engine, job.id))
        clock.advance(1)
        await eventually(lambda: len(flaky.executed(job.id)) == 2)
        await eventually(lambda: _pending(engine, job.id))
        clock.advance(2)
        runs = await wait_runs(engine, job.id, 3)
        assert [run.attempt for run in runs] == [1, 2, 3]
        await eventually(lambda: _status(engine, job.id, JobStatus.COMPLETED))


async def test_a_paused_job_keeps_its_retry_until_resumed(
    db: Path, flaky: Flaky, clock: ManualClock
) -> None:
    async with running(db, flaky, clock) as engine:
        job = await engine.add_job(
            new("every 1h", "flaky 1", retries=Retries(max=1, backoff=5)), owner=OWNER
        )
        clock.advance(3600)
        await eventually(lambda: _pending(engine, job.id))
        await engine.pause_job(job.id, owner=OWNER)
        clock.advance(10)
        assert len(flaky.executed(job.id)) == 1
        await engine.resume_job(job.id, owner=OWNER)
        clock.advance(1)
        runs = await wait_runs(engine, job.id, 2)
        assert attempts(runs) == [(1, "failed", False), (2, "succeeded", False)]


async def test_each_attempt_has_its_own_time_limit_and_timed_out_is_retried(
    db: Path, flaky: Flaky, clock: ManualClock
) -> None:
    retries = Retries(max=1, backoff=0, on=("timed_out",))
    async with running(db, flaky, clock) as engine:
        job = await engine.add_job(new("in 1m", "block", retries=retries, timeout=0.2), owner=OWNER)
        clock.advance(60)
        runs = await wait_runs(engine, job.id, 2, final=True)
        assert [(run.attempt, run.status.value) for run in runs] == [
            (1, "timed_out"),
            (2, "timed_out"),
        ]
        await eventually(lambda: _status(engine, job.id, JobStatus.FAILED))


async def test_a_one_shot_paused_with_a_retry_pending_is_not_over_when_resumed(
    db: Path, flaky: Flaky, clock: ManualClock
) -> None:
    async with running(db, flaky, clock) as engine:
        job = await engine.add_job(
            new("in 1m", "flaky 1", retries=Retries(max=1, backoff=5)), owner=OWNER
        )
        clock.advance(60)
        await eventually(lambda: _pending(engine, job.id))
        await engine.pause_job(job.id, owner=OWNER)
        resumed = await engine.resume_job(job.id, owner=OWNER)
        assert resumed.status is JobStatus.ACTIVE
        clock.advance(5)
        runs = await wait_runs(engine, job.id, 2)
        assert attempts(runs) == [(1, "failed", False), (2, "succeeded", False)]
        await eventually(lambda: _status(engine, job.id, JobStatus.COMPLETED))


async def test_cancel_drops_a_pending_retry(db: Path, flaky: Flaky, clock: ManualClock) -> None:
    async with running(db, flaky, clock) as engine:
        job = await engine.add_job(
            new("every 1h", "fail", retries=Retries(max=3, backoff=5)), owner=OWNER
        )
        clock.advance(3600)
        await eventually(lambda: _pending(engine, job.id))
        await engine.cancel_job(job.id, owner=OWNER)
        (run,) = await runs_of(engine, job.id)
        # The failed attempt is its occurrence's outcome now.
        assert run.is_final_for_occurrence
        clock.advance(60)
        assert len(flaky.executed(job.id)) == 1
        assert engine.store.next_retry_at() is None


async def test_on_postgresql_another_engine_fires_the_retry_its_planner_left(
    postgres_db_url: str,
) -> None:
    """Engine A runs the first attempt and stops with the retry pending; engine B, another
    server's on the same database, fires it once."""
    executed: list[tuple[str, int]] = []

    async def flaky(job: Job, run: Run, output: OutputSink) -> RunOutcome | None:
        executed.append((run.engine_id or "", run.attempt))
        if run.attempt == 1:
            raise RuntimeError("the first attempt fails")
        return None

    store_a, store_b = open_store(postgres_db_url), open_store(postgres_db_url)
    engine_a = Scheduler(store_a, CallableExecutor(flaky), clock=SystemClock(), engine_id="a")
    engine_b = Scheduler(store_b, CallableExecutor(flaky), clock=SystemClock(), engine_id="b")
    try:
        async with engine_a:
            job = await engine_a.add_job(new("now", retries=Retries(max=2, backoff=2)), owner=OWNER)
            await eventually(lambda: _pending(engine_a, job.id), timeout=20)
        # A is gone; its retry is the database's.
        async with engine_b:
            await eventually(lambda: len(executed) == 2, timeout=20)
            runs = await wait_runs(engine_b, job.id, 2)
            assert [(run.attempt, run.status.value) for run in runs] == [
                (1, "failed"),
                (2, "succeeded"),
            ]
            first_end = runs[0].finished_at
            assert first_end is not None
            assert runs[1].created_at >= first_end + timedelta(seconds=2)
            await anyio.sleep(1.5)  # nothing more: the retry fired once
    finally:
        store_a.close()
        store_b.close()
    assert executed == [("a", 1), ("b", 2)]


async def test_resuming_wakes_the_loop_for_a_retry_due_during_the_pause(
    db: Path, flaky: Flaky, clock: ManualClock
) -> None:
    """The clock stands still once the job is resumed, and the loop sleeps towards another
    job's fire instant an hour ahead (``max_sleep`` an hour too): only the resume's wake-up can
    fire the retry whose instant passed during the pause."""
    async with running(db, flaky, clock, max_sleep=3600) as engine:
        job = await engine.add_job(
            new("every 1d", "flaky 1", retries=Retries(max=1, backoff=5)), owner=OWNER
        )
        clock.advance(86_400)
        await eventually(lambda: _pending(engine, job.id))
        await engine.pause_job(job.id, owner=OWNER)
        await engine.add_job(new("in 1h"), owner=OWNER)
        clock.advance(10)
        await engine.list_jobs(owner=OWNER)  # a round trip: the pass after the move is done
        assert len(flaky.executed(job.id)) == 1
        await engine.resume_job(job.id, owner=OWNER)
        runs = await wait_runs(engine, job.id, 2)
        assert attempts(runs) == [(1, "failed", False), (2, "succeeded", False)]
        assert runs[1].created_at == T0 + timedelta(days=1, seconds=10)


async def test_switching_an_owner_on_wakes_the_loop_for_a_retry_and_keeps_its_job(
    db: Path, flaky: Flaky, clock: ManualClock
) -> None:
    """A declared one-shot job switched off with a retry pending is not over when switched on
    (the retry is a run in flight), and its retry, due meanwhile, fires at once."""
    declared = OwnedJob(
        key="once",
        when="in 1m",
        action=NotificationAction("flaky 1"),
        policies=Policies(retries=Retries(max=1, backoff=5)),
    )
    async with running(db, flaky, clock, max_sleep=3600) as engine:
        (job,) = (await engine.reconcile("ops", [declared], owner=OWNER)).created
        clock.advance(60)
        await eventually(lambda: _pending(engine, job.id))
        await engine.disable_owner("ops", owner=OWNER)
        await engine.add_job(new("in 1h"), owner=OWNER)
        clock.advance(10)
        await engine.list_jobs(owner=OWNER)
        assert len(flaky.executed(job.id)) == 1
        (enabled,) = await engine.enable_owner("ops", owner=OWNER)
        assert enabled.status is JobStatus.ACTIVE
        runs = await wait_runs(engine, job.id, 2)
        assert attempts(runs) == [(1, "failed", False), (2, "succeeded", False)]
        await eventually(lambda: _status(engine, job.id, JobStatus.COMPLETED))


async def test_jobs_waiting_for_their_retries_do_not_hold_up_other_due_jobs(
    db: Path, flaky: Flaky, clock: ManualClock
) -> None:
    """A batch's worth of ``buffer_one`` jobs whose due occurrence waits for the retry of the
    previous one would be read first by every pass (the earliest due); another job due after
    them must fire on time all the same, the clock standing still."""
    policies = {"retries": Retries(max=1, backoff=600), "overlap": Overlap.BUFFER_ONE}
    async with running(db, flaky, clock, batch_size=3) as engine:
        waiting = [
            await engine.add_job(new("every 1m", "flaky 1", **policies), owner=OWNER)
            for _ in range(3)
        ]
        clock.advance(60)
        for job in waiting:
            await eventually(partial(_pending, engine, job.id))
        other = await engine.add_job(new("in 90s"), owner=OWNER)
        clock.advance(60)  # the second occurrences are due; the retries are 540 s away
        await engine.list_jobs(owner=OWNER)
        clock.advance(30)
        await wait_runs(engine, other.id, 1)
        for job in waiting:
            held = await engine.get_job(job.id, owner=OWNER)
            # Looked at again when its retry is due; its occurrence is still the one due.
            assert (held.next_occurrence, held.next_fire_at) == (
                T0 + timedelta(minutes=2),
                T0 + timedelta(minutes=11),
            )
            assert len(flaky.executed(job.id)) == 1
        clock.set(T0 + timedelta(minutes=11))
        for job in waiting:
            await eventually(lambda job=job: len(flaky.executed(job.id)) == 3)
            # The retry of the first occurrence ran before the waiting occurrence.
            assert [run.attempt for run in flaky.executed(job.id)] == [1, 2, 1]


async def test_a_job_read_ahead_of_its_instant_is_not_moved_earlier_by_its_retry(
    db: Path, flaky: Flaky, clock: ManualClock
) -> None:
    """The retry is due 0.1 s before the next occurrence of a ``buffer_one`` job, within the
    fire-ahead reach of a pass: the occurrence still fires at its instant, after the retry."""
    retries = Retries(max=1, backoff=59.9)
    async with running(db, flaky, clock) as engine:
        job = await engine.add_job(
            new("every 1m", "flaky 1", retries=retries, overlap=Overlap.BUFFER_ONE), owner=OWNER
        )
        clock.advance(60)
        await eventually(partial(_pending, engine, job.id))
        for at in (119.875, 119.95, 119.99):
            clock.set(T0 + timedelta(seconds=at))
            await engine.list_jobs(owner=OWNER)
            # Never put off to an instant before its own.
            read = await engine.get_job(job.id, owner=OWNER)
            assert read.next_fire_at == T0 + timedelta(minutes=2)
        await eventually(lambda: len(flaky.executed(job.id)) == 2)
        clock.set(T0 + timedelta(minutes=2))
        await eventually(lambda: len(flaky.executed(job.id)) == 3)
        third = flaky.executed(job.id)[2]
        assert (third.scheduled_for, third.attempt) == (T0 + timedelta(minutes=2), 1)
        assert third.started_at == T0 + timedelta(minutes=2)
