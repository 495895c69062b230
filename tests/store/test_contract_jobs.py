"""The contract of jobs, runs, job states, leases and transactions (``JobStore``,
``LeaseStore``): what every store must do, written against the protocols only. Each test runs
on every kind of store in ``conftest.STORES``.
"""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from jupyter_recall.core.errors import ConflictError, NotFoundError, PendingRecallExists
from jupyter_recall.core.model import (
    Coalesce,
    Job,
    JobKind,
    JobStatus,
    Overlap,
    Policies,
    RunStatus,
    RunTrigger,
)
from jupyter_recall.core.records import JobOptions
from jupyter_recall.store.base import JobFilter, JobState, RunEnd, RunFilter, Store
from tests.store.factories import (
    T0,
    Midway,
    OpenStore,
    ids,
    make_job,
    make_recall,
    make_run,
    minutes,
)


@pytest.fixture
def job(store: Store) -> Job:
    job = make_job(when="every 5m")
    store.insert_jobs([job])
    return job


class TestJobStore:
    # --- jobs: round trip ------------------------------------------------------------------

    def test_a_job_comes_back_equal_with_every_field(self, store: Store) -> None:
        job = make_job(
            when="every 5m",
            session="analysis.ipynb",
            policies=Policies(
                catchup_window=None,
                coalesce=Coalesce.ALL,
                overlap=Overlap.BUFFER_ONE,
                max_runs=7,
                end_at=T0 + timedelta(days=3),
                jitter=2.5,
            ),
            status=JobStatus.PAUSED,
            run_count=3,
            failure_count=1,
            last_run_at=T0 - minutes(5),
            last_run_id="abc123",
            last_status=RunStatus.FAILED,
            last_error="ZeroDivisionError: division by zero",
            options=JobOptions.from_json(
                {"exclusive": True, "output_channel": "ui", "tags": ["ä", 1, None]}
            ),
        )
        store.insert_jobs([job])
        assert store.get_job(job.id, owner="alice") == job

    def test_instants_come_back_as_aware_utc(self, store: Store) -> None:
        paris_noon = datetime(2030, 6, 1, 12, 0, 0, 123456, tzinfo=timezone(timedelta(hours=2)))
        job = make_job(created_at=T0).evolve(updated_at=paris_noon, last_run_at=paris_noon)
        store.insert_jobs([job])
        stored = store.get_job(job.id, owner=None)
        assert stored.updated_at == paris_noon
        assert stored.updated_at.utcoffset() == timedelta(0)
        assert stored.updated_at.microsecond == 123456
        assert stored.last_run_at is not None
        assert stored.last_run_at.tzinfo is not None
        assert stored.last_run_at.utcoffset() == timedelta(0)

    def test_unknown_job_is_not_found(self, store: Store) -> None:
        with pytest.raises(NotFoundError, match="nosuchjob"):
            store.get_job("nosuchjob", owner=None)

    def test_a_job_read_for_update_is_the_stored_one_scoped_to_its_owner(
        self, store: Store, job: Job
    ) -> None:
        with store.atomic():
            assert store.get_job_for_update(job.id, owner="alice") == job
            with pytest.raises(NotFoundError):
                store.get_job_for_update(job.id, owner="bob")
            with pytest.raises(NotFoundError, match="nosuchjob"):
                store.get_job_for_update("nosuchjob", owner=None)

    def test_a_job_read_for_update_holds_off_another_writer_until_the_end(
        self, open_store: OpenStore
    ) -> None:
        """Two engines (two store objects) each change a job from what they read: the second
        waits for the first's transaction, reads its write and keeps it."""
        first, second = open_store(), open_store()
        job = make_job()
        first.insert_jobs([job])
        reading = threading.Event()

        def count_a_run() -> None:
            reading.set()
            with second.atomic():
                read = second.get_job_for_update(job.id, owner=None)
                second.update_jobs([read.evolve(run_count=read.run_count + 1)])

        with first.atomic():
            held = first.get_job_for_update(job.id, owner=None)
            other = threading.Thread(target=count_a_run)
            other.start()
            assert reading.wait(30)
            other.join(0.5)
            assert other.is_alive(), "the second writer waits for this transaction"
            first.update_jobs([held.evolve(name="renamed")])
        other.join(30)
        stored = first.get_job(job.id, owner=None)
        assert (stored.name, stored.run_count) == ("renamed", 1)

    def test_a_duplicate_id_is_refused_by_name_and_the_batch_with_it(self, store: Store) -> None:
        first = make_job()
        store.insert_jobs([first])
        newcomer = make_job()
        with pytest.raises(ConflictError, match=first.id):
            store.insert_jobs([newcomer, first.evolve(name="again")])
        assert store.count_jobs(owner=None) == 1
        assert store.get_job(first.id, owner=None).name == first.name

    def test_the_same_id_twice_in_one_batch_is_refused(self, store: Store) -> None:
        job = make_job()
        with pytest.raises(ConflictError, match=job.id):
            store.insert_jobs([job, job.evolve(name="twin")])
        assert store.count_jobs(owner=None) == 0

    def test_update_replaces_the_stored_job(self, store: Store, job: Job) -> None:
        changed = job.evolve(
            name="renamed",
            status=JobStatus.PAUSED,
            next_occurrence=T0 + minutes(10),
            next_fire_at=T0 + minutes(10),
            run_count=1,
            last_status=RunStatus.SUCCEEDED,
            options=JobOptions.from_json({"exclusive": False}),
            updated_at=T0 + minutes(1),
        )
        store.update_jobs([changed])
        assert store.get_job(job.id, owner="alice") == changed

    def test_update_of_an_unknown_job_is_refused_and_changes_nothing(
        self, store: Store, job: Job
    ) -> None:
        ghost = make_job()
        with pytest.raises(NotFoundError, match=ghost.id):
            store.update_jobs([job.evolve(name="renamed"), ghost])
        assert store.get_job(job.id, owner=None).name == job.name

    def test_update_keeps_the_owner(self, store: Store, job: Job) -> None:
        store.update_jobs([job.evolve(owner="mallory", name="renamed")])
        assert store.get_job(job.id, owner="alice").name == "renamed"
        with pytest.raises(NotFoundError):
            store.get_job(job.id, owner="mallory")

    def test_delete_removes_the_job_and_its_runs(self, store: Store, job: Job) -> None:
        other = make_job()
        store.insert_jobs([other])
        assert job.next_occurrence is not None
        store.insert_runs([make_run(job, job.next_occurrence), make_run(other, T0)])
        store.delete_job(job.id, owner="alice")
        with pytest.raises(NotFoundError):
            store.get_job(job.id, owner=None)
        assert store.list_runs(owner=None, where=RunFilter(job_id=job.id)) == []
        assert len(store.list_runs(owner=None)) == 1

    def test_delete_of_an_unknown_job_is_not_found(self, store: Store) -> None:
        with pytest.raises(NotFoundError, match="nosuchjob"):
            store.delete_job("nosuchjob", owner=None)

    # --- owner scoping -----------------------------------------------------------------------

    def test_another_owner_cannot_see_or_touch_a_job(self, store: Store, job: Job) -> None:
        assert job.next_occurrence is not None
        run = make_run(job, job.next_occurrence)
        store.insert_runs([run])
        with pytest.raises(NotFoundError):
            store.get_job(job.id, owner="bob")
        with pytest.raises(NotFoundError):
            store.delete_job(job.id, owner="bob")
        with pytest.raises(NotFoundError):
            store.get_run(run.id, owner="bob")
        assert store.list_jobs(owner="bob") == []
        assert store.list_runs(owner="bob") == []
        assert store.count_jobs(owner="bob") == 0
        assert store.get_job(job.id, owner="alice") == job
        assert store.get_run(run.id, owner="alice") == run

    def test_system_access_sees_every_owner(self, store: Store) -> None:
        jobs = [make_job(owner="alice"), make_job(owner="bob"), make_job(owner="bob")]
        store.insert_jobs(jobs)
        assert store.count_jobs(owner=None) == 3
        assert store.count_jobs(owner="bob") == 2
        assert sorted(ids(store.list_jobs(owner=None))) == sorted(ids(jobs))
        assert sorted(ids(store.list_jobs(owner="bob"))) == sorted(ids(jobs[1:]))

    # --- listing and filters -------------------------------------------------------------------

    def test_list_jobs_is_newest_first(self, store: Store) -> None:
        jobs = [make_job(created_at=T0 + minutes(i)) for i in (2, 0, 1)]
        store.insert_jobs(jobs)
        listed = store.list_jobs(owner="alice")
        assert ids(listed) == [jobs[0].id, jobs[2].id, jobs[1].id]
        assert ids(store.list_jobs(owner="alice", where=JobFilter(limit=2))) == ids(listed[:2])

    def test_job_filters(self, store: Store) -> None:
        active = make_job(when="every 5m")
        paused = make_job(when="0 9 * * *", status=JobStatus.PAUSED)
        done = make_job(status=JobStatus.COMPLETED, next_occurrence=None, next_fire_at=None)
        recall = make_recall("analysis.ipynb")
        old_recall = make_recall("analysis.ipynb", status=JobStatus.CANCELLED)
        other_session = make_recall("other.ipynb", next_occurrence=None, next_fire_at=None)
        store.insert_jobs([active, paused, done, recall, old_recall, other_session])

        def listed(**fields: Any) -> set[str]:
            return set(ids(store.list_jobs(owner="alice", where=JobFilter(**fields))))

        assert listed(status=[JobStatus.PAUSED]) == {paused.id}
        assert listed(status=[JobStatus.COMPLETED, JobStatus.CANCELLED]) == {
            done.id,
            old_recall.id,
        }
        assert listed(kind=[JobKind.RECALL]) == {recall.id, old_recall.id, other_session.id}
        assert listed(kind=[JobKind.JOB, JobKind.WATCHER]) == {active.id, paused.id, done.id}
        assert listed(session="analysis.ipynb") == {recall.id, old_recall.id}
        assert listed(schedule_kind="interval") == {active.id}
        assert listed(schedule_kind="cron") == {paused.id}
        assert listed(pending_recalls_only=True) == {recall.id}
        assert listed(kind=[JobKind.RECALL], status=[JobStatus.ACTIVE]) == {
            recall.id,
            other_session.id,
        }

    # --- due jobs ---------------------------------------------------------------------------

    def test_due_jobs_are_active_earliest_first_within_the_limit(self, store: Store) -> None:
        def at(offset: float, **changes: Any) -> Job:
            instant = T0 + minutes(offset)
            return make_job(next_occurrence=instant, next_fire_at=instant, **changes)

        late, early, middle, exact = at(-1), at(-30), at(-10), at(0)
        future = at(1)
        paused = at(-20, status=JobStatus.PAUSED)
        cancelled = at(-20, status=JobStatus.CANCELLED)
        finished = make_job(status=JobStatus.ACTIVE, next_occurrence=None, next_fire_at=None)
        store.insert_jobs([late, early, middle, exact, future, paused, cancelled, finished])

        assert ids(store.due_jobs(T0, limit=10)) == [early.id, middle.id, late.id, exact.id]
        assert ids(store.due_jobs(T0, limit=2)) == [early.id, middle.id]
        assert store.due_jobs(T0 - minutes(31), limit=10) == []

    def test_due_jobs_of_every_owner(self, store: Store) -> None:
        jobs = [make_job(owner=owner, when="now") for owner in ("alice", "bob")]
        store.insert_jobs(jobs)
        assert sorted(ids(store.due_jobs(T0, limit=10))) == sorted(ids(jobs))

    def test_next_fire_at_is_the_earliest_active(self, store: Store) -> None:
        assert store.next_fire_at() is None
        soon = make_job(when="in 10m")
        later = make_job(when="in 2h")
        paused = make_job(when="in 1m", status=JobStatus.PAUSED)
        store.insert_jobs([later, soon, paused])
        assert store.next_fire_at() == T0 + minutes(10)
        store.update_jobs([soon.evolve(status=JobStatus.COMPLETED)])
        assert store.next_fire_at() == T0 + minutes(120)

    def test_settling_run_ends_applies_them_in_order_to_the_job_as_stored(
        self, store: Store
    ) -> None:
        def end(job: Job, status: RunStatus, others: int = 0, error: str | None = None) -> RunEnd:
            failed = status is RunStatus.FAILED
            one_shot = {RunStatus.SUCCEEDED: JobStatus.COMPLETED}.get(status, JobStatus.FAILED)
            return RunEnd(job.id, status, error, failed, others, one_shot, JobStatus.COMPLETED)

        done = make_job(next_occurrence=None, next_fire_at=None)
        broke = make_job(next_occurrence=None, next_fire_at=None)
        ahead = make_job(when="every 5m")
        busy = make_job(next_occurrence=None, next_fire_at=None)
        ran_out = make_job(when="every 5m", next_occurrence=None, next_fire_at=None)
        paused = make_job(status=JobStatus.PAUSED, next_occurrence=None, next_fire_at=None)
        cancelled = make_job(status=JobStatus.CANCELLED, next_occurrence=None, next_fire_at=None)
        overlapped = make_job(next_occurrence=None, next_fire_at=None)
        store.insert_jobs([done, broke, ahead, busy, ran_out, paused, cancelled, overlapped])
        later = T0 + minutes(1)
        store.settle_job_states(
            [
                end(done, RunStatus.SUCCEEDED),
                end(broke, RunStatus.FAILED, error="boom"),
                end(ahead, RunStatus.FAILED, error="first"),
                end(ahead, RunStatus.SUCCEEDED),
                end(busy, RunStatus.SUCCEEDED, others=1),
                end(ran_out, RunStatus.FAILED, error="last"),
                end(paused, RunStatus.SUCCEEDED),
                end(cancelled, RunStatus.FAILED),
                # The first end that leaves no run in flight decides; later ones keep it.
                end(overlapped, RunStatus.FAILED, others=1),
                end(overlapped, RunStatus.FAILED),
                end(overlapped, RunStatus.SUCCEEDED),
                RunEnd("no-such-job", RunStatus.SUCCEEDED, None, False, 0, *[JobStatus.FAILED] * 2),
            ],
            now=later,
        )
        got = {job.id: job for job in store.list_jobs(owner=None)}
        summary = {
            name: (got[job.id].status, got[job.id].last_status, got[job.id].failure_count)
            for name, job in [
                ("done", done),
                ("broke", broke),
                ("ahead", ahead),
                ("busy", busy),
                ("ran_out", ran_out),
                ("paused", paused),
                ("cancelled", cancelled),
                ("overlapped", overlapped),
            ]
        }
        assert summary == {
            "done": (JobStatus.COMPLETED, RunStatus.SUCCEEDED, 0),
            "broke": (JobStatus.FAILED, RunStatus.FAILED, 1),
            "ahead": (JobStatus.ACTIVE, RunStatus.SUCCEEDED, 1),
            "busy": (JobStatus.ACTIVE, RunStatus.SUCCEEDED, 0),
            "ran_out": (JobStatus.COMPLETED, RunStatus.FAILED, 1),
            "paused": (JobStatus.COMPLETED, RunStatus.SUCCEEDED, 0),
            "cancelled": (JobStatus.CANCELLED, RunStatus.FAILED, 1),
            "overlapped": (JobStatus.FAILED, RunStatus.SUCCEEDED, 2),
        }
        assert (got[broke.id].last_error, got[ahead.id].last_error) == ("boom", None)
        assert got[done.id].updated_at == later
        assert got[ahead.id].next_occurrence == ahead.next_occurrence

    def test_next_fire_at_after_an_instant_is_strictly_later(self, store: Store) -> None:
        soon, later = make_job(when="in 10m"), make_job(when="in 2h")
        store.insert_jobs([soon, later])
        assert store.next_fire_at(after=T0 + minutes(9)) == T0 + minutes(10)
        assert store.next_fire_at(after=T0 + minutes(10)) == T0 + minutes(120)
        assert store.next_fire_at(after=T0 + minutes(120)) is None

    # --- at most one pending recall per session -----------------------------------------------

    def test_a_second_pending_recall_in_a_session_is_refused(self, store: Store) -> None:
        pending = make_recall("analysis.ipynb")
        store.insert_jobs([pending])
        with pytest.raises(PendingRecallExists) as caught:
            store.insert_jobs([make_recall("analysis.ipynb", when="in 1h")])
        refused = caught.value
        assert isinstance(refused, ConflictError)
        assert (refused.session, refused.recall_id) == ("analysis.ipynb", pending.id)
        # The message names both, and no surface's commands: each surface adds its own.
        assert str(refused) == (
            f"session 'analysis.ipynb' already has a pending recall {pending.id}; cancel it first"
        )
        assert [j.id for j in store.list_jobs(owner="alice")] == [pending.id]

    def test_a_paused_recall_is_still_pending(self, store: Store) -> None:
        store.insert_jobs([make_recall("nb.ipynb", status=JobStatus.PAUSED)])
        with pytest.raises(ConflictError):
            store.insert_jobs([make_recall("nb.ipynb")])

    def test_a_recall_without_next_occurrence_is_not_pending(self, store: Store) -> None:
        spent = make_recall("nb.ipynb", next_occurrence=None, next_fire_at=None)
        store.insert_jobs([spent])
        store.insert_jobs([make_recall("nb.ipynb")])
        assert store.count_jobs(owner="alice") == 2

    def test_a_cancelled_or_completed_recall_is_not_pending(self, store: Store) -> None:
        store.insert_jobs(
            [
                make_recall("nb.ipynb", status=JobStatus.CANCELLED),
                make_recall("nb.ipynb", status=JobStatus.COMPLETED),
            ]
        )
        store.insert_jobs([make_recall("nb.ipynb")])
        assert store.count_jobs(owner="alice") == 3

    def test_sessions_and_owners_are_independent(self, store: Store) -> None:
        store.insert_jobs(
            [
                make_recall("one.ipynb"),
                make_recall("two.ipynb"),
                make_recall("one.ipynb", owner="bob"),
                make_job(session="one.ipynb"),
            ]
        )
        assert store.count_jobs(owner=None) == 4

    def test_two_pending_recalls_in_one_batch_are_refused(self, store: Store) -> None:
        first = make_recall("nb.ipynb")
        with pytest.raises(PendingRecallExists, match=first.id) as caught:
            store.insert_jobs([first, make_recall("nb.ipynb")])
        assert (caught.value.session, caught.value.recall_id) == ("nb.ipynb", first.id)
        assert store.count_jobs(owner=None) == 0

    def test_an_update_cannot_make_a_second_pending_recall(self, store: Store) -> None:
        pending = make_recall("nb.ipynb")
        spent = make_recall("nb.ipynb", status=JobStatus.COMPLETED, next_occurrence=None)
        store.insert_jobs([pending, spent])
        revived = spent.evolve(status=JobStatus.ACTIVE, next_occurrence=T0 + minutes(5))
        with pytest.raises(PendingRecallExists, match=pending.id) as caught:
            store.update_jobs([revived])
        assert (caught.value.session, caught.value.recall_id) == ("nb.ipynb", pending.id)
        assert store.get_job(spent.id, owner=None).status is JobStatus.COMPLETED
        # Cancelling the pending one first makes room.
        store.update_jobs([pending.evolve(status=JobStatus.CANCELLED), revived])
        assert store.get_job(spent.id, owner=None) == revived

    # --- runs -----------------------------------------------------------------------------

    def test_a_run_comes_back_equal(self, store: Store, job: Job) -> None:
        run = make_run(
            job,
            T0,
            status=RunStatus.FAILED,
            finished_at=T0 + timedelta(seconds=3),
            error="boom",
            engine_id="engine-1",
            trigger=RunTrigger.CATCHUP,
        )
        assert store.insert_runs([run]) == [run]
        assert store.get_run(run.id, owner="alice") == run

    def test_an_occurrence_is_inserted_once(self, store: Store, job: Job) -> None:
        first = make_run(job, T0)
        assert store.insert_runs([first]) == [first]
        again = make_run(job, T0, engine_id="second-engine")
        assert store.insert_runs([again]) == []
        assert ids(store.list_runs(owner=None)) == [first.id]
        assert store.get_run(first.id, owner=None).engine_id is None

    def test_insert_runs_reports_which_were_inserted(self, store: Store, job: Job) -> None:
        existing = make_run(job, T0)
        store.insert_runs([existing])
        fresh = [make_run(job, T0 + minutes(5)), make_run(job, T0 + minutes(10))]
        duplicate = make_run(job, T0)
        twin = make_run(job, T0 + minutes(5))
        inserted = store.insert_runs([fresh[0], duplicate, twin, fresh[1]])
        assert ids(inserted) == ids(fresh)
        assert len(store.list_runs(owner=None)) == 3

    def test_large_run_batches(self, store: Store, job: Job) -> None:
        first = [make_run(job, T0 + minutes(i)) for i in range(0, 3000, 2)]
        assert len(store.insert_runs(first)) == 1500
        second = [make_run(job, T0 + minutes(i)) for i in range(1500, 4500)]
        inserted = store.insert_runs(second)
        expected = [run for run in second if (run.scheduled_for - T0) >= minutes(3000)]
        expected += [
            run
            for run in second
            if minutes(1500) <= run.scheduled_for - T0 < minutes(3000)
            and (run.scheduled_for - T0) // minutes(1) % 2 == 1
        ]
        assert sorted(ids(inserted)) == sorted(ids(expected))

    def test_delete_runs_removes_those_runs_only(self, store: Store, job: Job) -> None:
        runs = [make_run(job, T0 + minutes(i)) for i in range(3)]
        store.insert_runs(runs)
        store.delete_runs([runs[0].id, runs[2].id, "no-such-run"])
        assert ids(store.list_runs(owner=None)) == [runs[1].id]
        # The occurrence of a deleted run can be recorded again (a withdrawn claim).
        assert ids(store.insert_runs([make_run(job, T0)])) != []

    def test_a_run_of_an_unknown_job_is_refused(self, store: Store) -> None:
        ghost = make_job()
        with pytest.raises(NotFoundError, match=ghost.id):
            store.insert_runs([make_run(ghost, T0)])

    def test_a_duplicate_run_id_is_refused(self, store: Store, job: Job) -> None:
        run = make_run(job, T0)
        store.insert_runs([run])
        with pytest.raises(ConflictError, match=run.id):
            store.insert_runs([run.evolve(scheduled_for=T0 + minutes(1))])

    def test_update_runs_replaces_all_but_the_output(self, store: Store, job: Job) -> None:
        run = make_run(job, T0, engine_id="e1")
        store.insert_runs([run])
        store.append_output(run.id, "streamed\n", limit=1000)
        finished = run.evolve(
            status=RunStatus.SUCCEEDED, finished_at=T0 + minutes(1), error=None, output=""
        )
        store.update_runs([finished])
        stored = store.get_run(run.id, owner="alice")
        assert stored == finished.evolve(output="streamed\n")

    def test_update_of_an_unknown_run_is_not_found(self, store: Store, job: Job) -> None:
        with pytest.raises(NotFoundError, match="nosuchrun"):
            store.update_runs([make_run(job, T0, id="nosuchrun")])

    def test_append_output_accumulates(self, store: Store, job: Job) -> None:
        run = make_run(job, T0)
        store.insert_runs([run])
        store.append_output(run.id, "one\n", limit=100)
        store.append_output(run.id, "two\n", limit=100)
        assert store.get_run(run.id, owner=None).output == "one\ntwo\n"

    def test_append_output_keeps_the_head_and_counts_what_it_drops(
        self, store: Store, job: Job
    ) -> None:
        run = make_run(job, T0)
        store.insert_runs([run])
        store.append_output(run.id, "a" * 150, limit=100)
        first = store.get_run(run.id, owner=None).output
        assert len(first) <= 100
        head, marker = first.split("\n", 1)
        assert set(head) == {"a"}
        dropped = 150 - len(head)
        assert marker == f"[... output truncated: {dropped} characters dropped]"

        store.append_output(run.id, "b" * 1000, limit=100)
        second = store.get_run(run.id, owner=None).output
        assert len(second) <= 100
        assert second.startswith(head)
        assert second.endswith(f"[... output truncated: {1150 - len(head)} characters dropped]")

    def test_append_output_to_an_unknown_run_is_not_found(self, store: Store) -> None:
        with pytest.raises(NotFoundError, match="nosuchrun"):
            store.append_output("nosuchrun", "text", limit=100)

    def test_list_runs_newest_first_with_filters(self, store: Store, job: Job) -> None:
        other = make_job()
        store.insert_jobs([other])
        old = make_run(job, T0, status=RunStatus.SUCCEEDED)
        new = make_run(job, T0 + minutes(10), status=RunStatus.FAILED)
        mid = make_run(other, T0 + minutes(5), status=RunStatus.SUCCEEDED)
        store.insert_runs([old, new, mid])

        def listed(**fields: Any) -> list[str]:
            return ids(store.list_runs(owner="alice", where=RunFilter(**fields)))

        assert listed() == [new.id, mid.id, old.id]
        assert listed(job_id=job.id) == [new.id, old.id]
        assert listed(status=[RunStatus.SUCCEEDED]) == [mid.id, old.id]
        assert listed(limit=1) == [new.id]

    def test_list_runs_since_finds_runs_created_or_finished_since(
        self, store: Store, job: Job
    ) -> None:
        created_before_finished_after = make_run(
            job, T0, created_at=T0, status=RunStatus.SUCCEEDED, finished_at=T0 + minutes(20)
        )
        created_before_still_running = make_run(job, T0 + minutes(1), created_at=T0 + minutes(1))
        created_after = make_run(job, T0 + minutes(15), created_at=T0 + minutes(15))
        created_at_since = make_run(job, T0 + minutes(10), created_at=T0 + minutes(10))
        store.insert_runs(
            [
                created_before_finished_after,
                created_before_still_running,
                created_after,
                created_at_since,
            ]
        )
        since = ids(store.list_runs(owner="alice", where=RunFilter(since=T0 + minutes(10))))
        assert sorted(since) == sorted(
            [created_before_finished_after.id, created_after.id, created_at_since.id]
        )

    def test_running_runs(self, store: Store, job: Job) -> None:
        other = make_job(owner="bob")
        store.insert_jobs([other])
        running = make_run(job, T0)
        done = make_run(job, T0 + minutes(5), status=RunStatus.SUCCEEDED)
        elsewhere = make_run(other, T0)
        store.insert_runs([running, done, elsewhere])
        assert sorted(ids(store.running_runs())) == sorted([running.id, elsewhere.id])
        assert ids(store.running_runs(job_id=job.id)) == [running.id]


class TestJobStates:
    """The engine's hot path: what firing and the end of runs change, without the JSON."""

    def test_states_are_read_by_id_and_unknown_ids_left_out(self, store: Store) -> None:
        once, every = make_job(when="in 30m"), make_job(when="every 5m", run_count=2)
        store.insert_jobs([once, every])
        states = store.get_job_states([every.id, "no-such-job", once.id, every.id])
        assert states == {once.id: JobState.of(once), every.id: JobState.of(every)}
        assert (states[once.id].schedule_kind, states[every.id].schedule_kind) == (
            "once",
            "interval",
        )
        assert store.get_job_states([]) == {}

    def test_a_state_write_changes_the_state_and_leaves_the_definition(
        self, store: Store, job: Job
    ) -> None:
        fired = job.evolve(
            status=JobStatus.PAUSED,
            next_occurrence=T0 + minutes(10),
            next_fire_at=T0 + minutes(10),
            run_count=3,
            failure_count=1,
            last_run_at=T0 + minutes(5),
            last_run_id="r3",
            last_status=RunStatus.FAILED,
            last_error="boom",
            updated_at=T0 + minutes(5),
        )
        # What the state does not carry is not written: the stored definition stays.
        store.update_job_states(
            [JobState.of(fired.evolve(name="renamed", options=JobOptions.from_json({"x": 1})))]
        )
        assert store.get_job(job.id, owner="alice") == fired
        assert JobState.of(job).applied_to(job) == job
        assert JobState.of(fired).applied_to(job) == fired

    def test_a_state_write_of_an_unknown_job_is_refused_whole(self, store: Store, job: Job) -> None:
        ghost = make_job(id="ghost-job")
        changed = JobState.of(job.evolve(run_count=7))
        with pytest.raises(NotFoundError, match="ghost-job"):
            store.update_job_states([changed, JobState.of(ghost)])
        assert store.get_job(job.id, owner="alice").run_count == 0

    def test_a_state_write_cannot_make_a_second_pending_recall(self, store: Store) -> None:
        pending = make_recall("nb.ipynb")
        spent = make_recall("nb.ipynb", next_occurrence=None, next_fire_at=None)
        store.insert_jobs([pending, spent])
        revived = JobState.of(spent.evolve(next_occurrence=T0, next_fire_at=T0))
        with pytest.raises(ConflictError):
            store.update_job_states([revived])
        assert store.get_job(spent.id, owner="alice").next_occurrence is None

    def test_a_run_state_write_changes_what_runs_change_only(self, store: Store, job: Job) -> None:
        run = make_run(job, T0, engine_id="e1", started_at=None)
        store.insert_runs([run])
        store.append_output(run.id, "out\n", limit=100)
        ended = run.evolve(
            status=RunStatus.FAILED,
            started_at=T0,
            finished_at=T0 + minutes(1),
            error="boom",
            engine_id="elsewhere",
            output="",
        )
        store.update_run_states([ended])
        assert store.get_run(run.id, owner="alice") == ended.evolve(engine_id="e1", output="out\n")

    def test_a_run_state_write_of_an_unknown_run_is_refused_whole(
        self, store: Store, job: Job
    ) -> None:
        run = make_run(job, T0)
        store.insert_runs([run])
        done = run.evolve(status=RunStatus.SUCCEEDED, finished_at=T0 + minutes(1))
        with pytest.raises(NotFoundError, match="no-such-run"):
            store.update_run_states([done, make_run(job, T0 + minutes(1), id="no-such-run")])
        assert store.get_run(run.id, owner="alice").status is RunStatus.RUNNING


class TestLeaseStore:
    def test_orphaned_runs_are_interrupted_and_live_ones_left_alone(
        self, store: Store, job: Job
    ) -> None:
        now = T0 + minutes(30)
        store.renew_lease("alive", now=T0, until=now + minutes(1))
        store.renew_lease("expired", now=T0, until=now - minutes(1))
        store.renew_lease("me", now=T0, until=now + minutes(1))
        runs = {
            engine: make_run(job, T0 + minutes(i), engine_id=engine)
            for i, engine in enumerate(["alive", "expired", "gone", "me"])
        }
        finished = make_run(job, T0 + minutes(9), status=RunStatus.SUCCEEDED, engine_id="gone")
        store.insert_runs([*runs.values(), finished])

        orphans = store.interrupt_orphaned_runs(now=now, engine_id="me")

        interrupted = {"expired", "gone", "me"}
        assert sorted(ids(orphans)) == sorted(runs[e].id for e in interrupted)
        for run in orphans:
            assert run.status is RunStatus.INTERRUPTED
            assert run.finished_at == now
            assert run.engine_id is not None
            assert run.error is not None
            assert run.engine_id in run.error
            assert store.get_run(run.id, owner=None) == run
        assert store.get_run(runs["alive"].id, owner=None).status is RunStatus.RUNNING
        assert store.get_run(finished.id, owner=None).status is RunStatus.SUCCEEDED
        assert store.interrupt_orphaned_runs(now=now, engine_id="me") == []

    def test_a_renewed_lease_keeps_runs_and_a_released_one_does_not(
        self, store: Store, job: Job
    ) -> None:
        store.renew_lease("e1", now=T0, until=T0 + minutes(1))
        store.renew_lease("e1", now=T0 + minutes(1), until=T0 + minutes(10))
        run = make_run(job, T0, engine_id="e1")
        store.insert_runs([run])
        assert store.interrupt_orphaned_runs(now=T0 + minutes(5), engine_id="e2") == []
        store.release_lease("e1")
        assert ids(store.interrupt_orphaned_runs(now=T0 + minutes(5), engine_id="e2")) == [run.id]

    def test_of_two_claims_at_the_same_instant_one_takes_the_lease(self, store: Store) -> None:
        claims = [store.claim_lease("e1", now=T0, until=T0 + minutes(1 + n)) for n in range(2)]
        assert claims == [True, False]
        assert store.lease_until("e1") == T0 + minutes(1)

    def test_an_expired_or_released_lease_can_be_claimed_and_a_live_one_cannot(
        self, store: Store
    ) -> None:
        store.renew_lease("e1", now=T0, until=T0 + minutes(1))
        assert not store.claim_lease("e1", now=T0 + minutes(0.5), until=T0 + minutes(2))
        assert store.lease_until("e1") == T0 + minutes(1)
        # Ending at ``now`` is expired (as for the runs it orphans).
        assert store.claim_lease("e1", now=T0 + minutes(1), until=T0 + minutes(2))
        assert store.lease_until("e1") == T0 + minutes(2)
        store.release_lease("e1")
        assert store.claim_lease("e1", now=T0, until=T0 + minutes(3))
        assert store.lease_until("e1") == T0 + minutes(3)

    def test_a_lease_not_renewed_since_it_was_seen_is_taken_over_once(self, store: Store) -> None:
        store.renew_lease("e1", now=T0, until=T0 + minutes(1))
        seen = store.lease_until("e1")
        store.renew_lease("e1", now=T0 + minutes(0.2), until=T0 + minutes(1.2))  # alive
        later = T0 + minutes(0.4)
        assert not store.claim_lease("e1", now=later, until=later + minutes(1), ending_by=seen)
        seen = store.lease_until("e1")  # and now its holder is gone: no renewal comes
        assert store.claim_lease("e1", now=later, until=later + minutes(1), ending_by=seen)
        assert store.lease_until("e1") == later + minutes(1)
        # A second restart that saw the same lease comes too late.
        assert not store.claim_lease("e1", now=later, until=later + minutes(2), ending_by=seen)

    def test_claims_at_once_from_two_store_objects_give_the_lease_to_one(
        self, open_store: OpenStore
    ) -> None:
        stores = [open_store(), open_store()]
        rounds = 20  # many chances for the two statements to meet
        start = threading.Barrier(2, timeout=60)
        won: list[list[bool]] = [[], []]

        def claim(worker: int) -> None:
            for n in range(rounds):
                start.wait()
                won[worker].append(
                    stores[worker].claim_lease(f"e{n}", now=T0, until=T0 + minutes(1))
                )

        threads = [threading.Thread(target=claim, args=(n,)) for n in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert [first + second for first, second in zip(*won, strict=True)] == [1] * rounds


class TestTransactions:
    def test_atomic_rolls_back_everything_on_error(self, store: Store) -> None:
        job = make_job()

        def write_then_fail() -> None:
            with store.atomic():
                store.insert_jobs([job])
                store.insert_runs([make_run(job, T0)])
                store.renew_lease("e1", now=T0, until=T0 + minutes(1))
                raise Midway

        with pytest.raises(Midway):
            write_then_fail()
        assert store.count_jobs(owner=None) == 0
        assert store.list_runs(owner=None) == []
        assert store.running_runs() == []

    def test_a_failed_nested_block_rolls_back_only_itself(self, store: Store) -> None:
        kept, dropped = make_job(), make_job()

        def write_then_fail() -> None:
            with store.atomic():
                store.insert_jobs([dropped])
                raise Midway

        with store.atomic():
            store.insert_jobs([kept])
            with pytest.raises(Midway):
                write_then_fail()
            store.insert_runs([make_run(kept, T0)])
        assert ids(store.list_jobs(owner=None)) == [kept.id]
        assert len(store.list_runs(owner=None)) == 1

    def test_a_refused_batch_inside_atomic_leaves_nothing_behind(self, store: Store) -> None:
        first = make_job()
        newcomer = make_job()
        with store.atomic():
            store.insert_jobs([first])
            with pytest.raises(ConflictError):
                store.insert_jobs([newcomer, first])
        assert ids(store.list_jobs(owner=None)) == [first.id]

    def test_reads_inside_atomic_see_its_writes(self, store: Store) -> None:
        job = make_job(when="now")
        with store.atomic():
            store.insert_jobs([job])
            assert ids(store.due_jobs(T0, limit=5)) == [job.id]
            assert store.get_job(job.id, owner="alice") == job


class TestPersistenceAndConcurrency:
    def test_everything_is_there_after_a_restart(self, open_store: OpenStore) -> None:
        first = open_store()
        job = make_job(when="every 5m")
        recall = make_recall("nb.ipynb")
        run = make_run(job, T0, engine_id="e1")
        first.insert_jobs([job, recall])
        first.insert_runs([run])
        first.append_output(run.id, "hello\n", limit=100)
        first.renew_lease("e1", now=T0, until=T0 + minutes(1))
        first.close()

        second = open_store()
        assert second.get_job(job.id, owner="alice") == job
        assert second.get_job(recall.id, owner="alice") == recall
        assert second.get_run(run.id, owner="alice") == run.evolve(output="hello\n")
        assert second.interrupt_orphaned_runs(now=T0, engine_id="e2") == []
        with pytest.raises(ConflictError):
            second.insert_jobs([make_recall("nb.ipynb")])

    def test_two_store_objects_in_two_threads_lose_no_writes(self, open_store: OpenStore) -> None:
        stores = [open_store(), open_store()]
        job = make_job()
        stores[0].insert_jobs([job])
        run = make_run(job, T0)
        stores[0].insert_runs([run])
        errors: list[BaseException] = []
        start = threading.Barrier(2)

        def work(store: Store, worker: int) -> None:
            start.wait()
            try:
                for i in range(40):
                    with store.atomic():
                        store.insert_jobs([make_job(name=f"w{worker}-{i}")])
                        store.append_output(run.id, f"{worker}", limit=10_000)
            except BaseException as exc:  # reported to the main thread below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(s, n)) for n, s in enumerate(stores)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        assert stores[1].count_jobs(owner=None) == 81
        output = stores[0].get_run(run.id, owner=None).output
        assert sorted(output) == ["0"] * 40 + ["1"] * 40

    def test_one_store_object_shared_by_threads(self, store: Store) -> None:
        job = make_job()
        store.insert_jobs([job])
        errors: list[BaseException] = []
        start = threading.Barrier(3)

        def work(worker: int) -> None:
            start.wait()
            try:
                for i in range(30):
                    with store.atomic():
                        store.insert_runs([make_run(job, T0 + minutes(worker * 100 + i))])
                        store.list_runs(owner=None, where=RunFilter(limit=1))
            except BaseException as exc:  # reported to the main thread below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        assert len(store.list_runs(owner=None)) == 90
