"""The rule for which actions a job's state allows, and the reasons it gives for the others
(the same rule through a real server: ``tests/server/test_job_actions.py``)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from jupyter_recall.core.actions import (
    JobAction,
    allowed_action_names,
    allowed_actions,
    refusal,
    require,
)
from jupyter_recall.core.errors import ConflictError
from jupyter_recall.core.model import Job, JobKind, JobStatus
from jupyter_recall.core.records import SERVER_TARGET, NotificationAction
from jupyter_recall.core.when import parse_when

T0 = datetime(2030, 1, 1, tzinfo=timezone.utc)


def job(when: str, status: JobStatus = JobStatus.ACTIVE, **changes: object) -> Job:
    spec = parse_when(when, now=T0, tz="UTC")
    first = spec.first_fire_time()
    made = Job(
        id="j1",
        owner="me",
        name="n",
        kind=JobKind.JOB,
        when=when,
        schedule=spec,
        action=NotificationAction("m"),
        target=SERVER_TARGET,
        created_at=T0,
        updated_at=T0,
        status=status,
        next_occurrence=first,
        next_fire_at=first,
    )
    return made.evolve(**changes)


def names(found: frozenset[JobAction]) -> list[str]:
    return sorted(action.value for action in found)


@pytest.mark.parametrize(
    ("made", "expected"),
    [
        (job("every 1h"), ["cancel", "edit", "pause", "run_now", "skip"]),
        (job("in 1h"), ["cancel", "edit", "pause", "run_now"]),
        (job("now"), ["cancel", "edit", "pause", "run_now"]),
        (job("every 1h", JobStatus.PAUSED), ["cancel", "edit", "resume", "run_now", "skip"]),
        (job("in 1h", JobStatus.COMPLETED, next_occurrence=None), ["run_now"]),
        (job("every 1h", JobStatus.FAILED, next_occurrence=None), ["run_now"]),
        (job("every 1h", JobStatus.CANCELLED, next_occurrence=None), []),
        # A recurring job whose last occurrence is running: nothing left to skip.
        (job("every 1h", next_occurrence=None), ["cancel", "edit", "pause", "run_now"]),
        (job("every 1h", plugin_owner="ops", key="k"), ["pause", "run_now", "skip"]),
    ],
)
def test_allowed_actions_by_state(made: Job, expected: list[str]) -> None:
    assert names(allowed_actions(made)) == expected
    assert allowed_action_names(made) == expected  # what job documents list


def test_refusals_name_the_job_and_the_reason() -> None:
    done = job("in 1h", JobStatus.COMPLETED)
    assert refusal(done, JobAction.PAUSE) == "job j1 is completed: it cannot be paused"
    cancelled = job("in 1h", JobStatus.CANCELLED)
    assert refusal(cancelled, JobAction.CANCEL) == "job j1 is already cancelled"
    assert refusal(cancelled, JobAction.RUN_NOW) == "job j1 is cancelled: nothing more fires"
    assert refusal(job("every 1h"), JobAction.RESUME) == "job j1 is not paused: it is active"
    assert "cancel it instead" in str(refusal(job("in 1h"), JobAction.SKIP))
    managed = job("every 1h", plugin_owner="ops", key="k")
    assert "managed by owner 'ops'" in str(refusal(managed, JobAction.EDIT))
    with pytest.raises(ConflictError, match="already paused"):
        require(job("every 1h", JobStatus.PAUSED), JobAction.PAUSE)
    watcher = job("every 30s", JobStatus.PAUSED, kind=JobKind.WATCHER)
    assert refusal(watcher, JobAction.PAUSE) == "watcher j1 is already paused"
    active = watcher.evolve(status=JobStatus.ACTIVE)
    assert refusal(active, JobAction.RESUME) == "watcher j1 is not paused: it is active"


def test_a_job_fired_by_another_jobs_runs_has_no_scheduled_occurrence_to_skip() -> None:
    dependent = job("after 3f9c2a1b7d0e succeeds")
    assert refusal(dependent, JobAction.SKIP) == (
        "job j1 is fired by the runs of job 3f9c2a1b7d0e, not by a schedule: it has no "
        "scheduled occurrence to skip"
    )
    require(job("every 1h", JobStatus.PAUSED), JobAction.RESUME)
