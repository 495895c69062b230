"""Jobs declared by owners (packages, extensions, deployments) over REST, and the entry point
group through which installed packages declare jobs when the server starts.

``PUT /api/recall/owners/{owner}/jobs`` reconciles the caller's jobs of that owner to the list
given; ``GET`` lists them; ``DELETE`` removes them all; ``POST .../disable|enable`` switches the
owner off and on. The engine side is ``engine/owners.py``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from importlib.metadata import EntryPoint, entry_points
from typing import Any, TypedDict

from jupyter_server.auth.decorator import authorized
from tornado import web

from jupyter_recall.core.errors import RecallError, ValidationError
from jupyter_recall.core.model import Job
from jupyter_recall.engine.owners import Reconciled, check_owner_name, parse_declaration
from jupyter_recall.engine.scheduler import Scheduler
from jupyter_recall.server.authorization import authorize_jobs, declared_shape
from jupyter_recall.server.handlers import RecallHandler
from jupyter_recall.server.serialize import JobJSON, job_to_json

ENTRY_POINT_GROUP = "jupyter_recall.jobs"

log = logging.getLogger("jupyter_recall.server")


class ReconciledJSON(TypedDict):
    """What a reconciliation did, job by job and counted (``Reconciled`` in ``openapi.yaml``)."""

    owner: str
    created: list[JobJSON]
    updated: list[JobJSON]
    deleted: list[JobJSON]
    unchanged: list[JobJSON]
    counts: dict[str, int]


def reconciled_to_json(plugin_owner: str, result: Reconciled) -> ReconciledJSON:
    lists = {
        "created": result.created,
        "updated": result.updated,
        "deleted": result.deleted,
        "unchanged": result.unchanged,
    }
    return {
        "owner": plugin_owner,
        "created": _jobs_json(result.created),
        "updated": _jobs_json(result.updated),
        "deleted": _jobs_json(result.deleted),
        "unchanged": _jobs_json(result.unchanged),
        "counts": {name: len(jobs) for name, jobs in lists.items()},
    }


def _jobs_json(jobs: Sequence[Job]) -> list[JobJSON]:
    return [job_to_json(job) for job in jobs]


class OwnerJobsHandler(RecallHandler):
    @web.authenticated
    @authorized
    async def get(self, plugin_owner: str) -> None:
        jobs = await self.scheduler.list_owned(plugin_owner, owner=self.owner)
        disabled = await self.scheduler.owner_disabled(plugin_owner, owner=self.owner)
        self.send_json({"owner": plugin_owner, "disabled": disabled, "jobs": _jobs_json(jobs)})

    @web.authenticated
    @authorized
    async def put(self, plugin_owner: str) -> None:
        body = self.json_body()
        unknown = sorted(set(body) - {"jobs"})
        if unknown:
            raise ValidationError(unknown[0], "unknown field", accepted=["jobs"])
        if "jobs" not in body:
            raise ValidationError("jobs", "is required: the whole list of the owner's jobs")
        specs = parse_declaration(body["jobs"])
        shapes = [declared_shape(spec) for spec in specs]
        await self.check_runnable(shapes, batch=True)
        await authorize_jobs(self, self.owner, shapes, batch=True)
        result = await self.scheduler.reconcile(plugin_owner, specs, owner=self.owner)
        self.send_json(reconciled_to_json(plugin_owner, result))

    @web.authenticated
    @authorized
    async def delete(self, plugin_owner: str) -> None:
        deleted = await self.scheduler.delete_owned(plugin_owner, owner=self.owner)
        self.send_json({"owner": plugin_owner, "deleted": _jobs_json(deleted)})


class OwnerDisableHandler(RecallHandler):
    @web.authenticated
    @authorized
    async def post(self, plugin_owner: str) -> None:
        jobs = await self.scheduler.disable_owner(plugin_owner, owner=self.owner)
        self.send_json({"owner": plugin_owner, "disabled": True, "jobs": _jobs_json(jobs)})


class OwnerEnableHandler(RecallHandler):
    @web.authenticated
    @authorized
    async def post(self, plugin_owner: str) -> None:
        jobs = await self.scheduler.enable_owner(plugin_owner, owner=self.owner)
        self.send_json({"owner": plugin_owner, "disabled": False, "jobs": _jobs_json(jobs)})


def owner_routes() -> list[tuple[str, type[RecallHandler]]]:
    owner = r"(?P<plugin_owner>[A-Za-z0-9][A-Za-z0-9_.-]*)"
    return [
        (rf"/api/recall/owners/{owner}/jobs", OwnerJobsHandler),
        (rf"/api/recall/owners/{owner}/disable", OwnerDisableHandler),
        (rf"/api/recall/owners/{owner}/enable", OwnerEnableHandler),
    ]


# --- declared at start by installed packages ------------------------------------------------------


async def declare_installed_jobs(scheduler: Scheduler, *, owner: str) -> dict[str, Reconciled]:
    """Call every ``jupyter_recall.jobs`` entry point (a callable returning ``(owner, [job
    dicts])``) and reconcile its jobs in ``owner``'s scope. A failing entry point is logged and
    skipped: one broken package does not keep the server or the others from starting."""
    done: dict[str, Reconciled] = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            plugin_owner, specs = _declaration(point)
            done[plugin_owner] = await scheduler.reconcile(plugin_owner, specs, owner=owner)
        except Exception as error:  # any failure of third-party code
            log.error(
                "jupyter_recall: entry point %s (%s) failed: %s", point.name, point.value, error
            )
            continue
        counts = {
            name: len(getattr(done[plugin_owner], name))
            for name in ("created", "updated", "deleted")
        }
        log.info("jupyter_recall: jobs declared by %s: %s", plugin_owner, counts)
    return done


def _declaration(point: EntryPoint) -> tuple[str, list[Any]]:
    declared = point.load()()
    if not isinstance(declared, tuple) or len(declared) != 2:
        raise ValidationError(
            ENTRY_POINT_GROUP, f"must return (owner, [job dicts]), got {type(declared).__name__}"
        )
    plugin_owner = check_owner_name(declared[0])
    return plugin_owner, parse_declaration(declared[1])


async def disable_configured(scheduler: Scheduler, names: Sequence[str], *, owner: str) -> None:
    """Switch off the owners named in ``RecallApp.disabled_owners`` (single-user servers)."""
    for name in names:
        try:
            await scheduler.disable_owner(name, owner=owner)
        except RecallError as error:
            log.error("jupyter_recall: RecallApp.disabled_owners: %s", error)
