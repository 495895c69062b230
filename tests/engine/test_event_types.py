"""One class per event type: the bus builds the class of each type, and the document the
server sends for it keeps the wire format (type, owner, job, run, text, offset)."""

from jupyter_recall.core.approvals import ApprovalRecord
from jupyter_recall.core.model import Run, RunStatus, RunTrigger
from jupyter_recall.engine.events import (
    APPROVAL_EVENTS,
    EVENT_TYPES,
    ApprovalCreated,
    ApprovalDecided,
    ApprovalExpired,
    Event,
    EventBus,
    JobCreated,
    JobDeleted,
    JobUpdated,
    RunFinished,
    RunOutput,
    RunStarted,
)
from jupyter_recall.server.sse import event_document
from tests.store.factories import T0, make_job


def _run(job_id: str) -> Run:
    return Run(
        id="r1",
        job_id=job_id,
        owner="alice",
        scheduled_for=T0,
        trigger=RunTrigger.SCHEDULE,
        status=RunStatus.RUNNING,
        created_at=T0,
    )


def _approval() -> ApprovalRecord:
    return ApprovalRecord(
        id="a1",
        owner="alice",
        tool="shell.run",
        summary="shell.run(command='ls')",
        source="kernel policy",
        asked_by="kernel:nb.ipynb",
        created_at=T0,
        expires_at=T0,
    )


def test_the_bus_builds_one_class_per_event_type():
    bus = EventBus()
    seen: list[Event] = []
    bus.subscribe(seen.append)
    job = make_job()
    run = _run(job.id)
    for kind in ("job.created", "job.updated", "job.deleted"):
        bus.job(kind, job)
    bus.run("run.started", run, job=job)
    bus.run("run.output", run, text="hi\n", offset=3)
    bus.run("run.finished", run)
    record = _approval()
    for kind in ("approval.created", "approval.decided", "approval.expired"):
        bus.emit(APPROVAL_EVENTS[kind]("alice", record))
    assert [type(event) for event in seen] == [
        JobCreated,
        JobUpdated,
        JobDeleted,
        RunStarted,
        RunOutput,
        RunFinished,
        ApprovalCreated,
        ApprovalDecided,
        ApprovalExpired,
    ]
    assert [event.type for event in seen] == list(EVENT_TYPES)
    output = seen[4]
    assert isinstance(output, RunOutput)
    assert (output.text, output.offset, output.job) == ("hi\n", 3, None)


def test_every_event_class_keeps_the_wire_format():
    job = make_job()
    run = _run(job.id)
    created = event_document(JobCreated("alice", job))
    assert set(created) == {"type", "owner", "job", "run", "text", "offset"}
    assert (created["type"], created["job"]["id"], created["run"]) == ("job.created", job.id, None)
    output = event_document(RunOutput("alice", run, "x", 7))
    assert (output["type"], output["job"], output["text"], output["offset"]) == (
        "run.output",
        None,
        "x",
        7,
    )
    assert output["run"]["id"] == "r1"
    finished = event_document(RunFinished("alice", run, job))
    assert (finished["type"], finished["job"]["id"], finished["text"]) == (
        "run.finished",
        job.id,
        None,
    )


def test_an_approval_event_keeps_the_document_the_inbox_streamed():
    decided = event_document(ApprovalDecided("alice", _approval()))
    assert set(decided) == {"type", "owner", "job", "run", "text", "approval"}
    assert (decided["type"], decided["job"], decided["run"], decided["text"]) == (
        "approval.decided",
        None,
        None,
        None,
    )
    assert decided["approval"] == _approval().to_json()
