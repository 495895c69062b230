"""Records for store tests: jobs and runs as the outer layers build them, at fixed instants."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from typing import Any, TypeVar

from jupyter_recall.core.model import (
    Job,
    JobKind,
    Run,
    RunStatus,
    RunTrigger,
    new_id,
)
from jupyter_recall.core.records import Action, CodeAction, InstructionAction, KernelTarget
from jupyter_recall.core.when import parse_when
from jupyter_recall.store.base import Store

UTC = timezone.utc
T0 = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)

OpenStore = Callable[[], Store]
"""Opens a new store object on the test's database each time it is called (the contract's
restart and concurrency tests open two)."""

S = TypeVar("S", bound=Store)


@contextmanager
def closing_all(open_one: Callable[[], S]) -> Iterator[Callable[[], S]]:
    """``open_one``, remembering the stores it opens to close them all at the end."""
    opened: list[S] = []

    def open_and_remember() -> S:
        store = open_one()
        opened.append(store)
        return store

    yield open_and_remember
    for store in opened:
        store.close()


class Midway(Exception):
    """Raised by a test in the middle of a transaction."""


def make_job(
    *,
    owner: str = "alice",
    kind: JobKind = JobKind.JOB,
    when: str = "in 30m",
    created_at: datetime = T0,
    **changes: Any,
) -> Job:
    """A valid job as the outer layers would build it: schedule parsed at ``created_at``."""
    spec = parse_when(when, now=created_at, tz="UTC")
    first = spec.first_fire_time()
    if kind is JobKind.RECALL:
        action: Action = InstructionAction("check the training log")
    else:
        action = CodeAction("print('hello')")
    job = Job(
        id=new_id(),
        owner=owner,
        name=f"{kind.value} {when}",
        kind=kind,
        when=when,
        schedule=spec,
        action=action,
        target=KernelTarget(path="analysis.ipynb"),
        created_at=created_at,
        updated_at=created_at,
        next_occurrence=first,
        next_fire_at=first,
    )
    return job.evolve(**changes)


def make_recall(session: str, *, owner: str = "alice", **changes: Any) -> Job:
    return make_job(kind=JobKind.RECALL, owner=owner, session=session, **changes)


def make_run(
    job: Job,
    scheduled_for: datetime,
    *,
    status: RunStatus = RunStatus.RUNNING,
    created_at: datetime | None = None,
    **changes: Any,
) -> Run:
    run = Run(
        id=new_id(),
        job_id=job.id,
        owner=job.owner,
        scheduled_for=scheduled_for,
        trigger=RunTrigger.SCHEDULE,
        status=status,
        created_at=created_at or scheduled_for,
        started_at=scheduled_for,
    )
    return run.evolve(**changes)


def minutes(n: float) -> timedelta:
    return timedelta(minutes=n)


def ids(records: list[Job] | list[Run]) -> list[str]:
    return [record.id for record in records]
