"""Jobs declared by owners through the real engine on a manual clock: reconcile creates, updates
in place (runs kept), deletes and leaves alone; users cannot edit declared jobs; an owner
switched off fires nothing until switched on."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from jupyter_recall.core.clock import ManualClock
from jupyter_recall.core.errors import ConflictError, ValidationError
from jupyter_recall.core.model import JobStatus, RunStatus
from jupyter_recall.engine.owners import OwnedJob, parse_declaration
from jupyter_recall.engine.retention import DeletedRuns
from jupyter_recall.store.sqlite import SQLiteStore
from tests.engine.support import OWNER, T0, Events, Script, new, running, runs_of, wait_runs

pytestmark = pytest.mark.anyio
MINUTE = timedelta(minutes=1)


def spec(key: str, when: str = "every 1m", message: str = "ok", **extra: object) -> OwnedJob:
    (owned,) = parse_declaration(
        [
            {
                "key": key,
                "when": when,
                "action": {"type": "notification", "message": message},
                **extra,
            }
        ]
    )
    return owned


def keys(jobs: list) -> list[str]:
    return sorted(job.key for job in jobs)


def notebook_spec(key: str) -> OwnedJob:
    action = {"type": "notebook", "path": f"{key}.ipynb"}
    (owned,) = parse_declaration(
        [{"key": key, "when": "every 1m", "action": action, "target": {"type": "headless"}}]
    )
    return owned


async def test_the_runs_of_declared_notebook_jobs_deleted_are_told_by_id(
    db: Path, script: Script, clock: ManualClock
) -> None:
    # Their executed copies go with them (``ExecutedCopies``), as when a user deletes the job;
    # before, a declaration that dropped a notebook job left its copies behind.
    told: list[DeletedRuns] = []
    async with running(db, script, clock) as engine:
        engine.on_runs_deleted(told.append)
        first = await engine.reconcile(
            "reports", [notebook_spec("daily"), notebook_spec("weekly"), spec("note")], owner=OWNER
        )
        by_key = {job.key: job for job in first.created}
        clock.advance(60)
        for job in first.created:
            await wait_runs(engine, job.id, 1)
        runs = {
            key: [run.id for run in await runs_of(engine, job.id)] for key, job in by_key.items()
        }
        dropped = await engine.reconcile("reports", [notebook_spec("weekly")], owner=OWNER)
        assert keys(dropped.deleted) == ["daily", "note"]
        assert [(d.job.id, d.run_ids) for d in told] == [(by_key["daily"].id, tuple(runs["daily"]))]
        told.clear()
        assert keys(await engine.delete_owned("reports", owner=OWNER)) == ["weekly"]
        assert [(d.job.id, d.run_ids) for d in told] == [
            (by_key["weekly"].id, tuple(runs["weekly"]))
        ]


async def test_reconcile_creates_updates_deletes_and_keeps_history(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        first = await engine.reconcile("reports", [spec("a"), spec("b"), spec("c")], owner=OWNER)
        assert (keys(first.created), first.updated, first.deleted) == (["a", "b", "c"], [], [])
        a = next(job for job in first.created if job.key == "a")
        assert (a.plugin_owner, a.name, a.owner) == ("reports", "a", OWNER)
        clock.advance(60)
        await wait_runs(engine, a.id, 1)

        second = await engine.reconcile(
            "reports",
            [spec("a", message="changed"), spec("b"), spec("d", when="every 5m")],
            owner=OWNER,
        )
        assert keys(second.created) == ["d"]
        assert keys(second.updated) == ["a"]
        assert keys(second.deleted) == ["c"]
        assert keys(second.unchanged) == ["b"]
        updated = second.updated[0]
        assert updated.id == a.id
        assert updated.action.headline == "changed"
        assert [run.status for run in await runs_of(engine, a.id)] == [RunStatus.SUCCEEDED]

        again = await engine.reconcile(
            "reports",
            [spec("a", message="changed"), spec("b"), spec("d", when="every 5m")],
            owner=OWNER,
        )
        assert (len(again.created), len(again.updated), len(again.deleted)) == (0, 0, 0)
        assert keys(again.unchanged) == ["a", "b", "d"]
        # Another owner's and the user's own jobs are left alone.
        other = await engine.reconcile("other", [spec("a")], owner=OWNER)
        assert len(other.created) == 1
        assert keys(await engine.list_owned("reports", owner=OWNER)) == ["a", "b", "d"]
        assert len(await engine.delete_owned("reports", owner=OWNER)) == 3
        assert keys(await engine.list_owned("other", owner=OWNER)) == ["a"]


async def test_a_new_schedule_restarts_from_the_update(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        (job,) = (await engine.reconcile("r", [spec("k", when="every 1h")], owner=OWNER)).created
        assert job.next_occurrence == T0 + 60 * MINUTE
        clock.advance(120)
        (moved,) = (await engine.reconcile("r", [spec("k", when="every 10m")], owner=OWNER)).updated
        assert moved.id == job.id
        assert moved.next_occurrence == T0 + 12 * MINUTE


async def test_declared_jobs_are_read_only_to_users(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        (job,) = (await engine.reconcile("reports", [spec("a")], owner=OWNER)).created
        for refused in (
            engine.update_job(job.id, owner=OWNER, name="mine"),
            engine.delete_job(job.id, owner=OWNER),
            engine.cancel_job(job.id, owner=OWNER),
        ):
            with pytest.raises(ConflictError, match="managed by owner 'reports'"):
                await refused
        assert (await engine.pause_job(job.id, owner=OWNER)).status is JobStatus.PAUSED
        assert (await engine.resume_job(job.id, owner=OWNER)).status is JobStatus.ACTIVE


async def test_bad_declarations_name_the_field(
    db: Path, script: Script, clock: ManualClock
) -> None:
    with pytest.raises(ValidationError) as twice:
        parse_declaration([{"key": "a", "when": "in 1h", "action": {}}] * 2)
    assert twice.value.field == "jobs[1].key"
    with pytest.raises(ValidationError) as unknown:
        parse_declaration([{"key": "a", "when": "in 1h", "action": {}, "colour": "red"}])
    assert unknown.value.field == "jobs[0].colour"
    async with running(db, script, clock) as engine:
        with pytest.raises(ValidationError) as bad_when:
            await engine.reconcile("r", [spec("a"), spec("b", when="sometimes")], owner=OWNER)
        assert bad_when.value.field == "jobs[1].when"
        with pytest.raises(ValidationError) as bad_owner:
            await engine.reconcile("no spaces", [spec("a")], owner=OWNER)
        assert bad_owner.value.field == "owner"
        assert await engine.list_jobs(owner=OWNER) == []


async def test_owner_switched_off_fires_nothing_until_switched_on(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        result = await engine.reconcile(
            "r", [spec("every", when="every 1m"), spec("once", when="in 2m")], owner=OWNER
        )
        every, once = sorted(result.created, key=lambda job: job.key)
        paused = await engine.disable_owner("r", owner=OWNER)
        assert {job.status for job in paused} == {JobStatus.PAUSED}
        assert await engine.owner_disabled("r", owner=OWNER)
        with pytest.raises(ConflictError, match="switched off"):
            await engine.trigger_job(every.id, owner=OWNER)
        with pytest.raises(ConflictError, match="switched off"):
            await engine.resume_job(once.id, owner=OWNER)
        # Declared while off: created paused, held for switching on.
        (late,) = (
            await engine.reconcile(
                "r", [spec("every"), spec("once", when="in 2m"), spec("late")], owner=OWNER
            )
        ).created
        assert late.status is JobStatus.PAUSED
        clock.advance(5 * 60 + 30)
        await engine.list_jobs(owner=OWNER)
        assert script.calls == []

        resumed = await engine.enable_owner("r", owner=OWNER)
        assert len(resumed) == 3
        assert not await engine.owner_disabled("r", owner=OWNER)
        by_id = {job.id: job for job in resumed}
        # Recurring: continues from now. One-shot: due at once, its catch-up window decides.
        assert by_id[every.id].next_occurrence == T0 + 6 * MINUTE
        runs = await wait_runs(engine, once.id, 1)
        assert [(r.status.value, r.trigger.value) for r in runs] == [("succeeded", "schedule")]
        clock.advance(30)
        await wait_runs(engine, every.id, 1)


async def test_owned_columns_survive_a_reopen(db: Path, script: Script, clock: ManualClock) -> None:
    async with running(db, script, clock) as engine:
        await engine.reconcile("r", [spec("k")], owner=OWNER)
        await engine.disable_owner("r", owner=OWNER)
    store = SQLiteStore(db)
    try:
        (job,) = store.list_jobs(owner=OWNER)
        assert (job.plugin_owner, job.key) == ("r", "k")
        assert store.disabled_owners(None) == [(OWNER, "r")]
        assert store.get_disabled_owner(OWNER, "r") == [job.id]
    finally:
        store.close()


async def test_jobs_deleted_by_reconciling_cancel_the_jobs_waiting_for_them(
    db: Path, script: Script, clock: ManualClock
) -> None:
    """As deleting a job by hand: its dependents are cancelled in the same transaction, with
    job.deleted then job.updated; a dependent deleted with it is only deleted. A declared job
    may wait for another job too: its dependency is written as for any job, and it fires."""
    events = Events()
    async with running(db, script, clock) as engine:
        engine.subscribe(events, types={"job.updated", "job.deleted"})
        a, b = sorted(
            (await engine.reconcile("r", [spec("a"), spec("b")], owner=OWNER)).created,
            key=lambda job: job.key,
        )
        on_a = await engine.add_job(new(f"after {a.id} succeeds"), owner=OWNER)
        on_b = await engine.add_job(new(f"after {b.id} fails"), owner=OWNER)
        declared = spec("c", when=f"after {b.id} finishes")
        (c,) = (await engine.reconcile("r", [spec("a"), spec("b"), declared], owner=OWNER)).created
        await engine.trigger_job(b.id, owner=OWNER)
        await wait_runs(engine, c.id, 1)
        events.seen.clear()

        result = await engine.reconcile("r", [spec("b"), declared], owner=OWNER)
        assert [job.id for job in result.deleted] == [a.id]
        assert [job.id for job in result.cancelled] == [on_a.id]
        cancelled = await engine.get_job(on_a.id, owner=OWNER)
        assert cancelled.status is JobStatus.CANCELLED
        assert cancelled.last_error == f"cancelled: its upstream job {a.id} was deleted"
        assert engine.store.get_dependency(on_a.id) is None
        assert _seen(events) == [
            ("job.deleted", a.id, "active"),
            ("job.updated", on_a.id, "cancelled"),
        ]
        events.seen.clear()

        deleted = await engine.delete_owned("r", owner=OWNER)
        assert sorted(job.id for job in deleted) == sorted([b.id, c.id])
        assert (await engine.get_job(on_b.id, owner=OWNER)).status is JobStatus.CANCELLED
        assert sorted(_seen(events)[:2]) == sorted(
            [("job.deleted", b.id, "active"), ("job.deleted", c.id, "active")]
        )
        assert _seen(events)[2:] == [("job.updated", on_b.id, "cancelled")]


def _seen(events: Events) -> list[tuple[str, str, str]]:
    return [(e.type, e.job.id, e.job.status.value) for e in events.seen if e.job is not None]


async def test_a_declaration_waiting_for_an_unknown_job_is_refused_naming_it(
    db: Path, script: Script, clock: ManualClock
) -> None:
    async with running(db, script, clock) as engine:
        with pytest.raises(ValidationError) as refused:
            await engine.reconcile(
                "r", [spec("a"), spec("b", when="after nosuchjob succeeds")], owner=OWNER
            )
        assert refused.value.field == "jobs[1].after.job"
        assert await engine.list_jobs(owner=OWNER) == []
        # A declared job changed to wait for another one, and back to a time schedule.
        up = await engine.add_job(new("every 1h"), owner=OWNER)
        (job,) = (await engine.reconcile("r", [spec("a")], owner=OWNER)).created
        waiting = spec("a", when=f"after {up.id} succeeds")
        (changed,) = (await engine.reconcile("r", [waiting], owner=OWNER)).updated
        assert (changed.id, changed.next_fire_at) == (job.id, None)
        assert engine.store.get_dependency(job.id) is not None
        await engine.reconcile("r", [spec("a")], owner=OWNER)
        assert engine.store.get_dependency(job.id) is None
