"""What the relay reads back for other engines' notes (``EventRelay._deliver``): a run's
start and end carry the run as the store holds it now, even when the same batch took that
run from the relay's cache to label its output.

The notes arrive as payloads on a feed (in production PostgreSQL's NOTIFY, covered by
``test_postgres_events``); here the payloads are handed to the relay directly, so the order
of notes within one batch is exact rather than left to timing.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytest

from jupyter_recall.core.model import Job, Run, RunStatus
from jupyter_recall.engine import event_notes
from jupyter_recall.engine.event_notes import Note
from jupyter_recall.engine.event_relay import EventRelay
from jupyter_recall.engine.events import (
    RUN_FINISHED,
    RUN_OUTPUT,
    RUN_STARTED,
    Event,
    EventBus,
    RunFinished,
    RunOutput,
    RunStarted,
)
from jupyter_recall.store.changes import EventListener
from jupyter_recall.store.sqlite import SQLiteStore
from tests.engine.support import T0
from tests.store.factories import make_job, make_run, minutes

pytestmark = pytest.mark.anyio

T = TypeVar("T")
OTHER = "engine-b"


class Unused:
    """The relay's feed: this test delivers payloads itself and publishes nothing."""

    payload_limit = 8000

    def publish_events(self, payloads: Sequence[str]) -> None:
        raise AssertionError("nothing is published: no other engine has a view open")

    def listen_for_events(self, listener: EventListener) -> Callable[[], None]:
        return lambda: None


async def at_once(read: Callable[[], T]) -> T:
    return read()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    opened = SQLiteStore(tmp_path / "jobs.sqlite")
    yield opened
    opened.close()


def stored_run(store: SQLiteStore, **changes: Any) -> tuple[Job, Run]:
    job = make_job()
    store.insert_jobs([job])
    [run] = store.insert_runs([make_run(job, T0, **changes)])
    return job, run


def relay_with_view(store: SQLiteStore) -> tuple[EventRelay, list[Event]]:
    bus = EventBus()
    seen: list[Event] = []
    bus.subscribe(seen.append, remote=True)
    return EventRelay(Unused(), store, bus, at_once, engine_id="engine-a"), seen


async def hear(relay: EventRelay, notes: Sequence[Note]) -> None:
    """``notes`` arrive from the other engine in one payload and are delivered as one batch."""
    for payload in event_notes.pack(notes, 8000, OTHER, itertools.count()):
        relay._received(payload)
    await relay._deliver()


def note(kind: str, run: Run, **more: str | int) -> Note:
    return {"e": OTHER, "k": kind, "o": run.owner, "r": run.id, "j": run.job_id, **more}


async def test_an_end_after_output_in_one_batch_carries_the_ended_run(
    store: SQLiteStore,
) -> None:
    job, run = stored_run(store)
    relay, seen = relay_with_view(store)
    await hear(relay, [note(RUN_STARTED, run)])  # the relay now holds the run, running

    ended = run.evolve(status=RunStatus.SUCCEEDED, finished_at=T0 + minutes(1))
    store.update_runs([ended])
    await hear(relay, [note(RUN_OUTPUT, run, t="last line\n", n=0), note(RUN_FINISHED, run)])

    started, output, finished = seen
    assert isinstance(started, RunStarted)
    assert started.run.status is RunStatus.RUNNING
    assert isinstance(output, RunOutput)
    assert output.text == "last line\n"
    assert isinstance(finished, RunFinished)
    assert finished.run.status is RunStatus.SUCCEEDED
    assert finished.run.finished_at == T0 + minutes(1)
    assert finished.job is not None
    assert finished.job.id == job.id


async def test_output_of_a_known_run_is_labelled_without_reading_it_again(
    store: SQLiteStore,
) -> None:
    _, run = stored_run(store)
    relay, seen = relay_with_view(store)
    await hear(relay, [note(RUN_STARTED, run)])

    store.delete_runs([run.id])  # were the run read again, its output would be dropped
    await hear(relay, [note(RUN_OUTPUT, run, t="a\n", n=0), note(RUN_OUTPUT, run, t="b\n", n=2)])

    assert [e.text for e in seen if isinstance(e, RunOutput)] == ["a\n", "b\n"]
    assert all(e.run is not None and e.run.id == run.id for e in seen)


async def test_a_start_output_and_end_in_one_batch_all_carry_the_stored_run(
    store: SQLiteStore,
) -> None:
    _, run = stored_run(store, status=RunStatus.FAILED, error="boom")
    relay, seen = relay_with_view(store)

    await hear(
        relay, [note(RUN_STARTED, run), note(RUN_OUTPUT, run, t="x", n=0), note(RUN_FINISHED, run)]
    )

    assert [e.type for e in seen] == [RUN_STARTED, RUN_OUTPUT, RUN_FINISHED]
    assert all(e.run is not None and e.run.error == "boom" for e in seen)
