"""Creating jobs in batches: payloads shared by a batch's jobs are validated once, a bad one
still names its index, defaults cannot be altered, and the batch is stored as built."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.model import Job, JobKind, Policies, new_id
from jupyter_recall.engine.jobs import NewJob, build_jobs, create_jobs
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


def note(message: str = "shared") -> dict[str, Any]:
    return {"type": "notification", "message": message}


def test_a_shared_action_is_validated_once_and_its_copy_shared(store: SQLiteStore) -> None:
    shared = note()
    jobs = create(store, [NewJob(when=SOON, action=shared) for _ in range(5)])
    first = jobs[0].action
    assert first == shared
    assert first is not shared
    assert all(job.action is first for job in jobs)
    assert all(job.target is jobs[0].target and job.options is jobs[0].options for job in jobs)
    assert [job.name for job in jobs] == ["shared"] * 5


def test_equal_actions_submitted_apart_are_validated_apart(store: SQLiteStore) -> None:
    jobs = create(store, [NewJob(when=SOON, action=note()) for _ in range(3)])
    assert jobs[0].action == jobs[1].action == jobs[2].action
    assert len({id(job.action) for job in jobs}) == 3


def test_interleaved_payloads_each_keep_their_own(store: SQLiteStore) -> None:
    one, two = note("one"), note("two")
    kernel = {"type": "kernel", "path": "analysis.ipynb"}
    code = {"type": "code", "code": "print(1)\nprint(2)"}
    news = [
        NewJob(when=SOON, action=one),
        NewJob(when=SOON, action=two, name="named"),
        NewJob(when=SOON, action=two),
        NewJob(when=SOON, action=code, target=kernel, options={"exclusive": True}),
        NewJob(when=SOON, action=one, options={"exclusive": False}),
        NewJob(when=SOON, action=code, target=kernel),
    ]
    jobs = create(store, news)
    assert [job.name for job in jobs] == ["one", "named", "two", "print(1)", "one", "print(1)"]
    assert [job.action for job in jobs] == [one, two, two, code, one, code]
    assert [job.target["type"] for job in jobs] == ["server"] * 3 + ["kernel", "server", "kernel"]
    assert [job.options for job in jobs] == [
        {},
        {},
        {},
        {"exclusive": True},
        {"exclusive": False},
        {},
    ]
    stored = {job.id: job for job in store.list_jobs(owner=OWNER)}
    assert [stored[job.id] for job in jobs] == jobs


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        (NewJob(when=SOON, action={"type": "telepathy"}), "action.type"),
        (NewJob(when=SOON, action=note(), target={"type": "moon"}), "target.type"),
        (NewJob(when=SOON, action={"type": "code", "code": "x = 1"}), "target.type"),
        (NewJob(when=SOON, action=note(), options={"exclusive": "yes"}), "options.exclusive"),
    ],
    ids=["action", "target", "action-on-target", "options"],
)
def test_a_bad_payload_among_shared_ones_names_its_index(
    store: SQLiteStore, bad: NewJob, field: str
) -> None:
    shared = note()
    news = [NewJob(when=SOON, action=shared) for _ in range(6)]
    news[4] = bad
    with pytest.raises(ValidationError) as caught:
        create(store, news)
    assert caught.value.field == f"jobs[4].{field}"
    with pytest.raises(ValidationError) as offset:
        build(news, first=100)
    assert offset.value.field == f"jobs[104].{field}"
    assert store.list_jobs(owner=OWNER) == []


def test_a_bad_payload_shared_by_several_jobs_names_the_first(store: SQLiteStore) -> None:
    bad = {"type": "notification", "message": ""}
    news = [NewJob(when=SOON, action=note()) for _ in range(3)]
    news += [NewJob(when=SOON, action=bad) for _ in range(3)]
    with pytest.raises(ValidationError) as caught:
        create(store, news)
    assert caught.value.field == "jobs[3].action.message"


def test_the_default_target_and_options_cannot_be_altered() -> None:
    first, second = NewJob(when=SOON, action=note()), NewJob(when=SOON, action=note())
    assert first.target is second.target
    assert first.options is second.options
    with pytest.raises(TypeError):
        first.target["type"] = "kernel"  # type: ignore[index]
    with pytest.raises(TypeError):
        first.options["exclusive"] = True  # type: ignore[index]
    (job,) = build([first])
    assert job.target == {"type": "server"}
    assert type(job.target) is dict
    assert job.options == {}
    assert type(job.options) is dict
    assert NewJob(when=SOON, action=note()).target == {"type": "server"}


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
            action={"type": "instruction", "instruction": "check the log"},
            target={"type": "kernel", "kernel_id": "k1"},
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
