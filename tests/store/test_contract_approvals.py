"""The contract of the approvals inbox (``ApprovalStore``), written against the protocol only;
each test runs on every kind of store in ``conftest.STORES``."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from jupyter_recall.core.approvals import APPROVED, DENIED, EXPIRED, PENDING, ApprovalRecord
from jupyter_recall.store.base import ApprovalCursor, Store
from tests.store.factories import T0, OpenStore


def approval(approval_id: str, owner: str = "alice", minutes: int = 0) -> ApprovalRecord:
    created = T0 + timedelta(minutes=minutes)
    return ApprovalRecord(
        id=approval_id,
        owner=owner,
        tool="shell.run",
        summary="shell.run(command='ls')",
        source="server config RecallApp.tool_policies",
        asked_by="run:r1",
        created_at=created,
        expires_at=created + timedelta(minutes=5),
    )


class TestApprovalStore:
    def test_a_record_reads_back_as_written(self, store: Store) -> None:
        record = approval("a1")
        store.insert_approval(record)
        assert store.get_approval("a1") == record
        assert store.get_approval("nope") is None

    def test_listing_is_owner_scoped_newest_first_and_filters_by_status(self, store: Store) -> None:
        for number in range(3):
            store.insert_approval(approval(f"a{number}", minutes=number))
        store.insert_approval(approval("b1", owner="bob"))
        assert [r.id for r in store.list_approvals("alice")] == ["a2", "a1", "a0"]
        assert [r.id for r in store.list_approvals("bob")] == ["b1"]
        store.decide_approval("a1", DENIED, decided_by="alice", note=None, now=T0)
        assert [r.id for r in store.list_approvals("alice", PENDING)] == ["a2", "a0"]
        assert [r.id for r in store.list_approvals("alice", DENIED)] == ["a1"]
        assert [r.id for r in store.list_approvals("alice", limit=1)] == ["a2"]

    def test_pages_follow_on_from_a_cursor_with_ties_broken_by_id(self, store: Store) -> None:
        # Two records of one instant: the cursor's id keeps either from being lost or repeated.
        for approval_id, minutes in (("a0", 0), ("a1", 1), ("a2", 1), ("a3", 2), ("a4", 3)):
            store.insert_approval(approval(approval_id, minutes=minutes))
        store.insert_approval(approval("b1", owner="bob", minutes=1))
        seen: list[str] = []
        after = None
        while True:
            page = store.list_approvals("alice", limit=2, after=after)
            seen += [record.id for record in page]
            if len(page) < 2:
                break
            after = ApprovalCursor(page[-1].created_at, page[-1].id)
        assert seen == ["a4", "a3", "a2", "a1", "a0"]
        store.decide_approval("a3", DENIED, decided_by="alice", note=None, now=T0)
        cursor = ApprovalCursor(T0 + timedelta(minutes=3), "a4")
        assert [r.id for r in store.list_approvals("alice", PENDING, after=cursor)] == [
            "a2",
            "a1",
            "a0",
        ]

    def test_pending_records_of_some_askers_across_owners_oldest_first(self, store: Store) -> None:
        asked = {"a1": "kernel:nb.ipynb", "a2": "kernel:other.ipynb", "a3": "kernel:k-1"}
        for number, (approval_id, asked_by) in enumerate(asked.items()):
            store.insert_approval(replace(approval(approval_id, minutes=number), asked_by=asked_by))
        bobs = replace(approval("b1", owner="bob", minutes=5), asked_by="kernel:nb.ipynb")
        store.insert_approval(bobs)
        store.insert_approval(approval("r1"))  # asked by a run
        gone = ["kernel:nb.ipynb", "kernel:k-1"]
        assert [r.id for r in store.pending_approvals_asked_by(gone)] == ["a1", "a3", "b1"]
        store.decide_approval("a3", APPROVED, decided_by="alice", note=None, now=T0)
        assert [r.id for r in store.pending_approvals_asked_by(gone)] == ["a1", "b1"]
        assert store.pending_approvals_asked_by([]) == []

    def test_the_first_decision_wins_and_is_recorded_with_who_and_when(self, store: Store) -> None:
        store.insert_approval(approval("a1"))
        at = T0 + timedelta(seconds=30)
        assert store.decide_approval("a1", APPROVED, decided_by="alice", note="ok", now=at)
        later = at + timedelta(seconds=1)
        assert not store.decide_approval("a1", DENIED, decided_by="bob", note=None, now=later)
        assert not store.decide_approval("absent", DENIED, decided_by="bob", note=None, now=at)
        expected = replace(
            approval("a1"), status=APPROVED, decided_by="alice", decided_at=at, note="ok"
        )
        assert store.get_approval("a1") == expected

    def test_pending_records_past_their_time_expire_once(self, store: Store) -> None:
        store.insert_approval(approval("old"))
        store.insert_approval(approval("new", minutes=10))
        store.insert_approval(approval("done"))
        store.decide_approval("done", APPROVED, decided_by="alice", note=None, now=T0)
        now = T0 + timedelta(minutes=6)
        assert store.expire_approvals(now=now) == ["old"]
        assert store.expire_approvals(now=now) == []
        old = store.get_approval("old")
        assert old is not None
        assert (old.status, old.decided_at) == (EXPIRED, now)
        assert not store.decide_approval("old", APPROVED, decided_by="alice", note=None, now=now)

    def test_records_survive_reopening(self, open_store: OpenStore) -> None:
        open_store().insert_approval(approval("a1"))
        assert open_store().get_approval("a1") == approval("a1")
