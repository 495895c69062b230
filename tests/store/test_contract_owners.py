"""The contract of plugin owners switched off (``OwnerStore``), written against the protocol
only; each test runs on every kind of store in ``conftest.STORES``."""

from __future__ import annotations

import threading

import pytest

from jupyter_recall.engine.owners import Reconciled, parse_declaration, reconcile
from jupyter_recall.store.base import Store
from tests.store.factories import T0, Midway, OpenStore, make_job, minutes


def test_an_owner_switched_on_has_no_record(store: Store) -> None:
    assert store.get_disabled_owner("alice", "acme") is None
    assert store.disabled_owners("alice") == []
    assert store.disabled_owners(None) == []


def test_switching_off_records_the_jobs_it_held(store: Store) -> None:
    store.put_disabled_owner("alice", "acme", ["j2", "j1"], now=T0)
    assert store.get_disabled_owner("alice", "acme") == ["j2", "j1"]
    store.put_disabled_owner("alice", "quiet", [], now=T0)
    assert store.get_disabled_owner("alice", "quiet") == []


def test_switching_off_again_replaces_the_held_jobs(store: Store) -> None:
    store.put_disabled_owner("alice", "acme", ["j1"], now=T0)
    store.put_disabled_owner("alice", "acme", ["j3"], now=T0 + minutes(5))
    assert store.get_disabled_owner("alice", "acme") == ["j3"]
    assert store.disabled_owners("alice") == [("alice", "acme")]


def test_switching_on_deletes_the_record_of_that_user_only(store: Store) -> None:
    store.put_disabled_owner("alice", "acme", ["j1"], now=T0)
    store.put_disabled_owner("bob", "acme", ["j9"], now=T0)
    store.delete_disabled_owner("alice", "acme")
    assert store.get_disabled_owner("alice", "acme") is None
    assert store.get_disabled_owner("bob", "acme") == ["j9"]
    store.delete_disabled_owner("alice", "acme")  # switched on already: nothing to do


def test_owners_switched_off_are_listed_per_user_or_all_in_order(store: Store) -> None:
    store.put_disabled_owner("bob", "zeta", [], now=T0)
    store.put_disabled_owner("alice", "zeta", [], now=T0)
    store.put_disabled_owner("alice", "acme", [], now=T0)
    assert store.disabled_owners("alice") == [("alice", "acme"), ("alice", "zeta")]
    assert store.disabled_owners("bob") == [("bob", "zeta")]
    assert store.disabled_owners(None) == [
        ("alice", "acme"),
        ("alice", "zeta"),
        ("bob", "zeta"),
    ]


def test_a_write_rolled_back_with_its_transaction_leaves_nothing(store: Store) -> None:
    def switch_off_then_fail() -> None:
        with store.atomic():
            store.put_disabled_owner("alice", "acme", ["j1"], now=T0)
            raise Midway

    with pytest.raises(Midway):
        switch_off_then_fail()
    assert store.get_disabled_owner("alice", "acme") is None


def test_owners_switched_off_survive_a_restart(open_store: OpenStore) -> None:
    first = open_store()
    first.put_disabled_owner("alice", "acme", ["j1"], now=T0)
    first.close()
    assert open_store().get_disabled_owner("alice", "acme") == ["j1"]


def _declare(store: Store, message: str) -> Reconciled:
    (spec,) = parse_declaration(
        [
            {
                "key": "nightly",
                "when": "every 1h",
                "action": {"type": "notification", "message": message},
            }
        ]
    )
    return reconcile(store, "acme", [spec], owner="alice", now=T0, default_tz="UTC")


def test_two_engines_declaring_one_owner_at_once_take_turns(open_store: OpenStore) -> None:
    """The second declaration waits for the first's transaction, then finds its job: no
    second insert of the same key (a 409 from the owned-key index), no lost update."""
    first, second = open_store(), open_store()
    other = store_of_someone_else = open_store()
    store_of_someone_else.insert_jobs([make_job(plugin_owner="acme", key="nightly", owner="bob")])
    outcome: list[Reconciled | BaseException] = []
    waiting = threading.Event()

    def declare_from_the_second_engine() -> None:
        waiting.set()
        try:
            outcome.append(_declare(second, "from B"))
        except BaseException as error:  # reported by the assertion below
            outcome.append(error)

    with first.atomic():
        assert [job.owner for job in first.owned_jobs_for_update("alice", "acme")] == []
        thread = threading.Thread(target=declare_from_the_second_engine)
        thread.start()
        assert waiting.wait(30)
        thread.join(0.5)
        assert thread.is_alive(), "the second declaration waits for this transaction"
        created = _declare(first, "from A").created
    thread.join(30)
    [result] = outcome
    assert isinstance(result, Reconciled), result
    assert [job.id for job in result.updated] == [job.id for job in created]
    [job] = other.owned_jobs_for_update("alice", "acme")
    assert job.action == created[0].action.__class__(message="from B")
    assert [j.owner for j in other.owned_jobs_for_update("bob", "acme")] == ["bob"]
