"""Events across servers on one PostgreSQL database (``engine/event_relay.py``): what one
engine does reaches the live views (``remote`` listeners) of the others through NOTIFY, once,
never echoed back to its own, never to the others' non-view listeners; a chatty run is
bounded; nothing is published while no other engine has a view open."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

import anyio
import psycopg
import pytest

from jupyter_recall.core.clock import SystemClock
from jupyter_recall.core.model import Job, Run
from jupyter_recall.core.records import action_from_json
from jupyter_recall.engine.event_relay import OUTPUT_PER_RUN
from jupyter_recall.engine.events import Event, RunOutput
from jupyter_recall.engine.executors import CallableExecutor, OutputSink
from jupyter_recall.engine.jobs import NewJob
from jupyter_recall.engine.scheduler import Scheduler
from jupyter_recall.store.postgres_listen import EVENTS_CHANNEL
from jupyter_recall.store.urls import open_store
from tests.engine.support import OWNER, eventually

pytestmark = pytest.mark.anyio

CHATTY_LINES = 2000
LINE = "x" * 49 + "\n"


def notice(when: str, message: str) -> NewJob:
    return NewJob(when=when, action=action_from_json({"type": "notification", "message": message}))


async def speak(job: Job, run: Run, output: OutputSink) -> None:
    message = str(getattr(job.action, "message", ""))
    if message == "chatty":
        for _ in range(CHATTY_LINES):
            output.write(LINE)
    elif message.startswith("print"):
        for word in message.split()[1:]:
            output.write(word + "\n")
            await anyio.sleep(0.05)


@asynccontextmanager
async def engine(db_url: str, *, fire_owner: str | None = None) -> AsyncIterator[Scheduler]:
    store = open_store(db_url)
    scheduler = Scheduler(
        store, CallableExecutor(speak), clock=SystemClock(), fire_owner=fire_owner
    )
    try:
        async with scheduler:
            yield scheduler
    finally:
        store.close()


class View:
    """A live view (as the server's SSE hub is): a ``remote`` listener."""

    def __init__(self, scheduler: Scheduler) -> None:
        self.events: list[Event] = []
        self.stop = scheduler.subscribe(self.events.append, remote=True)
        scheduler.views_changed()

    def of_job(self, job_id: str, kind: str) -> list[Event]:
        return [e for e in self.events if e.type == kind and _job_id(e) == job_id]

    def output(self, run_id: str) -> list[RunOutput]:
        return [e for e in self.events if isinstance(e, RunOutput) and e.run.id == run_id]


def _job_id(event: Event) -> str:
    return event.run.job_id if event.run is not None else event.job.id if event.job else ""


async def seen_by(view: View, scheduler: Scheduler) -> None:
    """Wait until the other engine knows of the view (it learns of it from a NOTIFY): a job
    it creates reaches the view. Probes made before it knew are not relayed, and not awaited."""
    with anyio.fail_after(60):
        while True:
            probe = await scheduler.add_job(notice("in 1 hour", "probe"), owner=OWNER)
            await anyio.sleep(1.0)
            if view.of_job(probe.id, "job.created"):
                return


async def test_a_view_on_one_engine_sees_what_another_engine_does(postgres_db_url: str) -> None:
    # A fires nothing of OWNER's: every run here is B's.
    async with engine(postgres_db_url, fire_owner="nobody") as a:
        view = View(a)
        local: list[Event] = []
        a.subscribe(local.append)  # not a view: like outcome notifications
        async with engine(postgres_db_url) as b:
            await seen_by(view, b)
            job = await b.add_job(notice("in 1 second", "print one two three"), owner=OWNER)
            await eventually(lambda: bool(view.of_job(job.id, "run.finished")), timeout=30)
            later = await b.add_job(notice("in 1 hour", "later"), owner=OWNER)
            paused = await b.pause_job(later.id, owner=OWNER)
            await eventually(lambda: bool(view.of_job(later.id, "job.updated")), timeout=30)
            await anyio.sleep(1.0)  # a repeat would come now
    (created,) = view.of_job(job.id, "job.created")
    (started,) = view.of_job(job.id, "run.started")
    (finished,) = view.of_job(job.id, "run.finished")
    assert created.job is not None
    assert created.job.name == job.name
    assert started.run is not None
    assert finished.run is not None
    assert started.run.id == finished.run.id
    assert finished.run.status.value == "succeeded"
    chunks = view.output(finished.run.id)
    assert "".join(chunk.text for chunk in chunks) == "one\ntwo\nthree\n"
    assert [chunk.offset for chunk in chunks] == sorted(chunk.offset for chunk in chunks)
    assert view.of_job(job.id, "job.updated"), "the run's end did not update the job in the view"
    (updated,) = view.of_job(later.id, "job.updated")
    assert updated.job == paused
    assert local == [], "another engine's events reached a listener that is not a view"


async def test_an_engine_s_own_events_reach_its_view_once(postgres_db_url: str) -> None:
    async with engine(postgres_db_url) as a, engine(postgres_db_url, fire_owner="nobody") as b:
        view_a, view_b = View(a), View(b)
        await seen_by(view_b, a)
        await seen_by(view_a, b)
        job = await a.add_job(notice("in 1 second", "print hello"), owner=OWNER)
        await eventually(lambda: bool(view_b.of_job(job.id, "run.finished")), timeout=30)
        await anyio.sleep(1.0)
    for view in (view_a, view_b):
        assert len(view.of_job(job.id, "job.created")) == 1
        assert len(view.of_job(job.id, "run.started")) == 1
        assert len(view.of_job(job.id, "run.finished")) == 1


async def test_a_chatty_run_is_bounded_and_its_offsets_stay_true(postgres_db_url: str) -> None:
    async with engine(postgres_db_url, fire_owner="nobody") as a:
        view = View(a)
        async with engine(postgres_db_url) as b:
            await seen_by(view, b)
            job = await b.add_job(notice("in 1 second", "chatty"), owner=OWNER)
            await eventually(lambda: bool(view.of_job(job.id, "run.finished")), timeout=60)
            (finished,) = view.of_job(job.id, "run.finished")
            assert finished.run is not None
            stored = (await b.get_run(finished.run.id, owner=OWNER)).output
    whole = LINE * CHATTY_LINES
    assert stored == whole[: len(stored)]
    chunks = view.output(finished.run.id)
    relayed = sum(len(chunk.text) for chunk in chunks)
    assert 0 < relayed < len(whole) // 4, "the whole chatty output went through the database"
    for chunk in chunks:
        assert whole[chunk.offset : chunk.offset + len(chunk.text)] == chunk.text
    assert all(len(chunk.text) <= OUTPUT_PER_RUN for chunk in chunks)


@contextmanager
def heard_on_events_channel(db_url: str) -> Iterator[list[str]]:
    payloads: list[str] = []
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute(f"LISTEN {EVENTS_CHANNEL}")
        yield payloads
        payloads.extend(note.payload for note in conn.notifies(timeout=1.0))


async def test_nothing_is_published_while_no_other_engine_views(postgres_db_url: str) -> None:
    async with engine(postgres_db_url) as a, engine(postgres_db_url, fire_owner="nobody"):
        with heard_on_events_channel(postgres_db_url) as payloads:
            job = await a.add_job(notice("in 1 second", "print quiet"), owner=OWNER)
            await eventually(
                lambda: any(r.status.is_final for r in a.store.list_runs(owner=None)), timeout=30
            )
    assert job.id not in "".join(payloads)
    assert all('"k":"run.' not in payload for payload in payloads)
