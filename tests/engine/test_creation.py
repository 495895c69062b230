"""Creating jobs in batches: payload records shared by a batch's jobs stay shared, a bad
payload names its index, defaults cannot be altered, and the batch is stored as built."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import FrozenInstanceError
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.model import Job, JobKind, Policies, new_id
from jupyter_recall.core.records import (
    NO_OPTIONS,
    SERVER_TARGET,
    CodeAction,
    InstructionAction,
    JobOptions,
    KernelTarget,
    NotificationAction,
)
from jupyter_recall.engine.jobs import NewJob, build_jobs, create_jobs
from jupyter_recall.server.serialize import new_jobs_from_json
from jupyter_recall.store.sqlite import SQLiteStore
from tests.engine.support import OWNER, T0

SOON = (T0 + timedelta(minutes=5)).isoformat()


@pytest.fixture
def store(db: Path) -> Iterator[SQLiteStore]:
    store = SQLiteStore(db)
    yield store
    store.close()


def create(store: SQLiteStore, news: list[NewJob]) -> list[Job]:
    return create_jobs(store, news, owner=OWNER, now=T0, default_tz="UTC")


def build(news: list[NewJob], first: int = 0) -> list[Job]:
    return build_jobs(news, first=first, owner=OWNER, now=T0, default_tz="UTC")


def note(message: str = "shared") -> NotificationAction:
    return NotificationAction(message)


def test_a_shared_action_is_shared_by_its_jobs(store: SQLiteStore) -> None:
    shared = note()
    jobs = create(store, [NewJob(when=SOON, action=shared) for _ in range(5)])
    assert all(job.action is shared for job in jobs)
    assert all(job.target is SERVER_TARGET and job.options is NO_OPTIONS for job in jobs)
    assert [job.name for job in jobs] == ["shared"] * 5


def test_interleaved_payloads_each_keep_their_own(store: SQLiteStore) -> None:
    one, two = note("one"), note("two")
    kernel = KernelTarget(path="analysis.ipynb")
    code = CodeAction("print(1)\nprint(2)")
    exclusive = JobOptions.from_json({"exclusive": True})
    shared = JobOptions.from_json({"exclusive": False})
    news = [
        NewJob(when=SOON, action=one),
        NewJob(when=SOON, action=two, name="named"),
        NewJob(when=SOON, action=two),
        NewJob(when=SOON, action=code, target=kernel, options=exclusive),
        NewJob(when=SOON, action=one, options=shared),
        NewJob(when=SOON, action=code, target=kernel),
    ]
    jobs = create(store, news)
    assert [job.name for job in jobs] == ["one", "named", "two", "print(1)", "one", "print(1)"]
    assert [job.action for job in jobs] == [one, two, two, code, one, code]
    assert [job.target.type for job in jobs] == ["server"] * 3 + ["kernel", "server", "kernel"]
    assert [job.options.to_json() for job in jobs] == [
        {},
        {},
        {},
        {"exclusive": True},
        {"exclusive": False},
        {},
    ]
    stored = {job.id: job for job in store.list_jobs(owner=OWNER)}
    assert [stored[job.id] for job in jobs] == jobs


def test_an_action_that_cannot_run_on_its_target_names_its_index(store: SQLiteStore) -> None:
    news = [NewJob(when=SOON, action=note()) for _ in range(6)]
    news[4] = NewJob(when=SOON, action=CodeAction("x = 1"))
    with pytest.raises(ValidationError) as caught:
        create(store, news)
    assert caught.value.field == "jobs[4].target.type"
    with pytest.raises(ValidationError) as offset:
        build(news, first=100)
    assert offset.value.field == "jobs[104].target.type"
    assert store.list_jobs(owner=OWNER) == []


NOTE = {"type": "notification", "message": "shared"}


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ({"action": {"type": "telepathy"}}, "action.type"),
        ({"action": NOTE, "target": {"type": "moon"}}, "target.type"),
        ({"action": {"type": "code", "code": "x = 1"}}, "target.type"),
        ({"action": NOTE, "options": {"exclusive": "yes"}}, "options.exclusive"),
    ],
    ids=["action", "target", "action-on-target", "options"],
)
def test_a_bad_payload_among_shared_ones_names_its_index(bad: dict[str, Any], field: str) -> None:
    """Payloads are parsed at the edge (here the REST body of a batch), once per job."""
    items: list[dict[str, Any]] = [{"when": SOON, "action": NOTE} for _ in range(6)]
    items[4] = {"when": SOON, **bad}
    with pytest.raises(ValidationError) as caught:
        new_jobs_from_json({"jobs": items})
    assert caught.value.field == f"jobs[4].{field}"


def test_a_bad_payload_shared_by_several_jobs_names_the_first() -> None:
    bad = {"type": "notification", "message": ""}
    items = [{"when": SOON, "action": NOTE} for _ in range(3)]
    items += [{"when": SOON, "action": bad} for _ in range(3)]
    with pytest.raises(ValidationError) as caught:
        new_jobs_from_json({"jobs": items})
    assert caught.value.field == "jobs[3].action.message"


def test_the_default_target_and_options_cannot_be_altered() -> None:
    first, second = NewJob(when=SOON, action=note()), NewJob(when=SOON, action=note())
    assert first.target is second.target is SERVER_TARGET
    assert first.options is second.options is NO_OPTIONS
    with pytest.raises(FrozenInstanceError):
        first.options.exclusive = True  # type: ignore[misc]
    with pytest.raises(TypeError):
        first.options.values["exclusive"] = True  # type: ignore[index]
    (job,) = build([first])
    assert job.target.to_json() == {"type": "server"}
    assert job.options.to_json() == {}
    assert NewJob(when=SOON, action=note()).target.to_json() == {"type": "server"}


def test_ids_are_unique_and_shaped_as_new_id(store: SQLiteStore) -> None:
    jobs = create(store, [NewJob(when=SOON, action=note()) for _ in range(2000)])
    ids = [job.id for job in jobs]
    assert len(set(ids)) == len(ids)
    shape = re.compile(f"[0-9a-f]{{{len(new_id())}}}")
    assert all(shape.fullmatch(ident) for ident in ids)


def test_a_batch_is_stored_exactly_as_built(store: SQLiteStore) -> None:
    news = [
        NewJob(when=SOON, action=note()),
        NewJob(when="every 5m", action=note(), tz="Europe/Paris"),
        NewJob(
            when="in 1h",
            action=InstructionAction("check the log"),
            target=KernelTarget(kernel_id="k1"),
            kind=JobKind.RECALL,
            session="analysis.ipynb",
        ),
        NewJob(when=SOON, action=note(), policies=Policies(jitter=30.0, max_runs=1)),
        NewJob(when="2030-01-01T09:00:00Z", action=note(), name="zulu"),
    ]
    jobs = create(store, news)
    stored = {job.id: job for job in store.list_jobs(owner=OWNER)}
    assert [stored[job.id] for job in jobs] == jobs
    assert jobs[2].session == "analysis.ipynb"
    assert jobs[0].session is None
    assert jobs[4].schedule.canonical == "2030-01-01T09:00:00+00:00"
