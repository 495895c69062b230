"""The firing loop on a manual clock: one-shot and recurring jobs, outcomes, events, output,
and the job API (create, batch, update, delete, errors)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from jupyter_recall.core.clock import ManualClock
from jupyter_recall.core.errors import (
    ChangedMeanwhile,
    ConflictError,
    NotFoundError,
    ParseError,
    PendingRecallExists,
    ValidationError,
)
from jupyter_recall.core.model import JobKind, JobStatus, Policies, RunStatus, RunTrigger
from jupyter_recall.core.records import (
    CodeAction,
    InstructionAction,
    KernelTarget,
    NotificationAction,
)
from jupyter_recall.engine.jobs import JobChanges
from jupyter_recall.engine.scheduler import NewJob
from jupyter_recall.store.base import JobFilter
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
    wait_runs,
)

pytestmark = pytest.mark.anyio


async def test_one_shot_fires_at_its_instant_and_completes(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        job = await engine.add_job(new("in 10s"), owner=OWNER)
        assert job.next_fire_at == T0 + timedelta(seconds=10)
        clock.advance(9.999)
        await engine.list_jobs(owner=OWNER)  # a round trip through the store thread
        assert script.calls == []
        clock.advance(0.001)
        (run,) = await wait_runs(engine, job.id, 1)
        assert shape([run]) == [("succeeded", "schedule")]
        assert run.scheduled_for == T0 + timedelta(seconds=10)
        assert run.started_at == run.finished_at == T0 + timedelta(seconds=10)
        done = await engine.get_job(job.id, owner=OWNER)
        assert done.status is JobStatus.COMPLETED
        assert (done.run_count, done.failure_count, done.last_status) == (1, 0, run.status)
        assert done.last_run_id == run.id
        assert done.next_fire_at is None


async def test_immediate_job_fires_without_the_clock_moving(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        job = await engine.add_job(new("now"), owner=OWNER)
        (run,) = await wait_runs(engine, job.id, 1)
        assert run.status is RunStatus.SUCCEEDED
        assert run.scheduled_for == T0


async def test_one_shot_failure_fails_the_job(db: Path, script: Script, clock: ManualClock) -> None:
    async with running(db, script, clock) as engine:
        raised = await engine.add_job(new("in 1s", "fail"), owner=OWNER)
        reported = await engine.add_job(new("in 1s", "error"), owner=OWNER)
        clock.advance(1)
        (run,) = await wait_runs(engine, raised.id, 1)
        assert run.status is RunStatus.FAILED
        assert run.error == "RuntimeError: boom"
        (other,) = await wait_runs(engine, reported.id, 1)
        assert other.error == "reported failure"
        for job_id in (raised.id, reported.id):
            job = await engine.get_job(job_id, owner=OWNER)
            assert (job.status, job.failure_count) == (JobStatus.FAILED, 1)
            assert job.last_status is RunStatus.FAILED


async def test_recurring_job_keeps_its_schedule_when_a_run_fails(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        job = await engine.add_job(new("every 10s", "fail"), owner=OWNER)
        for count in (1, 2, 3):
            clock.advance(10)
            await wait_runs(engine, job.id, count)
        after = await engine.get_job(job.id, owner=OWNER)
        assert after.status is JobStatus.ACTIVE
        assert (after.run_count, after.failure_count) == (3, 3)
        assert after.last_error == "RuntimeError: boom"
        assert after.next_occurrence == T0 + timedelta(seconds=40)
        runs = await runs_of(engine, job.id)
        assert [r.scheduled_for for r in runs] == [T0 + timedelta(seconds=s) for s in (10, 20, 30)]
        assert shape(runs) == [("failed", "schedule")] * 3


async def test_late_wake_up_within_the_window_fires_as_scheduled(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        job = await engine.add_job(new("in 10s"), owner=OWNER)
        clock.advance(40)  # the engine "was busy": 30 s late, well within the hour's window
        (run,) = await wait_runs(engine, job.id, 1)
        assert shape([run]) == [("succeeded", "schedule")]
        assert run.started_at == T0 + timedelta(seconds=40)


async def test_events_and_output_of_a_run(db: Path, script: Script, clock: ManualClock) -> None:
    events = Events()
    async with running(db, script, clock, output_limit=40) as engine:
        unsubscribe = engine.subscribe(events)
        job = await engine.add_job(new("in 1s", "print alpha beta"), owner=OWNER)
        clock.advance(1)
        (run,) = await wait_runs(engine, job.id, 1)
        assert run.output == "alpha\nbeta\n"
        assert events.types(run.id) == ["run.started", "run.output", "run.output", "run.finished"]
        assert [e.text for e in events.seen if e.type == "run.output"] == ["alpha\n", "beta\n"]
        assert events.types(job.id) == ["job.created", "job.updated", "job.updated"]
        finished = next(e for e in events.seen if e.type == "run.finished")
        assert finished.owner == OWNER
        assert finished.run is not None
        assert finished.run.status is RunStatus.SUCCEEDED
        unsubscribe()
        count = len(events.seen)
        await engine.add_job(new("in 1h"), owner=OWNER)
        assert len(events.seen) == count


async def test_output_is_bounded(db: Path, script: Script, clock: ManualClock) -> None:
    words = " ".join(f"line{i:03d}" for i in range(100))
    async with running(db, script, clock, output_limit=200) as engine:
        job = await engine.add_job(new("in 1s", f"print {words}"), owner=OWNER)
        clock.advance(1)
        (run,) = await wait_runs(engine, job.id, 1)
        assert len(run.output) <= 200
        assert run.output.startswith("line000\nline001\n")
        assert "truncated" in run.output


async def test_a_failing_listener_does_not_stop_the_engine(
    db: Path, script: Script, clock: ManualClock
) -> None:
    def broken(event: object) -> None:
        raise RuntimeError("listener bug")

    async with running(db, script, clock) as engine:
        engine.subscribe(broken)
        job = await engine.add_job(new("in 1s"), owner=OWNER)
        clock.advance(1)
        (run,) = await wait_runs(engine, job.id, 1)
        assert run.status is RunStatus.SUCCEEDED


async def test_add_jobs_is_one_batch_all_or_nothing(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        jobs = await engine.add_jobs([new(f"in {s}s") for s in (3, 1, 2)], owner=OWNER)
        assert len({job.id for job in jobs}) == 3
        with pytest.raises(ValidationError) as caught:
            await engine.add_jobs([new("in 5s"), new("whenever")], owner=OWNER)
        assert caught.value.field == "jobs[1].when"
        assert "Accepted forms" not in str(caught.value)
        assert len(await engine.list_jobs(owner=OWNER)) == 3
        clock.advance(3)
        for job in jobs:
            await wait_runs(engine, job.id, 1)
        firsts = sorted(script.calls, key=lambda call: call.run.scheduled_for)
        assert [call.job_id for call in firsts] == [jobs[1].id, jobs[2].id, jobs[0].id]


async def test_submissions_are_validated_naming_the_field(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        with pytest.raises(ParseError):
            await engine.add_job(new("at half past never"), owner=OWNER)
        with pytest.raises(ValidationError) as caught:
            await engine.add_job(NewJob(when="in 1s", action=CodeAction("x = 1")), owner=OWNER)
        assert caught.value.field == "target.type"
        with pytest.raises(ValidationError) as caught:
            await engine.add_job(
                NewJob(when="in 1s", action=NotificationAction("x"), tz="Mars/Base"),
                owner=OWNER,
            )
        assert caught.value.field == "tz"
        with pytest.raises(ValidationError) as caught:
            await engine.add_job(new("in 1h", end_at=T0 + timedelta(minutes=1)), owner=OWNER)
        assert caught.value.field == "policies.end_at"
        recall = NewJob(
            when="in 1h",
            action=InstructionAction("check"),
            target=KernelTarget(path="a.ipynb"),
            kind=JobKind.RECALL,
        )
        with pytest.raises(ValidationError) as caught:
            await engine.add_job(recall, owner=OWNER)
        assert caught.value.field == "session"


async def test_one_pending_recall_per_session(db: Path, script: Script, clock: ManualClock) -> None:
    def recall(when: str) -> NewJob:
        return NewJob(
            when=when,
            action=InstructionAction("check the training log"),
            target=KernelTarget(path="train.ipynb"),
            kind=JobKind.RECALL,
            session="train.ipynb",
        )

    async with running(db, script, clock) as engine:
        first = await engine.add_job(recall("in 30m"), owner=OWNER)
        assert first.name == "check the training log"
        with pytest.raises(PendingRecallExists, match="already has a pending recall") as caught:
            await engine.add_job(recall("in 1h"), owner=OWNER)
        assert (caught.value.session, caught.value.recall_id) == ("train.ipynb", first.id)
        await engine.cancel_job(first.id, owner=OWNER)
        second = await engine.add_job(recall("in 1h"), owner=OWNER)
        pending = await engine.list_jobs(owner=OWNER, where=JobFilter(pending_recalls_only=True))
        assert [job.id for job in pending] == [second.id]


async def test_jobs_are_scoped_to_their_owner(db: Path, script: Script, clock: ManualClock) -> None:
    async with running(db, script, clock) as engine:
        job = await engine.add_job(new("in 1h"), owner=OWNER)
        with pytest.raises(NotFoundError):
            await engine.get_job(job.id, owner="mallory")
        with pytest.raises(NotFoundError):
            await engine.cancel_job(job.id, owner="mallory")
        assert await engine.list_jobs(owner="mallory") == []


async def test_update_job_reschedules_from_now(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        job = await engine.add_job(new("in 1h"), owner=OWNER)
        assert job.name == "ok"
        clock.advance(60)
        moved = await engine.update_job(job.id, owner=OWNER, when="in 10s", name="soon")
        assert moved.next_occurrence == T0 + timedelta(seconds=70)
        assert (moved.name, moved.when) == ("soon", "in 10s")
        clock.advance(10)
        (run,) = await wait_runs(engine, job.id, 1)
        assert run.scheduled_for == T0 + timedelta(seconds=70)
        with pytest.raises(ConflictError, match="completed"):
            await engine.update_job(job.id, owner=OWNER, when="in 1h")
        # An ended job is history (core/actions.py): a rename is an edit too.
        with pytest.raises(ConflictError, match="it cannot be edited"):
            await engine.update_job(job.id, owner=OWNER, name="done")


async def test_changes_computed_from_a_job_changed_since_are_refused(
    db: Path, script: Script, clock: ManualClock
) -> None:
    """A PATCH's merge read the job first (``read_from``): if its action, target, policies or
    options changed meanwhile, the change is refused, so the caller merges again."""
    async with running(db, script, clock) as engine:
        job = await engine.add_job(new("every 1m"), owner=OWNER)
        stale = JobChanges(name="stale", read_from=job)
        await engine.update_job(job.id, owner=OWNER, policies=Policies(timeout=5))
        with pytest.raises(ChangedMeanwhile, match=job.id):
            await engine.change_job(job.id, owner=OWNER, changes=stale)
        kept = await engine.get_job(job.id, owner=OWNER)
        assert (kept.name, kept.policies.timeout) == (job.name, 5)
        fresh = JobChanges(name="fresh", read_from=kept)
        clock.advance(60)  # a run changes the job's state, not what the change was read from
        await wait_runs(engine, job.id, 1)
        changed = await engine.change_job(job.id, owner=OWNER, changes=fresh)
        assert (changed.name, changed.policies.timeout, changed.run_count) == ("fresh", 5, 1)


async def test_update_policies_applies_jitter_and_end(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        job = await engine.add_job(new("every 1m"), owner=OWNER)
        jittered = await engine.update_job(job.id, owner=OWNER, policies=Policies(jitter=30))
        occurrence = T0 + timedelta(minutes=1)
        assert jittered.next_occurrence == occurrence
        assert jittered.next_fire_at is not None
        assert occurrence <= jittered.next_fire_at < occurrence + timedelta(seconds=30)
        with pytest.raises(ValidationError) as caught:
            await engine.update_job(job.id, owner=OWNER, policies=Policies(end_at=T0))
        assert caught.value.field == "policies.end_at"


async def test_delete_job_removes_it_and_cancels_its_run(
    db: Path, script: Script, clock: ManualClock
) -> None:
    events = Events()
    async with running(db, script, clock) as engine:
        engine.subscribe(events)
        job = await engine.add_job(new("in 1s", "block"), owner=OWNER)
        clock.advance(1)
        await wait_runs(engine, job.id, 1, final=False)
        (run,) = await runs_of(engine, job.id)
        await engine.delete_job(job.id, owner=OWNER)
        with pytest.raises(NotFoundError):
            await engine.get_job(job.id, owner=OWNER)
        with pytest.raises(NotFoundError):
            await engine.get_run(run.id, owner=OWNER)
        assert "job.deleted" in events.types(job.id)
        await eventually(lambda: script.active == 0)


async def test_wait_run_returns_the_run_as_it_is_after_the_timeout(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        job = await engine.add_job(new("in 1s", "block"), owner=OWNER)
        clock.advance(1)
        (run,) = await wait_runs(engine, job.id, 1, final=False)
        still = await engine.wait_run(run.id, owner=OWNER, timeout=0.05)
        assert still.status is RunStatus.RUNNING
        script.release()
        done = await engine.wait_run(run.id, owner=OWNER, timeout=5)
        assert done.status is RunStatus.SUCCEEDED
        assert done.trigger is RunTrigger.SCHEDULE


async def test_the_api_refuses_calls_before_start(
    db: Path, script: Script, clock: ManualClock
) -> None:
    from jupyter_recall.engine.executors import CallableExecutor
    from jupyter_recall.engine.scheduler import Scheduler
    from jupyter_recall.store.sqlite import SQLiteStore

    store = SQLiteStore(db)
    engine = Scheduler(store, CallableExecutor(script), clock=clock)
    with pytest.raises(RuntimeError, match="async with"):
        await engine.add_job(new("in 1s"), owner=OWNER)
    store.close()


async def test_a_large_batch_is_all_or_nothing(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        shared = NotificationAction("many")
        news = [NewJob(when=f"in {1 + i % 50}m", action=shared) for i in range(2500)]
        news[1700] = new("at noon on mars")
        with pytest.raises(ValidationError) as caught:
            await engine.add_jobs(news, owner=OWNER)
        assert caught.value.field == "jobs[1700].when"
        assert await engine.list_jobs(owner=OWNER) == []
        news[1700] = new("in 1h")
        created = await engine.add_jobs(news, owner=OWNER)
        assert len(created) == len({job.id for job in created}) == 2500
        assert len(await engine.list_jobs(owner=OWNER)) == 2500
        assert created[0].action is shared
        assert created[0].next_occurrence == T0 + timedelta(minutes=1)


async def test_an_edited_paused_job_keeps_no_next_fire_and_resumes_at_its_new_time(
    db: Path, script: Script, clock: ManualClock
) -> None:
    """A paused job fires nothing, so it shows no next fire (``Job.paused``), edited or not."""
    async with running(db, script, clock) as engine:
        job = await engine.add_job(new("every 1m"), owner=OWNER)
        await engine.pause_job(job.id, owner=OWNER)
        for changes in (
            {"when": "every 5m"},
            {"policies": Policies(timeout=5)},
            {"tz": "Asia/Tokyo"},
        ):
            edited = await engine.update_job(job.id, owner=OWNER, **changes)
            assert (edited.status, edited.next_fire_at) == (JobStatus.PAUSED, None), changes
        resumed = await engine.resume_job(job.id, owner=OWNER)
        assert resumed.next_fire_at == T0 + timedelta(minutes=5)


async def test_the_zone_a_job_has_sent_again_moves_nothing(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        job = await engine.add_job(new("in 2h"), owner=OWNER)
        clock.advance(3600)
        same = await engine.update_job(job.id, owner=OWNER, tz=job.schedule.tz)
        assert same.next_fire_at == job.next_fire_at == T0 + timedelta(hours=2)
