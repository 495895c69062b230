"""The contract of plugin owners switched off (``OwnerStore``), written against the protocol
only; each test runs on every kind of store in ``conftest.STORES``."""

from __future__ import annotations

import pytest

from jupyter_recall.store.base import Store
from tests.store.factories import T0, Midway, OpenStore, minutes


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
