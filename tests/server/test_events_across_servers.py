"""Two live Jupyter servers on one PostgreSQL database: a sidebar (SSE stream) open on server A
shows, as it happens and once each, what server B does: the jobs created and changed on B, and
a run B executes in a kernel, with its output (``engine/event_relay.py``, over NOTIFY; no
polling: A's poll relay is SQLite's and does nothing here)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.server.live_server import LiveServer
from tests.standalone.test_postgres_scenario import EventReader, server_on
from tests.standalone.test_standalone import headless_code, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

PROBE = {"when": "in 1 hour", "action": {"type": "notification", "message": "probe"}}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "root"
    path.mkdir()
    return path


@pytest.fixture
def servers(root: Path, postgres_db_url: str) -> Iterator[tuple[LiveServer, LiveServer]]:
    """A fires nothing (so every run is B's); B fires."""
    server_a = server_on(root, postgres_db_url)  # run_scheduler=False
    args = (f"--RecallApp.db_url={postgres_db_url}",)
    server_b = LiveServer(root, root.parent / "unused-b.sqlite", args=args)
    try:
        yield server_a.start(), server_b.start()
    finally:
        for server in (server_a, server_b):
            if server.process is not None:
                server.stop()


def documents(reader: EventReader) -> list[dict]:
    return [json.loads(line[5:]) for line in list(reader.lines) if line.startswith("data: {")]


def of_job(reader: EventReader, job_id: str, kind: str) -> list[dict]:
    found = []
    for document in documents(reader):
        if document.get("type") != kind:
            continue
        subject = document["run"] or document["job"]
        if (subject.get("job_id") or subject.get("id")) == job_id:
            found.append(document)
    return found


def wait_until_b_sends_to(reader: EventReader, server_b: LiveServer) -> None:
    """B learns that A has a view open from a NOTIFY of A's: until then B's events are not
    sent. Probe jobs created on B until one reaches A's stream."""
    deadline = time.monotonic() + 60
    while True:
        probe = server_b.request("POST", "/api/recall/jobs", PROBE)
        time.sleep(1.5)
        if of_job(reader, probe["id"], "job.created"):
            return
        assert time.monotonic() < deadline, "B never sent its events to A's stream"


def test_a_stream_on_server_a_shows_a_run_server_b_executes(servers, root: Path) -> None:
    server_a, server_b = servers
    reader = EventReader(server_a)
    try:
        wait_until_b_sends_to(reader, server_b)
        code = "import time\nprint('first line', flush=True)\ntime.sleep(1)\nprint('second line')"
        job = server_b.request("POST", "/api/recall/jobs", headless_code(code))
        later = server_b.request("POST", "/api/recall/jobs", PROBE)
        server_b.request("POST", f"/api/recall/jobs/{later['id']}/pause")
        (finished,) = wait_until(lambda: of_job(reader, job["id"], "run.finished"), timeout=90)
        wait_until(lambda: of_job(reader, later["id"], "job.updated"), timeout=30)
        time.sleep(2.0)  # a repeated event would come now
    finally:
        reader.stop.set()
    assert len(of_job(reader, job["id"], "job.created")) == 1
    (started,) = of_job(reader, job["id"], "run.started")
    assert started["run"]["id"] == finished["run"]["id"]
    assert finished["run"]["status"] == "succeeded", finished
    output = of_job(reader, job["id"], "run.output")
    text = "".join(chunk["text"] for chunk in sorted(output, key=lambda c: c["offset"]))
    assert "first line\n" in text
    assert "second line\n" in text
    assert len({chunk["offset"] for chunk in output}) == len(output), "a chunk came twice"
    (paused,) = of_job(reader, later["id"], "job.updated")
    assert paused["job"]["status"] == "paused"
    runs = server_a.request("GET", f"/api/recall/jobs/{job['id']}/runs")["runs"]
    assert [run["id"] for run in runs] == [finished["run"]["id"]]


ASK = {
    "tool": "shell.run",
    "summary": "shell.run(command='make deploy')",
    "source": "kernel policy",
    "asked_by": "kernel:deploy.ipynb",
}


def of_approval(reader: EventReader, approval_id: str, kind: str) -> list[dict]:
    return [
        document
        for document in documents(reader)
        if document.get("type") == kind and document["approval"]["id"] == approval_id
    ]


def test_an_approval_asked_on_one_server_and_decided_on_the_other_shows_on_both(
    servers,
) -> None:
    server_a, server_b = servers
    on_a, on_b = EventReader(server_a), EventReader(server_b)
    try:
        wait_until_b_sends_to(on_a, server_b)
        wait_until_b_sends_to(on_b, server_a)  # and A to B's stream
        record = server_b.request("POST", "/api/recall/approvals", ASK)
        (created,) = wait_until(lambda: of_approval(on_a, record["id"], "approval.created"))
        assert created["approval"]["summary"] == ASK["summary"]
        path = f"/api/recall/approvals/{record['id']}"
        server_a.request("POST", path, {"decision": "approve", "note": "from A"})
        (decided,) = wait_until(lambda: of_approval(on_b, record["id"], "approval.decided"))
        time.sleep(2.0)  # a repeated event would come now
    finally:
        on_a.stop.set()
        on_b.stop.set()
    assert (decided["approval"]["status"], decided["approval"]["note"]) == ("approved", "from A")
    # Each event once on each stream: the server's own, and the other's relayed, never echoed.
    for reader in (on_a, on_b):
        assert len(of_approval(reader, record["id"], "approval.created")) == 1
        assert len(of_approval(reader, record["id"], "approval.decided")) == 1
