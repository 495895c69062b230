"""Jobs declared by an owner (a package, an extension, a deployment) and reconciled to match.

An owner declares the whole set of jobs it wants, each under a ``key``; ``reconcile`` creates
the missing ones, updates the changed ones in place (same id, runs kept) and deletes those whose
key is gone, in one transaction. Declared jobs are read-only to users (``guard``): editing,
cancelling or deleting one is a ConflictError naming its owner; pausing and resuming stay
allowed. An owner can be switched off for a user: its active jobs are paused and remembered, and
switching it on resumes exactly those.

"Owner" here is the declaring package (``Job.plugin_owner``); the row ``owner`` is still the user
whose scope the jobs live in. Synchronous: the scheduler runs these in its store thread.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from jupyter_recall.core.errors import ConflictError, NotFoundError, ValidationError
from jupyter_recall.core.model import DEFAULT_POLICIES, Job, JobStatus, Policies
from jupyter_recall.core.payloads import check_policy_bounds, check_short_texts, within
from jupyter_recall.core.policy import exhausted_status, schedule_next
from jupyter_recall.core.records import (
    NO_OPTIONS,
    SERVER_TARGET,
    Action,
    JobOptions,
    Target,
    action_from_json,
    target_from_json,
)
from jupyter_recall.core.text import check_name_text
from jupyter_recall.engine import dependencies, jobs
from jupyter_recall.engine.jobs import NewJob, build_job
from jupyter_recall.engine.retention import DeletedRuns
from jupyter_recall.store.base import JobFilter, Store

OWNER_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
KEY_LIMIT = 200
SPEC_FIELDS = ("key", "when", "action", "target", "name", "tz", "policies", "options")


@dataclass(frozen=True)
class OwnedJob:
    """One job of a declaration. ``name`` defaults to the key, ``tz`` to the engine's zone."""

    key: str
    when: str
    action: Action
    target: Target = SERVER_TARGET
    name: str | None = None
    tz: str | None = None
    policies: Policies = DEFAULT_POLICIES
    options: JobOptions = NO_OPTIONS

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> OwnedJob:
        """From a JSON object or an entry point's dict; unknown fields are refused by name."""
        unknown = sorted(set(data) - set(SPEC_FIELDS))
        if unknown:
            raise ValidationError(unknown[0], "unknown field", accepted=list(SPEC_FIELDS))
        policies = data.get("policies") or {}
        if not isinstance(policies, (dict, Policies)):
            raise ValidationError("policies", f"must be an object, got {policies!r}")
        check_short_texts(data)
        if isinstance(policies, dict):
            with within("policies"):
                check_policy_bounds(policies)
                policies = Policies.from_dict(policies)
        return cls(
            key=data.get("key"),  # type: ignore[arg-type]  # checked in check_declaration
            when=data.get("when"),  # type: ignore[arg-type]  # checked by build_job
            action=action_from_json(data.get("action")),
            target=target_from_json(data.get("target") or SERVER_TARGET.to_json()),
            name=data.get("name"),
            tz=data.get("tz"),
            policies=policies,
            options=JobOptions.from_json(data.get("options") or {}),
        )


@dataclass
class Reconciled:
    """What a reconcile did, each list in declaration order (deleted: newest first)."""

    created: list[Job] = field(default_factory=list)
    updated: list[Job] = field(default_factory=list)
    deleted: list[Job] = field(default_factory=list)
    unchanged: list[Job] = field(default_factory=list)
    cancelled: list[Job] = field(default_factory=list)
    """Jobs that waited for a deleted one (``after``), cancelled as deleting it by hand does;
    the jobs of the owner itself among them only when the declaration keeps them."""
    deleted_runs: list[DeletedRuns] = field(default_factory=list)
    """The runs deleted with ``deleted`` that left files outside the store (a notebook's
    executed copies), by job."""


def check_owner_name(plugin_owner: object) -> str:
    if not isinstance(plugin_owner, str) or not OWNER_PATTERN.fullmatch(plugin_owner):
        raise ValidationError(
            "owner",
            f"must be 1-100 letters, digits, '_', '.' or '-' (starting with a letter or digit), "
            f"got {plugin_owner!r}",
        )
    return plugin_owner


def parse_declaration(raw: object) -> list[OwnedJob]:
    """A list of job objects (JSON or an entry point's return value) as OwnedJob specs; an
    error names the index (``jobs[2].when``)."""
    if not isinstance(raw, (list, tuple)):
        raise ValidationError("jobs", f"must be a list of job objects, got {type(raw).__name__}")
    for index, item in enumerate(raw):
        if not isinstance(item, (OwnedJob, Mapping)):
            raise ValidationError(f"jobs[{index}]", f"must be an object, got {item!r}")
    # The keys first: a key declared twice is named whatever else the jobs hold.
    check_keys([item.key if isinstance(item, OwnedJob) else item.get("key") for item in raw])
    specs = []
    for index, item in enumerate(raw):
        if isinstance(item, OwnedJob):
            specs.append(item)
            continue
        with within(f"jobs[{index}]"):
            specs.append(OwnedJob.from_dict(item))
    return specs


def check_declaration(specs: Sequence[OwnedJob]) -> None:
    check_keys([spec.key for spec in specs])


def check_keys(keys: Sequence[object]) -> None:
    seen: dict[str, int] = {}
    for index, key in enumerate(keys):
        if not isinstance(key, str) or not key.strip() or len(key) > KEY_LIMIT:
            raise ValidationError(
                f"jobs[{index}].key",
                f"must be a non-empty string of at most {KEY_LIMIT} characters",
            )
        # A job declared without a name is named by its key: a name's rules hold for it.
        check_name_text(key, f"jobs[{index}].key")
        if key in seen:
            raise ValidationError(
                f"jobs[{index}].key", f"{key!r} is declared twice (also at jobs[{seen[key]}])"
            )
        seen[key] = index


# --- reconcile --------------------------------------------------------------------------------


def reconcile(
    store: Store,
    plugin_owner: str,
    specs: Sequence[OwnedJob],
    *,
    owner: str,
    now: datetime,
    default_tz: str,
) -> Reconciled:
    """Make the user's jobs of ``plugin_owner`` exactly ``specs``, in one transaction."""
    check_owner_name(plugin_owner)
    check_declaration(specs)
    built = [
        _build(spec, index, plugin_owner, owner=owner, now=now, default_tz=default_tz)
        for index, spec in enumerate(specs)
    ]
    result = Reconciled()
    linked: list[tuple[int, Job]] = []
    with store.atomic():
        existing = {job.key: job for job in store.owned_jobs_for_update(owner, plugin_owner)}
        for index, new in enumerate(built):
            current = existing.pop(new.key, None)
            if current is None:
                result.created.append(new)
                if new.schedule.after is not None:
                    linked.append((index, new))
            elif _same(current, new):
                result.unchanged.append(current)
            else:
                with within(f"jobs[{index}]"):
                    result.updated.append(_updated(current, new, now))
                linked.append((index, result.updated[-1]))
        result.deleted = list(existing.values())
        deleted = dependencies.delete_jobs(store, result.deleted, owner=owner, now=now)
        result.deleted_runs, result.cancelled = deleted.runs, deleted.cancelled
        store.update_jobs(result.updated)
        _hold_if_disabled(store, plugin_owner, owner, result, now)
        store.insert_jobs(result.created)
        _link(store, linked, now=now)
    return result


def _link(store: Store, jobs: Sequence[tuple[int, Job]], *, now: datetime) -> None:
    """Write (or remove) the dependencies of declared jobs waiting for another job (``after``),
    as creating or editing one by hand does; an error names the job's index."""
    for index, job in jobs:
        with within(f"jobs[{index}]"):
            dependencies.link(store, job, now=now)


def _build(
    spec: OwnedJob, index: int, plugin_owner: str, *, owner: str, now: datetime, default_tz: str
) -> Job:
    new = NewJob(
        when=spec.when,
        action=spec.action,
        target=spec.target,
        name=spec.name or spec.key,
        tz=spec.tz,
        policies=spec.policies,
        options=spec.options,
    )
    with within(f"jobs[{index}]"):
        job = build_job(new, owner=owner, now=now, default_tz=default_tz)
    return job.evolve(plugin_owner=plugin_owner, key=spec.key)


def _owned(store: Store, plugin_owner: str, owner: str) -> list[Job]:
    return store.list_jobs(owner=owner, where=JobFilter(plugin_owner=plugin_owner))


def _same(current: Job, new: Job) -> bool:
    return (
        current.when == new.when
        and current.schedule.tz == new.schedule.tz
        and current.name == new.name
        and current.action == new.action
        and current.target == new.target
        and current.policies == new.policies
        and current.options == new.options
    )


def _updated(current: Job, new: Job, now: datetime) -> Job:
    """``current`` with the declaration's definition: same id, counters and runs. A new
    schedule restarts from the time of the update; an ended job with a new schedule lives again
    (its owner declares it should exist and fire)."""
    job = current.evolve(
        name=new.name,
        action=new.action,
        target=new.target,
        options=new.options,
        policies=new.policies,
        updated_at=now,
    )
    if current.when != new.when or current.schedule.tz != new.schedule.tz:
        upcoming = schedule_next(
            new.schedule, job.id, new.schedule.first_fire_time(), new.policies, job.run_count
        )
        if upcoming.exhausted and new.schedule.after is None:
            raise ValidationError("when", f"{new.schedule.canonical!r} has no occurrence left")
        status = JobStatus.ACTIVE if current.status.is_terminal else current.status
        moved = job.evolve(
            when=new.when,
            schedule=new.schedule,
            status=status,
            next_occurrence=upcoming.occurrence,
            next_fire_at=upcoming.fire_at,
        )
        # Paused (by hand, or its owner switched off): nothing fires, no next fire is shown.
        return moved.paused() if status is JobStatus.PAUSED else moved
    if current.policies != new.policies and current.next_occurrence is not None:
        upcoming = schedule_next(
            job.schedule, job.id, current.next_occurrence, new.policies, job.run_count
        )
        job = job.evolve(next_occurrence=upcoming.occurrence, next_fire_at=upcoming.fire_at)
        if upcoming.exhausted:
            job.status = exhausted_status(job.schedule.is_recurring, job.last_status)
    return job


def _hold_if_disabled(
    store: Store, plugin_owner: str, owner: str, result: Reconciled, now: datetime
) -> None:
    """Jobs created while their owner is switched off start paused, held for switching on."""
    held = store.get_disabled_owner(owner, plugin_owner)
    if held is None or not result.created:
        return
    result.created = [job.paused() for job in result.created]
    held_ids = [*held, *(job.id for job in result.created)]
    store.put_disabled_owner(owner, plugin_owner, held_ids, now=now)


def delete_owned(store: Store, plugin_owner: str, *, owner: str, now: datetime) -> Reconciled:
    """Delete every job of ``plugin_owner`` in this user's scope, with their runs; the jobs
    that waited for them are cancelled (``Reconciled.deleted`` and ``cancelled``)."""
    check_owner_name(plugin_owner)
    with store.atomic():
        owned = store.owned_jobs_for_update(owner, plugin_owner)
        deleted = dependencies.delete_jobs(store, owned, owner=owner, now=now)
        return Reconciled(deleted=owned, cancelled=deleted.cancelled, deleted_runs=deleted.runs)


def list_owned(store: Store, plugin_owner: str, *, owner: str) -> list[Job]:
    check_owner_name(plugin_owner)
    return _owned(store, plugin_owner, owner)


# --- switching owners off and on --------------------------------------------------------------


def disable_owner(store: Store, plugin_owner: str, *, owner: str, now: datetime) -> list[Job]:
    """Pause the owner's active jobs and remember them; returns the jobs paused (none when the
    owner was already off). Nothing of the owner fires until ``enable_owner``."""
    check_owner_name(plugin_owner)
    with store.atomic():
        owned = store.owned_jobs_for_update(owner, plugin_owner)
        if store.get_disabled_owner(owner, plugin_owner) is not None:
            return []
        active = [job for job in owned if job.status is JobStatus.ACTIVE]
        paused = [job.paused(updated_at=now) for job in active]
        store.update_jobs(paused)
        store.put_disabled_owner(owner, plugin_owner, [job.id for job in paused], now=now)
    return paused


def enable_owner(
    store: Store,
    plugin_owner: str,
    *,
    owner: str,
    now: datetime,
    in_flight: Callable[[str], int],
) -> list[Job]:
    """Resume the jobs that ``disable_owner`` paused (not those a user paused): a recurring job
    continues from now (what fell in the off period is not owed), a one-shot job whose instant
    passed is due at once and its catch-up policy decides whether it still runs."""
    check_owner_name(plugin_owner)
    resumed: list[Job] = []
    with store.atomic():
        store.owned_jobs_for_update(owner, plugin_owner)
        held = store.get_disabled_owner(owner, plugin_owner)
        if held is None:
            return []
        store.delete_disabled_owner(owner, plugin_owner)
        for job_id in held:
            try:
                job = store.get_job(job_id, owner=owner)
            except NotFoundError:
                continue
            if job.status is not JobStatus.PAUSED:
                continue
            resumed.append(
                jobs.resume_job(
                    store,
                    job_id,
                    owner=owner,
                    now=now,
                    catch_up=not job.schedule.is_recurring,
                    in_flight=in_flight(job_id),
                )
            )
    return resumed


# --- what users may do with a declared job -----------------------------------------------------

USER_EDITS = ("edited", "cancelled", "deleted")
FIRING = ("resumed", "run")


def guard(store: Store, job_id: str, *, owner: str, action: str) -> None:
    """Refuse a user's ``action`` on a declared job: edits always (ConflictError naming the
    owner), resuming and running while its owner is switched off. Other jobs pass."""
    job = store.get_job(job_id, owner=owner)
    if job.plugin_owner is None:
        return
    if action in USER_EDITS:
        raise ConflictError(
            f"job {job.id} ({job.key!r}) is managed by owner {job.plugin_owner!r}: it cannot be "
            f"{action} by hand; change its declaration (PUT /api/recall/owners/"
            f"{job.plugin_owner}/jobs). Pause and resume stay allowed"
        )
    if action in FIRING and store.get_disabled_owner(owner, job.plugin_owner) is not None:
        raise ConflictError(
            f"job {job.id} cannot be {action}: its owner {job.plugin_owner!r} is switched off "
            f"(POST /api/recall/owners/{job.plugin_owner}/enable first)"
        )
