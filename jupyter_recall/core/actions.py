"""Which actions a job's state allows: the one rule the engine enforces and every surface shows.

The engine refuses (``ConflictError``, a 409) exactly what ``refusal`` names; the REST API sends
``allowed_actions`` with every job, and the card, the ``%jobs`` panel and the JupyterLab sidebar
enable their buttons from it. A repeat is refused too (pausing a paused job says it is already
paused): a button that does nothing is not offered.

What the job's state cannot tell is checked where it lives: a job whose owner is switched off
cannot be resumed or run (``engine/owners.py``); a one-shot whose time passed while it was paused
resumes only with ``catch_up``.
"""

from __future__ import annotations

from collections.abc import Callable

from jupyter_recall.core.errors import ConflictError
from jupyter_recall.core.model import Job, JobKind, JobStatus, _Choice


class JobAction(_Choice):
    RUN_NOW = "run_now"
    PAUSE = "pause"
    RESUME = "resume"
    SKIP = "skip"
    CANCEL = "cancel"
    EDIT = "edit"


_PAST = {
    JobAction.PAUSE: "paused",
    JobAction.RESUME: "resumed",
    JobAction.SKIP: "skipped",
    JobAction.CANCEL: "cancelled",
    JobAction.EDIT: "edited",
}


def _run_now(job: Job) -> str | None:
    if job.status is JobStatus.CANCELLED:
        return f"job {job.id} is cancelled: nothing more fires"
    return None


def _called(job: Job) -> str:
    """What the refusals call the job: a watcher is paused and resumed as one."""
    return "watcher" if job.kind is JobKind.WATCHER else "job"


def _pause(job: Job) -> str | None:
    if job.status is JobStatus.PAUSED:
        return f"{_called(job)} {job.id} is already paused"
    return None


def _resume(job: Job) -> str | None:
    if job.status is JobStatus.ACTIVE:
        return f"{_called(job)} {job.id} is not paused: it is active"
    return None


def _skip(job: Job) -> str | None:
    after = job.schedule.after
    if after is not None:
        return (
            f"job {job.id} is fired by the runs of job {after.after.job}, not by a schedule: "
            "it has no scheduled occurrence to skip"
        )
    if not job.schedule.is_recurring:
        return f"job {job.id} runs only once: skipping it would end it; cancel it instead"
    if job.next_occurrence is None:
        return f"job {job.id} has no occurrence left to skip"
    return None


def _managed(job: Job) -> str | None:
    if job.plugin_owner is not None:
        return (
            f"job {job.id} ({job.key!r}) is managed by owner {job.plugin_owner!r}: change its "
            "declaration instead"
        )
    return None


_CHECKS: dict[JobAction, Callable[[Job], str | None]] = {
    JobAction.RUN_NOW: _run_now,
    JobAction.PAUSE: _pause,
    JobAction.RESUME: _resume,
    JobAction.SKIP: _skip,
    JobAction.CANCEL: _managed,
    JobAction.EDIT: _managed,
}


def refusal(job: Job, action: JobAction) -> str | None:
    """Why ``job``'s state refuses ``action``, in one sentence; None when it allows it.

    An ended job (completed, failed, cancelled) is history: it may only be run again by hand,
    unless it was cancelled."""
    if job.status.is_terminal and action is not JobAction.RUN_NOW:
        if job.status is JobStatus.CANCELLED and action is JobAction.CANCEL:
            return f"job {job.id} is already cancelled"
        return f"job {job.id} is {job.status.value}: it cannot be {_PAST[action]}"
    return _CHECKS[action](job)


def allowed_actions(job: Job) -> frozenset[JobAction]:
    """The actions ``job``'s state allows (the engine refuses the others)."""
    return frozenset(action for action in JobAction if refusal(job, action) is None)


_BY_NAME = tuple(sorted((action.value, action) for action in JobAction))
_CHECKS_BY_NAME = tuple((name, _CHECKS[action]) for name, action in _BY_NAME)


def allowed_action_names(job: Job) -> list[str]:
    """The names of ``allowed_actions(job)``, sorted: as job documents list them (built for
    every job answered, so without the set, and for a job not ended, straight from the checks
    ``refusal`` would ask: a third of the work)."""
    if job.status.is_terminal:
        return [name for name, action in _BY_NAME if refusal(job, action) is None]
    return [name for name, check in _CHECKS_BY_NAME if check(job) is None]


def require(job: Job, action: JobAction) -> None:
    """Raise ``ConflictError`` (a 409) with the reason when ``job``'s state refuses ``action``."""
    reason = refusal(job, action)
    if reason is not None:
        raise ConflictError(reason)
