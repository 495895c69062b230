"""Watchers behind the REST routes (``/api/recall/watchers``) and the kernel's ``watch_*``.

``WatcherService`` creates a watcher as a job of kind ``watcher`` (validated, refused for tools
whose policy is ``approve`` or ``block``, anchored on its interval so that watchers of one
interval check together), lists them, shows one with its latest checks, pauses, resumes and
stops (deletes) them. The checks themselves are ``watcher_runtime.py``'s.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, NotRequired, TypedDict

from jupyter_server.auth.decorator import authorized
from tornado import web

from jupyter_recall.core.documents import OutputConfigJSON
from jupyter_recall.core.errors import NotFoundError, UnknownServerTool, ValidationError
from jupyter_recall.core.escalation import NotifyConfigJSON
from jupyter_recall.core.model import Job, JobKind, JobStatus
from jupyter_recall.core.records import (
    SERVER_TARGET,
    JobOptions,
    KernelTarget,
    Target,
    TargetJSON,
    ToolAction,
    target_from_json,
)
from jupyter_recall.engine.scheduler import NewJob, Scheduler
from jupyter_recall.server.authorization import authorize_jobs, shape_of
from jupyter_recall.server.handlers import RecallHandler
from jupyter_recall.server.serialize import iso
from jupyter_recall.server.watcher_options import aligned
from jupyter_recall.server.watcher_runtime import (
    DEFAULT_HISTORY,
    NO_APPROVAL,
    UNATTENDED_POLICIES,
    WatcherRuntime,
    WatcherSpec,
    optional_text,
    parse_spec,
)
from jupyter_recall.store.base import JobFilter
from jupyter_recall.store.watchers import RING_SIZE, CheckJSON, CheckRecord, WatcherRecord

# --- the service behind the REST routes and agent tools -------------------------------------------


def _status(job: Job) -> str:
    return {JobStatus.ACTIVE: "running", JobStatus.PAUSED: "paused"}.get(
        job.status, job.status.value
    )


class WatcherJSON(TypedDict):
    """A watcher as answered (``Watcher`` in ``openapi.yaml``)."""

    watcher_id: str
    tool_name: str
    params: dict[str, Any]
    """The tool's parameters: free-form, each tool checks its own."""
    label: str
    interval: int
    notify_when: str
    notify_config: NotifyConfigJSON
    output_channel: str | None
    output_config: OutputConfigJSON
    """The channel's settings: each channel checks the keys it reads."""
    status: str
    target: TargetJSON
    session: str | None
    checks: int
    notifications: int
    last_check_at: str | None
    last_notified_at: str | None
    next_check_at: str | None
    created_at: str | None
    last_result: NotRequired[CheckJSON | None]
    history: NotRequired[list[CheckJSON]]
    hint: NotRequired[str]


def watcher_json(
    job: Job, record: WatcherRecord | None, history: list[CheckRecord] | None = None
) -> WatcherJSON:
    spec = WatcherSpec.of(job)
    document: WatcherJSON = {
        "watcher_id": job.id,
        "tool_name": spec.tool,
        "params": spec.params,
        "label": spec.label,
        "interval": spec.interval,
        "notify_when": spec.escalation.notify_when.value,
        "notify_config": spec.escalation.notify_config(),
        "output_channel": spec.output_channel,
        "output_config": spec.output_config,
        "status": _status(job),
        "target": job.target.to_json(),
        "session": job.session,
        "checks": record.checks if record else 0,
        "notifications": record.notifications if record else 0,
        "last_check_at": iso(record.last_check_at) if record else None,
        "last_notified_at": iso(record.last_notified_at) if record else None,
        "next_check_at": iso(job.next_fire_at),
        "created_at": iso(job.created_at),
    }
    if history is not None:
        document["last_result"] = history[0].to_json() if history else None
        document["history"] = [entry.to_json() for entry in history]
    return document


def notified_at(channel: str | None, session: str | None, *, own: bool) -> str:
    """Where a watcher's notifications go, in the words of its start answer's hint: its channel,
    else its session (``own``: the caller's, which named it), else, with no session (a watcher
    started over MCP or by a REST client), the user's JupyterLab."""
    if channel:
        return channel
    if session is None:
        return (
            "the user's JupyterLab (the ui channel), as this watcher belongs to no notebook "
            "session; output_channel names another channel"
        )
    return "this session" if own else f"the notebook session {session!r}"


class WatcherService:
    def __init__(self, scheduler: Scheduler, runtime: WatcherRuntime) -> None:
        self.scheduler = scheduler
        self.runtime = runtime

    def _check_policy(self, tool: str) -> None:
        tools = self.runtime.tools
        if tools is None:
            return
        decision = tools.decision(tool)
        if decision.policy not in UNATTENDED_POLICIES:
            raise ValidationError(
                "tool",
                f"{tool} cannot be watched: its policy is {decision.policy!r} "
                f"({decision.source}) and {NO_APPROVAL}",
                accepted=UNATTENDED_POLICIES,
            )

    def _target(self, spec: WatcherSpec, body: Mapping[str, Any]) -> Target:
        if body.get("target") is not None:
            target = target_from_json(body["target"])
            if target.type == "headless":
                raise ValidationError(
                    "target.type",
                    "a watcher runs on the server or in a notebook's kernel",
                    accepted=("server", "kernel"),
                )
            if target.type == "server" and not self.runtime.is_server_tool(spec.tool):
                raise self._unknown_tool(spec.tool)
            return target
        if self.runtime.is_server_tool(spec.tool):
            return SERVER_TARGET
        raise self._unknown_tool(spec.tool)

    def _unknown_tool(self, tool: str) -> UnknownServerTool:
        tools = self.runtime.tools
        names = tools.registry.names() if tools is not None else []
        hint = "give target {'type': 'kernel', 'path': <notebook>}"
        return UnknownServerTool(tool, accepted=names, hint=hint)

    async def create(
        self,
        body: Mapping[str, Any],
        *,
        owner: str,
        authorize: Callable[[NewJob], Awaitable[None]] | None = None,
    ) -> WatcherJSON:
        """``authorize`` refuses (raises) a watcher its creator may not run (a user tool's
        checks run in the notebook's kernel: ``server/permissions.py``)."""
        spec = parse_spec(body)
        target = self._target(spec, body)
        self._check_policy(spec.tool)
        session = optional_text(body, "session")
        if isinstance(target, KernelTarget) and session is None:
            session = target.label
        new = NewJob(
            when=f"every {spec.interval}s",
            anchor=aligned(self.scheduler.clock.now(), spec.interval),
            action=ToolAction(spec.tool, dict(spec.params)),
            target=target,
            name=spec.label or f"watch {spec.tool}",
            kind=JobKind.WATCHER,
            session=session,
            options=JobOptions.from_json(spec.options(target)),
        )
        if authorize is not None:
            await authorize(new)
        job = await self.scheduler.add_job(new, owner=owner)
        await self.runtime.register(job)
        # The first check sets the baseline now, not one interval from now.
        await self.scheduler.trigger_job(job.id, owner=owner)
        document = watcher_json(job, None)
        own = optional_text(body, "session") is not None
        document["hint"] = (
            f"Watcher {spec.label or spec.tool!r} started: checking {spec.tool} every "
            f"{spec.interval}s; notifications by the {spec.escalation.notify_when.value!r} "
            f"strategy go to {notified_at(spec.output_channel, session, own=own)}."
        )
        return document

    async def _job(self, watcher_id: str, owner: str) -> Job:
        try:
            job = await self.scheduler.get_job(watcher_id, owner=owner)
        except NotFoundError:
            # The caller asked for a watcher: "job '…' not found" would name the wrong thing.
            raise NotFoundError("watcher", watcher_id) from None
        if job.kind is not JobKind.WATCHER:
            raise NotFoundError("watcher", watcher_id)
        return job

    async def status(self, watcher_id: str, *, owner: str, last_n: int) -> WatcherJSON:
        job = await self._job(watcher_id, owner)
        records = await self.runtime.records([job.id])
        history = await self.runtime.history(job.id, last_n)
        return watcher_json(job, records.get(job.id), history)

    async def history(self, watcher_id: str, *, owner: str, last_n: int) -> list[CheckJSON]:
        job = await self._job(watcher_id, owner)
        return [entry.to_json() for entry in await self.runtime.history(job.id, last_n)]

    async def list(self, *, owner: str, session: str | None = None) -> list[WatcherJSON]:
        where = JobFilter(kind=[JobKind.WATCHER], session=session)
        jobs = await self.scheduler.list_jobs(owner=owner, where=where)
        records = await self.runtime.records([job.id for job in jobs])
        documents = [watcher_json(job, records.get(job.id)) for job in jobs]
        # Running first, as in the seed's watch_list.
        return sorted(documents, key=lambda d: d["status"] != "running")

    async def stop(self, watcher_id: str, *, owner: str) -> None:
        """Stop for good: the watcher, its state and its history are deleted."""
        job = await self._job(watcher_id, owner)
        await self.scheduler.delete_job(job.id, owner=owner)
        self.runtime.forget(job.id)

    async def pause(self, watcher_id: str, *, owner: str) -> WatcherJSON:
        job = await self._job(watcher_id, owner)
        job = await self.scheduler.pause_job(job.id, owner=owner)
        return watcher_json(job, (await self.runtime.records([job.id])).get(job.id))

    async def resume(self, watcher_id: str, *, owner: str) -> WatcherJSON:
        job = await self._job(watcher_id, owner)
        job = await self.scheduler.resume_job(job.id, owner=owner)
        return watcher_json(job, (await self.runtime.records([job.id])).get(job.id))


# --- REST -----------------------------------------------------------------------------------------


class _WatcherHandler(RecallHandler):
    @property
    def watchers(self) -> WatcherService:
        service = self.settings["jupyter_recall_watchers"]
        assert isinstance(service, WatcherService)
        return service


class WatchersHandler(_WatcherHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        session = self.get_query_argument("session", None) or None
        self.send_json({"watchers": await self.watchers.list(owner=self.owner, session=session)})

    @web.authenticated
    @authorized
    async def post(self) -> None:
        owner = self.owner

        async def authorize(new: NewJob) -> None:
            await authorize_jobs(self, owner, [shape_of(new)])

        document = await self.watchers.create(self.json_body(), owner=owner, authorize=authorize)
        self.send_json(document, status=201)


class WatcherHandler(_WatcherHandler):
    @web.authenticated
    @authorized
    async def get(self, watcher_id: str) -> None:
        last_n = self.query_count("last_n", RING_SIZE)
        history = DEFAULT_HISTORY if last_n is None else last_n
        self.send_json(await self.watchers.status(watcher_id, owner=self.owner, last_n=history))

    @web.authenticated
    @authorized
    async def delete(self, watcher_id: str) -> None:
        await self.watchers.stop(watcher_id, owner=self.owner)
        self.set_status(204)
        self.finish()


class WatcherPauseHandler(_WatcherHandler):
    @web.authenticated
    @authorized
    async def post(self, watcher_id: str) -> None:
        self.send_json(await self.watchers.pause(watcher_id, owner=self.owner))


class WatcherResumeHandler(_WatcherHandler):
    @web.authenticated
    @authorized
    async def post(self, watcher_id: str) -> None:
        self.send_json(await self.watchers.resume(watcher_id, owner=self.owner))


def watcher_routes() -> list[tuple[str, type[RecallHandler]]]:
    watcher = r"(?P<watcher_id>[A-Za-z0-9_-]+)"
    return [
        (r"/api/recall/watchers", WatchersHandler),
        (rf"/api/recall/watchers/{watcher}", WatcherHandler),
        (rf"/api/recall/watchers/{watcher}/pause", WatcherPauseHandler),
        (rf"/api/recall/watchers/{watcher}/resume", WatcherResumeHandler),
    ]
