"""Engines of several servers on one PostgreSQL database: a job created or changed through one
server's store wakes the engines of the others at once (LISTEN/NOTIFY), with no polling, and
an engine whose listening connection was cut hears again once it is back."""

from __future__ import annotations

from datetime import datetime, timedelta

import anyio
import pytest

from jupyter_recall.core.clock import SystemClock
from jupyter_recall.core.model import Job, Run
from jupyter_recall.engine.executors import CallableExecutor, OutputSink
from jupyter_recall.engine.scheduler import Scheduler
from jupyter_recall.store.changes import ChangeFeed
from jupyter_recall.store.urls import open_store
from tests.engine.support import UTC, eventually
from tests.pg_cluster import Cluster
from tests.store.factories import make_job

pytestmark = pytest.mark.anyio

ASLEEP = 3600.0
"""The engines' max_sleep: far beyond the test, so that only a wake-up makes them fire."""


def due_in(seconds: float) -> Job:
    now = datetime.now(UTC)
    return make_job(when=(now + timedelta(seconds=seconds)).isoformat(), created_at=now)


async def test_a_job_written_by_another_server_wakes_a_sleeping_engine(
    postgres_db_url: str,
) -> None:
    executed: list[str] = []

    async def record(job: Job, run: Run, output: OutputSink) -> None:
        executed.append(job.id)

    engine_store = open_store(postgres_db_url)
    other_server = open_store(postgres_db_url)
    assert isinstance(engine_store, ChangeFeed)
    engine = Scheduler(
        engine_store, CallableExecutor(record), clock=SystemClock(), max_sleep=ASLEEP
    )
    try:
        async with engine:
            await anyio.sleep(0.3)  # its first pass found nothing: it sleeps for an hour
            job = due_in(0.5)
            other_server.insert_jobs([job])
            await eventually(lambda: executed == [job.id], timeout=20)
    finally:
        engine_store.close()
        other_server.close()


async def test_an_engine_hears_again_after_the_database_restarts(
    pg_cluster: Cluster, postgres_db_url: str
) -> None:
    executed: list[str] = []

    async def record(job: Job, run: Run, output: OutputSink) -> None:
        executed.append(job.id)

    engine_store = open_store(postgres_db_url)
    engine = Scheduler(
        engine_store, CallableExecutor(record), clock=SystemClock(), max_sleep=ASLEEP
    )
    try:
        async with engine:
            await anyio.sleep(0.3)
            await anyio.to_thread.run_sync(pg_cluster.restart)
            other_server = open_store(postgres_db_url)
            try:
                job = due_in(1.0)
                other_server.insert_jobs([job])
                await eventually(lambda: executed == [job.id], timeout=30)
            finally:
                other_server.close()
    finally:
        engine_store.close()


async def test_each_users_server_fires_only_its_users_jobs(postgres_db_url: str) -> None:
    executed: dict[str, list[str]] = {"alice": [], "bob": []}

    def recorder(user: str) -> CallableExecutor:
        async def record(job: Job, run: Run, output: OutputSink) -> None:
            executed[user].append(job.owner)

        return CallableExecutor(record)

    stores = {user: open_store(postgres_db_url) for user in executed}
    engines = [
        Scheduler(stores[user], recorder(user), clock=SystemClock(), fire_owner=user)
        for user in executed
    ]
    try:
        async with engines[0], engines[1]:
            now = datetime.now(UTC)
            jobs = [
                make_job(
                    owner=user, when=(now + timedelta(seconds=0.5)).isoformat(), created_at=now
                )
                for user in ("alice", "bob", "alice", "bob", "alice")
            ]
            stores["alice"].insert_jobs(jobs)  # whichever server writes them
            await eventually(lambda: sum(map(len, executed.values())) >= 5, timeout=20)
            await anyio.sleep(0.3)
    finally:
        for store in stores.values():
            store.close()
    assert executed == {"alice": ["alice"] * 3, "bob": ["bob"] * 2}
