"""Live changes: Server-Sent Events and jupyter_events emission."""

from __future__ import annotations

import asyncio
import io
import json
import logging

from jupyter_events import EventLogger
from tornado.httpclient import AsyncHTTPClient, HTTPRequest

from jupyter_recall.engine.events import Event, JobDeleted
from jupyter_recall.server import sse
from jupyter_recall.server.sse import SCHEMA_ID, EventHub
from tests.server.rest import call
from tests.store.factories import make_job

NOTIFY = {"type": "notification", "message": "streamed"}


class SSEReader:
    """Collect the events of one /api/recall/events stream."""

    def __init__(self) -> None:
        self.buffer = ""
        self.events: list[tuple[str, dict]] = []
        self.heartbeats = 0
        self.changed = asyncio.Event()

    def feed(self, chunk: bytes) -> None:
        self.buffer += chunk.decode()
        while "\n\n" in self.buffer:
            block, self.buffer = self.buffer.split("\n\n", 1)
            if block.startswith(": heartbeat"):
                self.heartbeats += 1
            lines = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
            if "event" in lines:
                self.events.append((lines["event"], json.loads(lines["data"])))
        self.changed.set()

    async def wait_for(self, predicate, timeout=10.0):
        async def loop():
            while not predicate(self):
                self.changed.clear()
                await self.changed.wait()

        await asyncio.wait_for(loop(), timeout)


def open_stream(port, base_url, headers, reader):
    url = f"http://localhost:{port}{base_url}api/recall/events"
    request = HTTPRequest(url, headers=headers, streaming_callback=reader.feed, request_timeout=60)
    return asyncio.ensure_future(AsyncHTTPClient().fetch(request, raise_error=False))


async def test_sse_streams_job_and_run_changes_with_heartbeats(
    jp_fetch, jp_http_port, jp_base_url, jp_auth_header
):
    reader = SSEReader()
    stream = open_stream(jp_http_port, jp_base_url, jp_auth_header, reader)
    try:
        await reader.wait_for(lambda r: any(e == "open" for e, _ in r.events))
        job = await call(
            jp_fetch, "POST", "api/recall/jobs", {"when": "now", "action": NOTIFY}, expect=201
        )
        await reader.wait_for(lambda r: "run.finished" in [e for e, _ in r.events])
        types = [e for e, _ in reader.events]
        assert types.index("job.created") < types.index("run.started") < types.index("run.finished")
        finished = next(d for e, d in reader.events if e == "run.finished")
        assert finished["run"]["job_id"] == job["id"]
        assert finished["run"]["status"] == "succeeded"
        assert "output" not in finished["run"], "events carry no bulky output"
        await reader.wait_for(
            lambda r: any(
                e == "job.updated" and d["job"]["status"] == "completed" for e, d in r.events
            )
        )
        outputs = [d["text"] for e, d in reader.events if e == "run.output"]
        assert "streamed" in "".join(outputs)
        await reader.wait_for(lambda r: r.heartbeats >= 1, timeout=5)
    finally:
        stream.cancel()


async def test_jupyter_events_emits_changes(jp_fetch, jp_serverapp):
    seen: list[dict] = []

    async def listener(logger, schema_id, data):
        seen.append(data)

    jp_serverapp.event_logger.add_listener(schema_id=SCHEMA_ID, listener=listener)
    job = await call(
        jp_fetch, "POST", "api/recall/jobs", {"when": "in 1h", "action": NOTIFY}, expect=201
    )
    for _ in range(50):
        if seen:
            break
        await asyncio.sleep(0.05)
    assert seen, "no jupyter_events emitted"
    assert seen[0]["type"] == "job.created"
    assert seen[0]["job"]["id"] == job["id"]
    now = await call(
        jp_fetch, "POST", "api/recall/jobs", {"when": "now", "action": NOTIFY}, expect=201
    )
    for _ in range(100):
        if any(
            d["type"] == "job.updated"
            and d["job"]["id"] == now["id"]
            and d["job"]["status"] == "completed"
            for d in seen
        ):
            break
        await asyncio.sleep(0.05)
    finished = [
        d["type"]
        for d in seen
        if (d.get("job") or d.get("run") or {}).get("id") in (now["id"],)
        or (d.get("run") or {}).get("job_id") == now["id"]
    ]
    assert "run.finished" in finished
    assert any(
        d["type"] == "job.updated" and d["job"]["status"] == "completed"
        for d in seen
        if d.get("job") and d["job"]["id"] == now["id"]
    ), finished


async def test_event_documents_are_built_only_when_someone_listens(monkeypatch):
    built: list[Event] = []
    build = sse.event_document

    def counting(event: Event) -> dict:
        built.append(event)
        return build(event)

    monkeypatch.setattr(sse, "event_document", counting)
    logger = EventLogger()
    hub = EventHub(logger)
    hub.publish(JobDeleted("alice", make_job(owner="alice")))
    assert built == [], "nobody listens: no document"

    bobs = hub.open("bob")
    hub.publish(JobDeleted("alice", make_job(owner="alice")))
    assert built == [], "a stream of another owner does not count"
    assert bobs.empty()
    hub.publish(JobDeleted("bob", make_job(owner="bob")))
    assert len(built) == 1
    assert bobs.get_nowait()["owner"] == "bob"
    hub.close("bob", bobs)
    hub.publish(JobDeleted("bob", make_job(owner="bob")))
    assert len(built) == 1, "a closed stream does not count"

    seen: list[dict] = []

    async def listener(logger: EventLogger, schema_id: str, data: dict) -> None:
        seen.append(data)

    logger.add_listener(schema_id=SCHEMA_ID, listener=listener)
    hub.publish(JobDeleted("alice", make_job(owner="alice")))
    await logger.gather_listeners()
    assert len(built) == 2
    assert [d["owner"] for d in seen] == ["alice"]
    logger.remove_listener(schema_id=SCHEMA_ID, listener=listener)
    hub.publish(JobDeleted("alice", make_job(owner="alice")))
    assert len(built) == 2, "a removed listener does not count"

    recorded = io.StringIO()
    logger.register_handler(logging.StreamHandler(recorded))
    hub.publish(JobDeleted("carol", make_job(owner="carol")))
    assert len(built) == 3
    assert '"owner": "carol"' in recorded.getvalue()


def test_the_hub_listens_while_a_stream_is_open_or_jupyter_events_records():
    logger = EventLogger()
    hub = EventHub(logger)
    assert not hub.listening()
    queue = hub.open("bob")
    assert hub.listening()
    hub.close("bob", queue)
    assert not hub.listening()
    logger.register_handler(logging.StreamHandler(io.StringIO()))
    assert hub.listening()
    assert not EventHub(None).listening()


def spy_on_read_backs(store) -> list[list[str]]:
    """The job ids of each read back of settled job states (the store still does it)."""
    read_back: list[list[str]] = []
    get_job_states = store.get_job_states

    def counting(job_ids):
        read_back.append(list(job_ids))
        return get_job_states(job_ids)

    store.get_job_states = counting  # this test's server only: it stops with the test
    return read_back


def settled(event: str, document: dict, job_id: str) -> bool:
    job = document.get("job") or {}
    return event == "job.updated" and job.get("id") == job_id and job["status"] == "completed"


async def test_the_engine_reads_back_job_states_only_while_the_hub_listens(
    jp_fetch, jp_serverapp, jp_http_port, jp_base_url, jp_auth_header
):
    read_back = spy_on_read_backs(jp_serverapp.web_app.settings["jupyter_recall_scheduler"].store)
    unheard = await call(
        jp_fetch, "POST", "api/recall/jobs", {"when": "now", "action": NOTIFY}, expect=201
    )
    for _ in range(200):
        job = await call(jp_fetch, "GET", f"api/recall/jobs/{unheard['id']}")
        if job["status"] == "completed":
            break
        await asyncio.sleep(0.05)
    assert job["status"] == "completed", "the run's end is written without listeners too"
    assert read_back == [], "nobody listens: the settled state is not read back"

    reader = SSEReader()
    stream = open_stream(jp_http_port, jp_base_url, jp_auth_header, reader)
    try:
        await reader.wait_for(lambda r: any(e == "open" for e, _ in r.events))
        heard = await call(
            jp_fetch, "POST", "api/recall/jobs", {"when": "now", "action": NOTIFY}, expect=201
        )
        await reader.wait_for(lambda r: any(settled(e, d, heard["id"]) for e, d in r.events))
    finally:
        stream.cancel()
    assert [heard["id"]] in read_back
