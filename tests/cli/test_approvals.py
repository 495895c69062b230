"""`jupyter recall approvals`, `approve ID`, `deny ID` against a real server's approvals inbox."""

from __future__ import annotations

ASK = {
    "tool": "shell.run",
    "summary": "shell.run(command='make deploy')",
    "source": "kernel policy",
    "asked_by": "kernel:deploy.ipynb",
}


def ask(server, summary: str) -> str:
    record = server.request("POST", "/api/recall/approvals", {**ASK, "summary": summary})
    return str(record["id"])


def test_list_approve_and_deny_from_the_command_line(cli, server):
    approve_id = ask(server, "shell.run(command='make deploy')")
    deny_id = ask(server, "shell.run(command='rm -rf build')")

    listed = cli("approvals", "--json")
    assert listed.code == 0, listed.err
    pending = {record["id"]: record for record in listed.json()["approvals"]}
    assert {approve_id, deny_id} <= set(pending)
    assert pending[approve_id]["status"] == "pending"
    table = cli("approvals")
    assert "shell.run(command='make deploy')" in table.out
    assert "kernel:deploy.ipynb" in table.out

    approved = cli("approve", approve_id, "--note", "release day")
    assert approved.code == 0, approved.err
    assert approved.out.strip() == f"{approve_id} approved: shell.run(command='make deploy')"
    denied = cli("deny", deny_id, "--json")
    assert denied.code == 0, denied.err
    assert denied.json()["status"] == "denied"

    record = server.request("GET", f"/api/recall/approvals/{approve_id}")
    assert (record["status"], record["note"]) == ("approved", "release day")
    assert record["decided_by"]
    assert record["decided_at"]
    remaining = {r["id"] for r in cli("approvals", "--json").json()["approvals"]}
    assert not {approve_id, deny_id} & remaining
    decided = cli("approvals", "--status", "all", "--json").json()["approvals"]
    assert {approve_id, deny_id} <= {r["id"] for r in decided}


def test_a_second_decision_and_an_unknown_id_are_refused(cli, server):
    approval_id = ask(server, "shell.run(command='ls')")
    assert cli("deny", approval_id).code == 0
    again = cli("approve", approval_id)
    assert again.code != 0
    assert f"approval {approval_id} is already denied" in again.err
    unknown = cli("approve", "nope")
    assert unknown.code != 0
    assert "approval" in unknown.err
    assert "nope" in unknown.err
    typo = cli("approve", "no/such")
    assert typo.code != 0
    assert "approval 'no/such' not found (not an approval id:" in typo.err
    bad = cli("approvals", "--status", "maybe")
    assert bad.code != 0
    assert "status" in bad.err


def test_the_listing_reads_the_newest_pages_up_to_the_limit(cli, server):
    asked = [ask(server, f"shell.run(command='step {number}')") for number in range(3)]
    newest = cli("approvals", "--limit", "2", "--json")
    assert newest.code == 0, newest.err
    assert [record["id"] for record in newest.json()["approvals"]] == asked[:0:-1]
    table = cli("approvals", "--limit", "2")
    assert "step 2" in table.out
    assert "step 0" not in table.out
    assert "(the newest 2 records: --limit=0 lists all)" in table.err
    every = {
        record["id"] for record in cli("approvals", "--limit", "0", "--json").json()["approvals"]
    }
    assert set(asked) <= every
    negative = cli("approvals", "--limit", "-1")
    assert negative.code != 0
    assert "--limit" in negative.err
