"""JSON in and out of the REST API: request bodies to engine calls, records to documents."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, NotRequired, TypedDict

from jupyter_recall.core.actions import allowed_action_names
from jupyter_recall.core.dependency import After
from jupyter_recall.core.errors import ConflictError, ValidationError
from jupyter_recall.core.limits import TEXT_LIMITS
from jupyter_recall.core.model import (
    DEFAULT_POLICIES,
    Job,
    JobKind,
    Policies,
    PoliciesJSON,
    Run,
    refuse_unknown_policies,
)
from jupyter_recall.core.payloads import check_policy_bounds, check_text, merge_patch, within
from jupyter_recall.core.records import (
    NO_OPTIONS,
    SERVER_TARGET,
    ActionJSON,
    InstructionAction,
    JobOptions,
    KernelTarget,
    Target,
    TargetJSON,
    action_from_json,
    check_fits,
    contents_path,
    refuse_unknown,
    target_from_json,
)
from jupyter_recall.core.retries import RETRY_FIELDS
from jupyter_recall.engine.jobs import JobChanges
from jupyter_recall.engine.scheduler import NewJob
from jupyter_recall.server.body import json_type

NEW_JOB_FIELDS = (
    "when",
    "after",
    "action",
    "target",
    "name",
    "kind",
    "tz",
    "session",
    "policies",
    "options",
)
PATCH_FIELDS = ("when", "after", "tz", "name", "action", "target", "policies", "options")
USER_KINDS = (JobKind.JOB.value, JobKind.RECALL.value)


def iso(instant: datetime | None) -> str | None:
    return instant.isoformat() if instant is not None else None


class JobJSON(TypedDict):
    """A job as the REST API and the event stream answer it (``Job`` in ``openapi.yaml``)."""

    id: str
    name: str
    kind: str
    owner: str
    when: str
    after: dict[str, str] | None
    canonical: str
    schedule_kind: str
    description: str
    tz: str
    status: str
    pending: bool
    action: ActionJSON
    target: TargetJSON
    session: str | None
    policies: PoliciesJSON
    options: dict[str, Any]
    """Free-form beyond the executors' settings: what outer layers and users keep there."""
    next_fire_at: str | None
    next_occurrence: str | None
    created_at: str | None
    updated_at: str | None
    run_count: int
    failure_count: int
    last_run_at: str | None
    last_run_id: str | None
    last_status: str | None
    last_error: str | None
    plugin_owner: str | None
    key: str | None
    failure_streak: int
    paused_reason: str | None
    allowed_actions: list[str]
    warnings: NotRequired[list[str]]
    """Only in the answer to a creation, when the job is valid but probably not what was
    meant (``core/cadence.py``)."""


class RunJSON(TypedDict):
    """A run as the REST API and the event stream answer it (``Run`` in ``openapi.yaml``)."""

    id: str
    job_id: str
    scheduled_for: str | None
    trigger: str
    status: str
    created_at: str | None
    started_at: str | None
    finished_at: str | None
    duration: float | None
    error: str | None
    attempt: int
    retry_at: str | None
    output: NotRequired[str]


def job_to_json(job: Job) -> JobJSON:
    # A new job's instants are shared (created and updated at once, fired when it occurs):
    # written once.
    created_at = iso(job.created_at)
    updated_at = created_at if job.updated_at is job.created_at else iso(job.updated_at)
    next_occurrence = iso(job.next_occurrence)
    fires = job.next_fire_at
    next_fire_at = next_occurrence if fires is job.next_occurrence else iso(fires)
    return {
        "id": job.id,
        "name": job.name,
        "kind": job.kind._value_,
        "owner": job.owner,
        "when": job.when,
        "after": _after_json(job),
        "canonical": job.schedule.canonical,
        "schedule_kind": job.schedule.kind,
        "description": job.schedule.describe(),
        "tz": job.schedule.tz,
        "status": job.status._value_,
        "pending": job.is_pending,
        "action": job.action.to_json(),
        "target": job.target.to_json(),
        "session": job.session,
        "policies": job.policies.to_dict(),
        "options": job.options.to_json(),
        "next_fire_at": next_fire_at,
        "next_occurrence": next_occurrence,
        "created_at": created_at,
        "updated_at": updated_at,
        "run_count": job.run_count,
        "failure_count": job.failure_count,
        "last_run_at": iso(job.last_run_at),
        "last_run_id": job.last_run_id,
        "last_status": job.last_status._value_ if job.last_status else None,
        "last_error": job.last_error,
        "plugin_owner": job.plugin_owner,
        "key": job.key,
        "failure_streak": job.failure_streak,
        "paused_reason": job.paused_reason,
        "allowed_actions": allowed_action_names(job),
    }


def run_to_json(run: Run, *, include_output: bool = True) -> RunJSON:
    body: RunJSON = {
        "id": run.id,
        "job_id": run.job_id,
        "scheduled_for": iso(run.scheduled_for),
        "trigger": run.trigger.value,
        "status": run.status.value,
        "created_at": iso(run.created_at),
        "started_at": iso(run.started_at),
        "finished_at": iso(run.finished_at),
        "duration": run.duration,
        "error": run.error,
        "attempt": run.attempt,
        "retry_at": iso(run.retry_at),
    }
    if include_output:
        body["output"] = run.output
    return body


def _after_json(job: Job) -> dict[str, str] | None:
    """The upstream of a job fired by another job's runs: ``{"job": ID, "on": ...}``."""
    trigger = job.schedule.after
    return None if trigger is None else trigger.after.to_json()


def _when_or_after(body: Mapping[str, Any]) -> Any:
    """The ``when`` of a body, or the text of its ``after`` (``after ID succeeds``): a job fires
    on a time or on another job's outcome, not both."""
    if "after" not in body:
        return body.get("when")
    if "when" in body:
        raise ValidationError(
            "after", "a job fires on a time (when) or after another job (after): give one"
        )
    return After.from_json(body["after"]).text


def _optional_str(body: Mapping[str, Any], key: str) -> str | None:
    value = body.get(key)
    if value is not None and not isinstance(value, str):
        raise ValidationError(key, f"must be a string, got {json_type(value)}")
    if value is not None and key in TEXT_LIMITS:
        check_text(value, key, TEXT_LIMITS[key])
    return value


def _policies(body: Mapping[str, Any]) -> Policies | None:
    value = body.get("policies")
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ValidationError("policies", f"must be a JSON object, got {json_type(value)}")
    with within("policies"):
        check_policy_bounds(value)
        return Policies.from_dict(dict(value))


def _new_name(body: Mapping[str, Any]) -> str | None:
    """A new job's name: none (the default, from its action) when left out or empty; blanks
    only are refused, as a PATCH refuses them."""
    name = _optional_str(body, "name")
    if name and not name.strip():
        raise ValidationError("name", "must not be empty")
    return name or None


def default_session(target: Target, kind: JobKind = JobKind.RECALL) -> str | None:
    """The session of a job created without one: the notebook whose kernel it runs in (listed
    with that notebook's jobs, ``?path=``). A recall belongs to a session, so a recall for a
    kernel given by id belongs to that kernel's."""
    if not isinstance(target, KernelTarget):
        return None
    return target.label if kind is JobKind.RECALL else target.path


def new_job_from_json(body: Mapping[str, Any]) -> NewJob:
    """Validate a `POST /api/recall/jobs` body; every error names its field."""
    refuse_unknown(body, NEW_JOB_FIELDS)
    when = _when_or_after(body)
    if not isinstance(when, str) or not when.strip():
        raise ValidationError("when", f"must be a non-empty string, got {when!r:.80}")
    check_text(when, "when", TEXT_LIMITS["when"])
    action = action_from_json(body.get("action"))
    target = _target(body)
    check_fits(action, target)
    kind = JobKind.parse(body.get("kind", "job"), "kind")
    if kind not in USER_KINDS:  # str members equal their values
        raise ValidationError("kind", f"cannot create {kind.value!r} here", accepted=USER_KINDS)
    if kind is JobKind.RECALL and not isinstance(action, InstructionAction):
        raise ValidationError(
            "action.type", "a recall's action is a self-instruction", accepted=("instruction",)
        )
    given = _optional_str(body, "session")
    # Written as sessions (and a target's path, and the ?path= filter) write it.
    session = contents_path(given, "session") if given else default_session(target, kind)
    if kind is JobKind.RECALL and session is None:
        raise ValidationError(
            "session", "a recall belongs to a session: give 'session' or a kernel target"
        )
    return NewJob(
        when=when,
        action=action,
        target=target,
        name=_new_name(body),
        kind=kind,
        tz=_optional_str(body, "tz"),
        session=session,
        policies=_policies(body) or DEFAULT_POLICIES,
        options=_options(body),
    )


def _target(body: Mapping[str, Any]) -> Target:
    return target_from_json(body["target"]) if "target" in body else SERVER_TARGET


def _options(body: Mapping[str, Any]) -> JobOptions:
    return JobOptions.from_json(body["options"]) if "options" in body else NO_OPTIONS


def new_jobs_from_json(body: Mapping[str, Any]) -> list[NewJob]:
    """Validate a `POST /api/recall/jobs` body ``{"jobs": [...]}``; errors name the index."""
    refuse_unknown(body, ("jobs",))
    items = body["jobs"]
    if not isinstance(items, list) or not items:
        raise ValidationError(
            "jobs", f"must be a non-empty array of job objects, got {items!r:.80}"
        )
    news = []
    for index, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise ValidationError(f"jobs[{index}]", f"must be a job object, got {json_type(item)}")
        with within(f"jobs[{index}]"):
            news.append(new_job_from_json(item))
    _refuse_two_recalls_per_session(news)
    return news


def _refuse_two_recalls_per_session(news: list[NewJob]) -> None:
    # Said here, by index: the store's check runs after the batch is rolled back and could
    # only name a job id that was never created.
    first: dict[str, int] = {}
    for index, new in enumerate(news):
        if new.kind is not JobKind.RECALL or new.session is None:
            continue
        if new.session in first:
            raise ConflictError(
                f"jobs[{index}]: session {new.session!r} gets a second pending recall in this "
                f"batch (jobs[{first[new.session]}] is the first); a session has one pending "
                "recall at a time"
            )
        first[new.session] = index


def job_changes_from_json(body: Mapping[str, Any], current: Job) -> JobChanges:
    """Validate a `PATCH /api/recall/jobs/{id}` body into the changes of ``change_job``."""
    refuse_unknown(body, PATCH_FIELDS)
    action = action_from_json(body["action"]) if "action" in body else None
    target = target_from_json(body["target"]) if "target" in body else None
    if action is not None or target is not None:
        check_fits(
            current.action if action is None else action,
            current.target if target is None else target,
        )
    return JobChanges(
        when=_optional_str(body, "when") if "after" not in body else _when_or_after(body),
        tz=_optional_str(body, "tz"),
        name=_optional_str(body, "name"),
        action=action,
        target=target,
        policies=_patched_policies(body, current.policies),
        options=_patched_options(body, current.options),
    )


NULL_IS_A_VALUE = ("catchup_window",)
"""Policies whose null means something else than their default (no limit): a merge patch's
null sets it, as at creation, rather than removing the key."""


def _patched_policies(body: Mapping[str, Any], current: Policies) -> Policies | None:
    """A PATCH's ``policies``: a JSON merge patch of the job's (``merge_patch``); null resets
    them all. Unknown keys are refused even as null (which would remove nothing)."""
    if "policies" not in body:
        return None
    patch = body["policies"]
    if patch is None:
        return DEFAULT_POLICIES
    patch = _object_or_null(patch, "policies")
    with within("policies"):
        refuse_unknown_policies(patch)
        retries = patch.get("retries")
        if isinstance(retries, Mapping):
            refuse_unknown(retries, RETRY_FIELDS, "retries")
        merged = merge_patch(current.to_dict(), patch)
        merged.update({key: None for key in NULL_IS_A_VALUE if key in patch and patch[key] is None})
        check_policy_bounds(merged)
        return Policies.from_dict(merged)


def _patched_options(body: Mapping[str, Any], current: JobOptions) -> JobOptions | None:
    """A PATCH's ``options``: a JSON merge patch of the job's; null removes them all."""
    if "options" not in body:
        return None
    patch = body["options"]
    if patch is None:
        return NO_OPTIONS
    return JobOptions.from_json(merge_patch(current.values, _object_or_null(patch, "options")))


def _object_or_null(value: object, field: str) -> Mapping[str, object]:
    if not isinstance(value, Mapping):
        raise ValidationError(field, f"must be a JSON object or null, got {json_type(value)}")
    return value


MAX_RUNS_LIMIT = 10_000


def parse_count(value: str | None, field: str, maximum: int) -> int | None:
    """A query argument counting things (``?limit=``, ``?last_n=``): a whole number from 1 to
    ``maximum``; None when absent."""
    if value is None:
        return None
    # ASCII digits only: str.isdigit() is also true of '¹' and '٣', which int() refuses or reads.
    if not (value.isascii() and value.isdigit()) or not 1 <= int(value) <= maximum:
        raise ValidationError(field, f"must be a whole number from 1 to {maximum:,}, got {value!r}")
    return int(value)


def parse_since(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        instant = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ValidationError("since", f"not an ISO 8601 instant: {value!r}") from None
    if instant.tzinfo is None:
        raise ValidationError("since", f"must carry a UTC offset, got {value!r}")
    return instant
