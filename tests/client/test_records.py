"""The typed records of REST documents: fields as typed properties, the document as a mapping."""

from __future__ import annotations

import pytest

from jupyter_recall.client.records import JobRecord, WatcherRecord

JOB = {
    "id": "3f9c2a1b7d0e",
    "name": "nightly",
    "kind": "job",
    "when": "every day at 02:00",
    "description": "every day at 02:00 (Europe/Paris)",
    "status": "active",
    "pending": True,
    "run_count": 3,
    "failure_count": 1,
    "failure_streak": 2,
    "paused_reason": "paused after 2 failed occurrences",
    "after": {"job": "0a1b2c3d4e5f", "on": "failed"},
    "last_status": "failed",
    "allowed_actions": ["cancel", "pause"],
    "policies": {"max_runs": None, "jitter": 0},
    "a_field_of_a_newer_server": 7,
}


def test_a_job_record_types_its_fields() -> None:
    job = JobRecord(JOB)
    assert (job.id, job.name, job.status, job.pending) == (
        "3f9c2a1b7d0e",
        "nightly",
        "active",
        True,
    )
    assert (job.run_count, job.failure_count, job.last_status) == (3, 1, "failed")
    assert job.allowed_actions == ("cancel", "pause")
    assert (job.failure_streak, job.paused_reason) == (2, "paused after 2 failed occurrences")
    assert job.after == {"job": "0a1b2c3d4e5f", "on": "failed"}
    assert job.policies == {"max_runs": None, "jitter": 0}
    assert job.next_fire_at is None
    assert job.last_error is None


def test_a_partial_job_document_reads_as_empty_fields() -> None:
    job = JobRecord({"id": "abc"})
    assert (job.name, job.run_count, job.pending, job.warnings) == ("", 0, False, ())
    assert job.after is None
    assert job.policies == {}
    assert job.options == {}


def test_the_record_is_the_document_as_a_read_only_mapping() -> None:
    job = JobRecord(JOB)
    assert dict(job) == JOB
    assert job["a_field_of_a_newer_server"] == 7
    field = "status"
    with pytest.raises(AttributeError, match="job fields are read-only"):
        setattr(job, field, "paused")
    unknown = "no_such_field"
    with pytest.raises(AttributeError):
        getattr(job, unknown)


def test_a_watcher_record() -> None:
    watcher = WatcherRecord(
        {
            "watcher_id": "w1",
            "tool_name": "http.get",
            "interval": 30,
            "checks": 2,
            "status": "running",
        }
    )
    assert (watcher.id, watcher.tool_name, watcher.interval, watcher.checks) == (
        "w1",
        "http.get",
        30,
        2,
    )
    assert watcher.last_result is None
    assert watcher.notifications == 0


def test_records_are_hashable_by_their_id() -> None:
    job = JobRecord(JOB)
    again = JobRecord(JOB)
    changed = JobRecord({**JOB, "status": "paused"})
    assert {job, again} == {job}, "the same job read twice is one member of a set"
    assert {job: "seen"}[again] == "seen"
    assert hash(changed) == hash(job)
    assert changed != job, "== compares the fields, as a mapping does"
    watcher = WatcherRecord({"watcher_id": JOB["id"], "tool_name": "http.get"})
    assert len({job, watcher}) == 2, "a job and a watcher of one id are two records"
