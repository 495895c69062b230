"""What only the PostgreSQL store does: engines that claim due jobs without waiting for each
other, migrations recorded in the database (applied once by servers starting together), a
newer schema refused, and URLs whose password never shows."""

from __future__ import annotations

import threading

import pytest

from jupyter_recall.core.errors import StoreError
from jupyter_recall.core.model import JobStatus
from jupyter_recall.store.postgres import PostgresStore
from jupyter_recall.store.postgres_schema import MIGRATIONS, latest_version
from tests.store.factories import T0, ids, make_job, minutes


@pytest.fixture
def pg(postgres_db_url: str):
    opened: list[PostgresStore] = []

    def open_one() -> PostgresStore:
        store = PostgresStore(postgres_db_url)
        opened.append(store)
        return store

    yield open_one
    for store in opened:
        store.close()


def test_a_pass_skips_the_jobs_another_pass_holds_without_waiting(pg) -> None:
    first, second = pg(), pg()
    jobs = [make_job(when=f"in {n}m") for n in range(1, 5)]
    first.insert_jobs(jobs)
    held = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with first.atomic():
            first.due_jobs(T0 + minutes(10), limit=2)
            held.set()
            release.wait(timeout=30)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(timeout=30)
        with second.atomic():  # answers while the first transaction is still open
            taken = second.due_jobs(T0 + minutes(10), limit=10)
        assert not release.is_set()
    finally:
        release.set()
        holder.join(timeout=30)
    assert ids(taken) == ids(jobs[2:])


def test_servers_starting_together_apply_each_migration_once(pg) -> None:
    stores: list[PostgresStore] = []
    errors: list[BaseException] = []

    def start() -> None:
        try:
            stores.append(pg())
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    applied = [step.version for store in stores for step in store.applied_migrations]
    assert sorted(applied) == [step.version for step in MIGRATIONS]
    rows = stores[0]._rows("SELECT version, name FROM migrations ORDER BY version")
    assert rows == [(step.version, step.name) for step in MIGRATIONS]
    assert pg().applied_migrations == []


def test_migration_9_takes_the_next_fire_of_jobs_paused_before_it(pg) -> None:
    first = pg()
    paused = make_job(status=JobStatus.PAUSED, when="every 5m")
    active = make_job(when="every 5m")
    first.insert_jobs([paused, active])  # as a release before it paused: next fire kept
    assert first.get_job(paused.id, owner=None).next_fire_at is not None
    with first.atomic():
        first._rows("DELETE FROM migrations WHERE version = 9")
    second = pg()
    assert [m.version for m in second.applied_migrations] == [9]
    read = second.get_job(paused.id, owner=None)
    assert (read.next_fire_at, read.next_occurrence) == (None, paused.next_occurrence)
    assert second.get_job(active.id, owner=None) == active


def test_a_database_of_a_newer_release_is_refused(pg, postgres_db_url: str) -> None:
    store = pg()
    with store.atomic():
        store._write(
            "INSERT INTO migrations (version, name, applied_at) VALUES (%s, 'future', 'now')",
            (latest_version() + 1,),
        )
    with pytest.raises(StoreError, match="newer than this release"):
        PostgresStore(postgres_db_url)


def test_the_password_never_shows(postgres_db_url: str) -> None:
    url = postgres_db_url.replace("postgres@", "postgres:s3cret@")
    store = PostgresStore(url)  # trust authentication: the password is not checked
    try:
        assert "s3cret" not in repr(store)
        assert "s3cret" not in store.where
    finally:
        store.close()


def test_events_published_after_a_database_restart_go_out_on_a_new_connection(
    pg_cluster, postgres_db_url: str
) -> None:
    """The publishing connection the restart dropped fails its first use: the notes are sent
    again on a new one instead of being lost (other servers' views would miss them)."""
    publisher, listener = PostgresStore(postgres_db_url), PostgresStore(postgres_db_url)
    heard: list[str] = []
    arrived = threading.Condition()

    def hear(payload: str) -> None:
        with arrived:
            heard.append(payload)
            arrived.notify_all()

    stop = listener.listen_for_events(hear)
    try:
        publisher.publish_events(["before"])
        with arrived:
            assert arrived.wait_for(lambda: "before" in heard, 30)
        pg_cluster.restart()
        publisher.publish_events(["after"])  # raised StoreError: the old connection was cut
        # The listener reconnects by itself; what is published once it listens arrives.
        deadline = threading.Event()
        for _ in range(60):
            publisher.publish_events(["again"])
            with arrived:
                if arrived.wait_for(lambda: "again" in heard, 0.5):
                    break
            deadline.wait(0.1)
        assert "again" in heard
    finally:
        stop()
        publisher.close()
        listener.close()
