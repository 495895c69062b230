"""Every firing policy through the real engine on a manual clock: catch-up and coalesce after
downtime, overlap, pause/resume, skip, run-now, cancel, stop, max_runs, end_at, jitter."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from jupyter_recall.core.clock import ManualClock
from jupyter_recall.core.errors import ConflictError, PassedWhilePaused
from jupyter_recall.core.model import Coalesce, JobStatus, Overlap, RunStatus, RunTrigger
from jupyter_recall.core.policy import MAX_ROWS_PER_PASS
from tests.engine.support import (
    OWNER,
    T0,
    Script,
    eventually,
    new,
    running,
    runs_of,
    shape,
    wait_runs,
)

pytestmark = pytest.mark.anyio
MINUTE = timedelta(minutes=1)


# --- catch-up after downtime ----------------------------------------------------------------


# The pytest-jupyter plugin loaded by this suite defeats parametrize on async tests: hence a
# helper and three small tests instead of one parametrized test.


async def catch_up_after_downtime(
    db: Path, script: Script, clock: ManualClock, coalesce: Coalesce
) -> list[tuple[str, str]]:
    """Ten occurrences of a job happen while the server is down; returns the runs' shape
    after restart, and checks the schedule goes on normally afterwards."""
    async with running(db, script, clock) as engine:
        job = await engine.add_job(new("every 1m", coalesce=coalesce), owner=OWNER)
    clock.advance(10 * 60 + 30)
    async with running(db, script, clock) as engine:
        runs = await wait_runs(engine, job.id, 10)
        assert [run.scheduled_for for run in runs] == [T0 + k * MINUTE for k in range(1, 11)]
        after = await engine.get_job(job.id, owner=OWNER)
        assert after.next_occurrence == T0 + 11 * MINUTE
        assert after.run_count == sum(1 for run in runs if run.status is RunStatus.SUCCEEDED)
        # Nothing more fires until the next occurrence, which fires as scheduled.
        clock.advance(29)
        assert len(await runs_of(engine, job.id)) == 10
        clock.advance(1)
        later = await wait_runs(engine, job.id, 11)
        assert shape(later[-1:]) == [("succeeded", "schedule")]
    return shape(runs)


async def test_catch_up_latest_runs_the_last_missed_occurrence(
    db: Path, script: Script, clock: ManualClock
) -> None:
    runs = await catch_up_after_downtime(db, script, clock, Coalesce.LATEST)
    assert runs == [("missed", "catchup")] * 9 + [("succeeded", "catchup")]


async def test_catch_up_all_runs_every_missed_occurrence(
    db: Path, script: Script, clock: ManualClock
) -> None:
    runs = await catch_up_after_downtime(db, script, clock, Coalesce.ALL)
    assert runs == [("succeeded", "catchup")] * 10


async def test_catch_up_none_records_every_occurrence_as_missed(
    db: Path, script: Script, clock: ManualClock
) -> None:
    runs = await catch_up_after_downtime(db, script, clock, Coalesce.NONE)
    assert runs == [("missed", "catchup")] * 10


async def test_occurrences_beyond_the_window_are_missed_not_run(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        job = await engine.add_job(new("every 1m", catchup_window=150), owner=OWNER)
    clock.advance(10 * 60 + 30)
    async with running(db, script, clock) as engine:
        runs = await wait_runs(engine, job.id, 10)
        # Within 150 s (+1 s): the occurrences at 8, 9 and 10 minutes; 10 runs, 8 and 9 coalesce.
        assert shape(runs) == [("missed", "catchup")] * 9 + [("succeeded", "catchup")]
        assert all("beyond the catch-up window 150s" in (r.error or "") for r in runs[:7])
        assert all("coalesced" in (r.error or "") for r in runs[7:9])


async def test_a_one_shot_missed_beyond_its_window_fails(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        job = await engine.add_job(new("in 1m", catchup_window=60), owner=OWNER)
    clock.advance(3600)
    async with running(db, script, clock) as engine:
        (run,) = await wait_runs(engine, job.id, 1)
        assert shape([run]) == [("missed", "catchup")]
        assert "59m late" in (run.error or "")
        after = await engine.get_job(job.id, owner=OWNER)
        assert (after.status, after.last_status) == (JobStatus.FAILED, RunStatus.MISSED)
        assert script.calls == []


async def test_a_year_of_downtime_is_recorded_in_bounded_rows(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        job = await engine.add_job(new("every 1m"), owner=OWNER)
    clock.advance(365 * 24 * 3600 + 30)
    async with running(db, script, clock) as engine:
        await eventually(lambda: len(script.calls) == 1)
        runs = await wait_runs(engine, job.id, MAX_ROWS_PER_PASS + 4)
        assert len(runs) == MAX_ROWS_PER_PASS + 4
        summaries = [r for r in runs if "more occurrences between" in (r.error or "")]
        assert len(summaries) == 2
        assert "at least 1000 more occurrences" in (summaries[0].error or "")
        assert shape(runs[-1:]) == [("succeeded", "catchup")]
        assert runs[-1].scheduled_for == T0 + 365 * 24 * 60 * MINUTE
        after = await engine.get_job(job.id, owner=OWNER)
        assert after.next_occurrence == T0 + (365 * 24 * 60 + 1) * MINUTE


# --- overlap ------------------------------------------------------------------------------------


async def test_overlap_skip_records_a_skipped_run(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        job = await engine.add_job(new("every 10s", "block"), owner=OWNER)
        clock.advance(10)
        await eventually(lambda: len(script.blocked) == 1)
        clock.advance(10)
        runs = await wait_runs(engine, job.id, 2, final=False)
        assert [r.status for r in runs] == [RunStatus.RUNNING, RunStatus.SKIPPED]
        assert "overlap=skip" in (runs[1].error or "")
        script.release()
        await wait_runs(engine, job.id, 2)
        clock.advance(10)
        await eventually(lambda: len(script.blocked) == 1)
        script.release()
        runs = await wait_runs(engine, job.id, 3)
        assert [r.status.value for r in runs] == ["succeeded", "skipped", "succeeded"]
        assert (await engine.get_job(job.id, owner=OWNER)).run_count == 2


async def test_overlap_buffer_one_queues_one_and_skips_the_rest(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        job = await engine.add_job(
            new("every 10s", "block", overlap=Overlap.BUFFER_ONE), owner=OWNER
        )
        clock.advance(10)
        await eventually(lambda: len(script.blocked) == 1)
        clock.advance(10)  # queued behind the first
        await wait_runs(engine, job.id, 2, final=False)
        clock.advance(10)  # one is already waiting: skipped
        runs = await wait_runs(engine, job.id, 3, final=False)
        assert [r.status.value for r in runs] == ["running", "running", "skipped"]
        assert "overlap=buffer_one" in (runs[2].error or "")
        assert len(script.blocked) == 1  # the second waits for its turn, not executing
        first = script.release()
        await eventually(lambda: len(script.blocked) == 1)
        second = script.release()
        assert (first.scheduled_for, second.scheduled_for) == (
            runs[0].scheduled_for,
            runs[1].scheduled_for,
        )
        done = await wait_runs(engine, job.id, 3)
        assert [r.status.value for r in done] == ["succeeded", "succeeded", "skipped"]
        assert done[1].started_at == T0 + timedelta(seconds=30)


async def test_overlap_allow_runs_concurrently(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        job = await engine.add_job(new("every 10s", "block", overlap=Overlap.ALLOW), owner=OWNER)
        for _ in range(3):
            clock.advance(10)
            await wait_runs(engine, job.id, len(script.blocked) + 1, final=False)
        await eventually(lambda: len(script.blocked) == 3)
        assert script.most_active == 3
        for _ in range(3):
            script.release()
        runs = await wait_runs(engine, job.id, 3)
        assert [r.status.value for r in runs] == ["succeeded"] * 3


async def test_catch_up_all_replays_one_after_another(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        job = await engine.add_job(new("every 1m", "block", coalesce=Coalesce.ALL), owner=OWNER)
    clock.advance(3 * 60 + 30)
    async with running(db, script, clock) as engine:
        for _ in range(3):
            await eventually(lambda: len(script.blocked) == 1)
            assert script.active == 1
            script.release()
        runs = await wait_runs(engine, job.id, 3)
        assert shape(runs) == [("succeeded", "catchup")] * 3


# --- pause, resume, skip, run now, cancel, stop ---------------------------------------------


async def test_pause_stops_firing_and_resume_continues_from_now(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        job = await engine.add_job(new("every 1m"), owner=OWNER)
        paused = await engine.pause_job(job.id, owner=OWNER)
        assert paused.status is JobStatus.PAUSED
        # A repeat is refused, naming why (core/actions.py): the rule offers no such action.
        with pytest.raises(ConflictError, match="already paused"):
            await engine.pause_job(job.id, owner=OWNER)
        clock.advance(5 * 60 + 30)
        await engine.list_jobs(owner=OWNER)
        assert await runs_of(engine, job.id) == []
        resumed = await engine.resume_job(job.id, owner=OWNER)
        assert resumed.status is JobStatus.ACTIVE
        assert resumed.next_occurrence == T0 + 6 * MINUTE
        clock.advance(30)
        runs = await wait_runs(engine, job.id, 1)
        assert shape(runs) == [("succeeded", "schedule")]
        assert runs[0].scheduled_for == T0 + 6 * MINUTE


async def test_resume_with_catch_up_applies_the_catch_up_policy(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        job = await engine.add_job(new("every 1m"), owner=OWNER)
        await engine.pause_job(job.id, owner=OWNER)
        clock.advance(5 * 60 + 30)
        await engine.resume_job(job.id, owner=OWNER, catch_up=True)
        runs = await wait_runs(engine, job.id, 5)
        assert shape(runs) == [("missed", "catchup")] * 4 + [("succeeded", "catchup")]


async def test_resume_of_a_one_shot_that_passed_needs_catch_up(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        job = await engine.add_job(new("in 1m"), owner=OWNER)
        await engine.pause_job(job.id, owner=OWNER)
        clock.advance(120)
        with pytest.raises(PassedWhilePaused) as refused:
            await engine.resume_job(job.id, owner=OWNER)
        # Its fields, and a message naming no surface's option: each surface adds its own.
        at = (T0 + timedelta(minutes=1)).isoformat()
        assert (refused.value.job_id, refused.value.at) == (job.id, at)
        assert str(refused.value) == (
            f"job {job.id} was to run once at {at}, which passed while it was paused: "
            "resume it with catch-up to run it now, or cancel it"
        )
        assert isinstance(refused.value, ConflictError)
        await engine.resume_job(job.id, owner=OWNER, catch_up=True)
        (run,) = await wait_runs(engine, job.id, 1)
        assert shape([run]) == [("succeeded", "schedule")]


async def test_skip_advances_a_recurring_job_by_one_recorded_occurrence(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        job = await engine.add_job(new("every 1m"), owner=OWNER)
        skipped = await engine.skip_job(job.id, owner=OWNER)
        assert skipped.next_occurrence == T0 + 2 * MINUTE
        clock.advance(60)
        await engine.list_jobs(owner=OWNER)
        clock.advance(60)
        runs = await wait_runs(engine, job.id, 2)
        assert [(r.status.value, r.scheduled_for) for r in runs] == [
            ("skipped", T0 + MINUTE),
            ("succeeded", T0 + 2 * MINUTE),
        ]
        assert runs[0].trigger is RunTrigger.MANUAL
        once = await engine.add_job(new("in 1h"), owner=OWNER)
        with pytest.raises(ConflictError, match="cancel it instead"):
            await engine.skip_job(once.id, owner=OWNER)


async def test_run_now_does_not_move_the_schedule(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        job = await engine.add_job(new("every 1m"), owner=OWNER)
        clock.advance(15)
        run = await engine.trigger_job(job.id, owner=OWNER)
        assert (run.trigger, run.scheduled_for) == (RunTrigger.MANUAL, T0 + timedelta(seconds=15))
        done = await engine.wait_run(run.id, owner=OWNER, timeout=5)
        assert done.status is RunStatus.SUCCEEDED
        after = await engine.get_job(job.id, owner=OWNER)
        assert after.next_occurrence == T0 + MINUTE
        assert (after.run_count, after.last_run_id) == (0, run.id)
        clock.advance(45)
        runs = await wait_runs(engine, job.id, 2)
        assert [r.trigger.value for r in runs] == ["manual", "schedule"]


async def test_run_now_of_a_paused_job_keeps_it_paused(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        job = await engine.add_job(new("in 1h"), owner=OWNER)
        await engine.pause_job(job.id, owner=OWNER)
        run = await engine.trigger_job(job.id, owner=OWNER)
        await engine.wait_run(run.id, owner=OWNER, timeout=5)
        after = await engine.get_job(job.id, owner=OWNER)
        assert (after.status, after.last_status) == (JobStatus.PAUSED, RunStatus.SUCCEEDED)


async def test_cancel_stops_everything_from_firing(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        job = await engine.add_job(new("every 1m"), owner=OWNER)
        cancelled = await engine.cancel_job(job.id, owner=OWNER)
        assert (cancelled.status, cancelled.next_fire_at) == (JobStatus.CANCELLED, None)
        assert not cancelled.is_pending
        clock.advance(600)
        await engine.list_jobs(owner=OWNER)
        assert await runs_of(engine, job.id) == []
        with pytest.raises(ConflictError):
            await engine.trigger_job(job.id, owner=OWNER)
        with pytest.raises(ConflictError):
            await engine.resume_job(job.id, owner=OWNER)


async def test_stop_run_cancels_the_executing_run(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        job = await engine.add_job(new("in 1s", "block"), owner=OWNER)
        clock.advance(1)
        await eventually(lambda: len(script.blocked) == 1)
        (run,) = await runs_of(engine, job.id)
        stopped = await engine.stop_run(run.id, owner=OWNER)
        assert stopped.status is RunStatus.CANCELLED
        assert stopped.error == "cancelled: stopped on request"
        assert script.active == 0
        after = await engine.get_job(job.id, owner=OWNER)
        assert after.status is JobStatus.CANCELLED
        with pytest.raises(ConflictError, match="already ended"):
            await engine.stop_run(run.id, owner=OWNER)


async def test_a_run_past_its_time_limit_is_stopped_and_ends_timed_out(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        job = await engine.add_job(new("every 1h", "block", timeout=0.2), owner=OWNER)
        clock.advance(3600)
        (run,) = await wait_runs(engine, job.id, 1)
        assert run.status is RunStatus.TIMED_OUT
        assert run.error == "timed_out: still running after its limit of 0.2 s"
        assert script.active == 0, "the blocked call was cancelled"
        after = await engine.get_job(job.id, owner=OWNER)
        assert (after.status, after.failure_count) == (JobStatus.ACTIVE, 1)


async def test_the_engine_default_time_limit_applies_to_jobs_that_set_none(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock, default_timeout=0.2) as engine:
        own = await engine.add_job(new("in 1s", "ok", timeout=30), owner=OWNER)
        default = await engine.add_job(new("in 1s", "block"), owner=OWNER)
        clock.advance(1)
        (limited,) = await wait_runs(engine, default.id, 1)
        assert limited.status is RunStatus.TIMED_OUT
        assert limited.error == "timed_out: still running after its limit of 0.2 s"
        assert (await wait_runs(engine, own.id, 1))[0].status is RunStatus.SUCCEEDED


async def test_stop_run_of_a_queued_run_lets_the_lane_go_on(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        job = await engine.add_job(
            new("every 10s", "block", overlap=Overlap.BUFFER_ONE), owner=OWNER
        )
        clock.advance(10)
        await eventually(lambda: len(script.blocked) == 1)
        clock.advance(10)
        runs = await wait_runs(engine, job.id, 2, final=False)
        stopped = await engine.stop_run(runs[1].id, owner=OWNER)
        assert (stopped.status, stopped.started_at) == (RunStatus.CANCELLED, None)
        script.release()
        await wait_runs(engine, job.id, 2)
        clock.advance(10)  # the lane is free again: the next occurrence runs
        await eventually(lambda: len(script.blocked) == 1)
        script.release()
        runs = await wait_runs(engine, job.id, 3)
        assert [r.status.value for r in runs] == ["succeeded", "cancelled", "succeeded"]


# --- end conditions and jitter ----------------------------------------------------------------


async def test_max_runs_completes_the_job(db: Path, script: Script, clock: ManualClock) -> None:
    async with running(db, script, clock) as engine:
        job = await engine.add_job(new("every 10s", max_runs=3), owner=OWNER)
        for count in (1, 2, 3):
            clock.advance(10)
            await wait_runs(engine, job.id, count)
        after = await engine.get_job(job.id, owner=OWNER)
        assert (after.status, after.run_count, after.next_occurrence) == (
            JobStatus.COMPLETED,
            3,
            None,
        )
        clock.advance(60)
        await engine.list_jobs(owner=OWNER)
        assert len(await runs_of(engine, job.id)) == 3


async def test_end_at_completes_the_job(db: Path, script: Script, clock: ManualClock) -> None:
    async with running(db, script, clock) as engine:
        end = T0 + timedelta(seconds=25)
        job = await engine.add_job(new("every 10s", end_at=end), owner=OWNER)
        clock.advance(20)
        await wait_runs(engine, job.id, 2)
        after = await engine.get_job(job.id, owner=OWNER)
        assert after.status is JobStatus.COMPLETED
        clock.advance(60)
        assert len(await runs_of(engine, job.id)) == 2


async def test_jitter_delays_within_bounds_and_never_past_the_next_occurrence(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        jobs = await engine.add_jobs([new("every 1m", jitter=20) for _ in range(40)], owner=OWNER)
        offsets = [
            (job.next_fire_at - job.next_occurrence).total_seconds()
            for job in jobs
            if job.next_fire_at is not None and job.next_occurrence is not None
        ]
        assert all(0 <= offset < 20 for offset in offsets)
        assert len(set(offsets)) > 30
        wide = await engine.add_job(new("every 1m", jitter=3600), owner=OWNER)
        assert wide.next_fire_at is not None
        assert wide.next_fire_at < T0 + 2 * MINUTE
        clock.advance(60)
        await engine.list_jobs(owner=OWNER)
        clock.advance(20)
        for job in jobs:
            (run,) = await wait_runs(engine, job.id, 1)
            assert run.scheduled_for == T0 + MINUTE
            assert run.trigger is RunTrigger.SCHEDULE
            assert run.started_at is not None
            assert job.next_fire_at is not None
            assert run.started_at >= job.next_fire_at
