"""REST handlers under /api/recall/: thin adapters over the Scheduler.

Every method is authenticated and authorized through jupyter_server (resource ``recall``);
rows are scoped to the calling user; domain errors become HTTP responses in ``write_error``
through ``server/errors.py`` only.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, TypeVar, cast

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.extension.handler import ExtensionHandlerMixin
from tornado import web
from tornado.httputil import HTTPInputError

from jupyter_recall.core.cadence import created_warnings
from jupyter_recall.core.errors import (
    ChangedMeanwhile,
    ConflictError,
    NotFoundError,
    RecallError,
    ValidationError,
)
from jupyter_recall.core.limits import FLAGS, ID_PATTERN, SCHEDULE_KINDS, TEXT_LIMITS
from jupyter_recall.core.model import Job, JobKind, JobStatus, RunStatus
from jupyter_recall.core.payloads import check_text, within
from jupyter_recall.core.records import Target, contents_path, refuse_unknown
from jupyter_recall.core.when import parse_when
from jupyter_recall.engine.scheduler import Scheduler
from jupyter_recall.server.answer_text import answer_text
from jupyter_recall.server.authorization import (
    JobShape,
    authorize_jobs,
    changed_shape,
    shape_of,
)
from jupyter_recall.server.body import decode_body, json_type
from jupyter_recall.server.errors import error_body, status_for
from jupyter_recall.server.kernel_checks import KernelSpecNames
from jupyter_recall.server.listing import (
    DEFAULT_PAGE,
    MAX_PAGE,
    ORDERS,
    check_search,
    job_cursor,
    job_order,
    page_of,
    parse_job_cursor,
    parse_run_cursor,
    run_cursor,
)
from jupyter_recall.server.serialize import (
    JobJSON,
    default_session,
    iso,
    job_changes_from_json,
    job_to_json,
    new_job_from_json,
    new_jobs_from_json,
    parse_count,
    parse_since,
    run_to_json,
)
from jupyter_recall.server.tool_checks import check_server_tools
from jupyter_recall.server.watcher_options import with_watcher_interval
from jupyter_recall.store.base import JOB_SORT_KEYS, JobFilter, RunFilter

AUTH_RESOURCE = "recall"
JOB_ACTIONS = ("pause", "resume", "skip", "trigger", "cancel")
PREVIEW_COUNT = 5
PARSE_FIELDS = ("when", "tz", "check")
READY_TIMEOUT = 30.0
PATCH_ROUNDS = 16
"""Reads and merges a PATCH tries before its 409: each round, one of the edits racing on a
job lands, so this many edits of one job at the same instant all land."""
BODY_METHODS = ("POST", "PUT", "PATCH", "DELETE")


def _unreadable_body(error: BaseException) -> BaseException:
    """tornado's refusal of a body it parses itself before any handler (a form whose
    encoding it cannot read) as the ValidationError naming ``body`` that ours would be."""
    if isinstance(error, web.HTTPError) and isinstance(error.__cause__, HTTPInputError):
        return ValidationError("body", f"cannot be read: {error.__cause__}")
    return error


class RecallHandler(ExtensionHandlerMixin, APIHandler):
    auth_resource = AUTH_RESOURCE
    _body: dict[str, Any] | None = None
    reads_json_body = True
    """False for a route whose body is another protocol's to read and refuse (MCP's JSON-RPC)."""

    async def prepare(self, *, _redirect_to_login: bool = True) -> None:
        await super().prepare()
        # The server serves HTTP a moment before its post-start hook starts our scheduler.
        ready: asyncio.Event = self.settings["jupyter_recall_ready"]
        # Once started, no waiting: wait_for makes a task and a timer for every request.
        if not ready.is_set():
            try:
                await asyncio.wait_for(ready.wait(), READY_TIMEOUT)
            except asyncio.TimeoutError:
                raise web.HTTPError(503, "jupyter_recall is starting; try again") from None
        failure = self.settings["jupyter_recall_failure"]()
        if failure is not None:
            raise web.HTTPError(503, f"jupyter_recall is not running: {failure}")
        # Every route with a body refuses a bad one the same way, whether or not it reads it;
        # a caller who is not logged in gets the 403 of @web.authenticated first.
        if self.reads_json_body and self.request.method in BODY_METHODS and self.current_user:
            self.json_body()

    @property
    def scheduler(self) -> Scheduler:
        return cast(Scheduler, self.settings["jupyter_recall_scheduler"])

    @property
    def owner(self) -> str:
        return str(self.settings["jupyter_recall_owner"](self.current_user))

    def json_body(self) -> dict[str, Any]:
        if self._body is None:
            self._body = decode_body(self.request.body)
        return self._body

    def send_json(self, document: Any, status: int = 200) -> None:
        self.set_status(status)
        self.finish(answer_text(document))  # APIHandler.finish says it is application/json

    def decode_argument(self, value: bytes, name: str | None = None) -> str:
        """A query or path argument as text; tornado's own refusal names no field."""
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            raise ValidationError(
                name or "path", f"is not UTF-8 text (byte {value[:40]!r})"
            ) from None

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        exc_info = kwargs.get("exc_info")
        error = _unreadable_body(exc_info[1]) if exc_info else None
        if isinstance(error, RecallError):
            self.set_status(status_for(error))
            self.set_header("Content-Type", "application/json")
            self.finish(json.dumps(error_body(error)))
            return
        if status_code == 405:
            self.set_header("Allow", ", ".join(allowed_methods(type(self))))
        super().write_error(status_code, **kwargs)

    def log_exception(self, typ: Any, value: Any, tb: Any) -> None:
        if isinstance(value, RecallError):
            self.log.info(
                "jupyter_recall: %s %s -> %s", self.request.method, self.request.uri, value
            )
            return
        super().log_exception(typ, value, tb)

    async def check_runnable(self, jobs: Sequence[JobShape], *, batch: bool = False) -> None:
        """Refuses a job that could never run: a server tool the server lacks
        (``tool_checks.py``), a kernel spec it does not have (``kernel_checks.py``); errors
        name ``jobs[i].`` in a ``batch``."""
        check_server_tools(self.settings["jupyter_recall_tools"], jobs, batch=batch)
        kernel_specs: KernelSpecNames | None = self.settings.get("jupyter_recall_kernel_specs")
        if kernel_specs is not None:
            await kernel_specs.check(jobs, batch=batch)

    def query_list(self, name: str) -> list[str]:
        return [v for raw in self.get_query_arguments(name) for v in raw.split(",") if v]

    def query_count(self, name: str, maximum: int) -> int | None:
        return parse_count(self.get_query_argument(name, None), name, maximum)

    def query_as_sent(self, name: str) -> str | None:
        """The last value of a query argument as it came: tornado's ``get_query_argument``
        turns control characters into spaces and strips, so a check of a NUL never saw one."""
        values = self.request.query_arguments.get(name)
        return self.decode_argument(values[-1], name=name) if values else None

    def query_choice(self, name: str, accepted: tuple[str, ...]) -> str | None:
        value = self.get_query_argument(name, None)
        if value is not None and value not in accepted:
            raise ValidationError(name, f"unknown value {value!r}", accepted=accepted)
        return value


def allowed_methods(handler: type[web.RequestHandler]) -> list[str]:
    """The methods a handler class implements (tornado's defaults answer 405)."""
    return [
        method
        for method in ("GET", "POST", "PUT", "PATCH", "DELETE")
        if getattr(handler, method.lower()) is not getattr(web.RequestHandler, method.lower())
    ]


def _session_path(path: str | None) -> str | None:
    # Written as a job's target path is stored: ``./nb.ipynb`` finds the jobs of ``nb.ipynb``.
    return contents_path(path, "path") if path else path


def _job_filter(handler: RecallHandler) -> JobFilter:
    statuses = [JobStatus.parse(v, "status") for v in handler.query_list("status")]
    kinds = [JobKind.parse(v, "kind") for v in handler.query_list("kind")]
    return JobFilter(
        status=statuses,
        kind=kinds,
        session=_session_path(handler.get_query_argument("path", None)),
        schedule_kind=handler.query_choice("schedule_kind", SCHEDULE_KINDS),
        pending_recalls_only=handler.query_choice("pending_recalls", FLAGS) in FLAGS[:2],
        search=check_search(handler.query_as_sent("q")),
    )


class JobsHandler(RecallHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        order = job_order(
            self.query_choice("sort", JOB_SORT_KEYS), self.query_choice("order", ORDERS)
        )
        limit = self.query_count("limit", MAX_PAGE) or DEFAULT_PAGE
        where = replace(
            _job_filter(self),
            sort=order.sort,
            descending=order.descending,
            after=parse_job_cursor(self.get_query_argument("cursor", None), order),
            limit=limit + 1,
        )
        jobs, last = page_of(await self.scheduler.list_jobs(owner=self.owner, where=where), limit)
        next_cursor = None if last is None else job_cursor(last, order)
        self.send_json({"jobs": [job_to_json(job) for job in jobs], "next_cursor": next_cursor})

    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = self.json_body()
        if "jobs" in body:
            news = new_jobs_from_json(body)
            shapes = [shape_of(new) for new in news]
            await self.check_runnable(shapes, batch=True)
            await authorize_jobs(self, self.owner, shapes, batch=True)
            # The engine names the index of a batch of several; one is jobs[0] all the same.
            with within("jobs[0]") if len(news) == 1 else contextlib.nullcontext():
                jobs = await self.scheduler.add_jobs(news, owner=self.owner)
            self.send_json({"jobs": [created_job_json(job) for job in jobs]}, status=201)
            return
        new, owner = new_job_from_json(body), self.owner
        shape = [shape_of(new)]
        await self.check_runnable(shape)
        await authorize_jobs(self, owner, shape)
        job = await self.scheduler.add_job(new, owner=owner)
        self.send_json(created_job_json(job), status=201)


def created_job_json(job: Job) -> JobJSON:
    """A new job, with ``warnings`` when it is valid but probably not what was meant
    (core/cadence.py); every surface that creates jobs shows them."""
    document = job_to_json(job)
    warnings = created_warnings(job)
    if warnings:
        document["warnings"] = warnings
    return document


async def keep_recall_session(scheduler: Scheduler, current: Job, target: Target | None) -> None:
    """A recall belongs to its session (one pending recall each): a new target may not move it
    to another session, where it would escape that rule. Moving is cancel, then create."""
    moved_to = default_session(target) if target is not None else None
    if current.kind is not JobKind.RECALL or moved_to in (None, current.session):
        return
    where = JobFilter(session=moved_to, pending_recalls_only=True)
    others = await scheduler.list_jobs(owner=current.owner, where=where)
    held = f": it already has pending recall {others[0].id}" if others else ""
    raise ConflictError(
        f"recall {current.id} belongs to session {current.session!r} and cannot move to "
        f"{moved_to!r}{held}; a session has one pending recall at a time, so cancel this one "
        "and create it there"
    )


class JobCountsHandler(RecallHandler):
    """How many jobs match the listing's filters, by status, without reading them."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        counts = await self.scheduler.count_jobs_by_status(
            owner=self.owner, where=_job_filter(self)
        )
        self.send_json(
            {
                "total": sum(count.jobs for count in counts),
                "by_status": {count.status.value: count.jobs for count in counts},
                "running": sum(count.running for count in counts),
            }
        )


class JobHandler(RecallHandler):
    @web.authenticated
    @authorized
    async def get(self, job_id: str) -> None:
        job = await self.scheduler.get_job(job_id, owner=self.owner)
        self.send_json(job_to_json(job))

    @web.authenticated
    @authorized
    async def patch(self, job_id: str) -> None:
        # A merge computed from a job another request changed meanwhile would undo that
        # change: read again and merge again. Each round one of the racing requests wins.
        for _ in range(PATCH_ROUNDS - 1):
            try:
                job = await self._patched(job_id)
            except ChangedMeanwhile:
                continue
            break
        else:
            job = await self._patched(job_id)
        self.send_json(job_to_json(job))

    async def _patched(self, job_id: str) -> Job:
        current = await self.scheduler.get_job(job_id, owner=self.owner)
        changes = job_changes_from_json(self.json_body(), current)
        changes = with_watcher_interval(current, changes, now=self.scheduler.clock.now())
        shape = [changed_shape(current, changes)]
        await self.check_runnable(shape)
        await authorize_jobs(self, self.owner, shape)
        await keep_recall_session(self.scheduler, current, changes.target)
        changes = replace(changes, read_from=current)
        return await self.scheduler.change_job(job_id, owner=self.owner, changes=changes)

    @web.authenticated
    @authorized
    async def delete(self, job_id: str) -> None:
        await self.scheduler.delete_job(job_id, owner=self.owner)
        self.set_status(204)
        self.finish()


class JobActionHandler(RecallHandler):
    @web.authenticated
    @authorized
    async def post(self, job_id: str, action: str) -> None:
        scheduler, owner = self.scheduler, self.owner
        if action == "trigger":
            job = await scheduler.get_job(job_id, owner=owner)
            await authorize_jobs(self, owner, [shape_of(job)])
            run = await scheduler.trigger_job(job_id, owner=owner)
            self.send_json(run_to_json(run), status=201)
            return
        if action == "resume":
            body = self.json_body()
            refuse_unknown(body, ("catch_up",))
            catch_up = body.get("catch_up", False)
            if not isinstance(catch_up, bool):
                raise ValidationError("catch_up", f"must be true or false, got {catch_up!r}")
            job = await scheduler.resume_job(job_id, owner=owner, catch_up=catch_up)
        elif action == "pause":
            job = await scheduler.pause_job(job_id, owner=owner)
        elif action == "cancel":
            job = await scheduler.cancel_job(job_id, owner=owner)
        else:
            job = await scheduler.skip_job(job_id, owner=owner)
        self.send_json(job_to_json(job))


class JobRunsHandler(RecallHandler):
    @web.authenticated
    @authorized
    async def get(self, job_id: str) -> None:
        await self.scheduler.get_job(job_id, owner=self.owner)
        await send_runs(self, RunFilter(job_id=job_id))


class RunsHandler(RecallHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        where = RunFilter(
            since=parse_since(self.get_query_argument("since", None)),
            status=[RunStatus.parse(v, "status") for v in self.query_list("status")],
            job_id=self.get_query_argument("job_id", None),
        )
        await send_runs(self, where)


async def send_runs(handler: RecallHandler, where: RunFilter) -> None:
    """A page of runs, newest first, with the cursor of the next page (None at the end)."""
    limit = handler.query_count("limit", MAX_PAGE) or DEFAULT_PAGE
    after = parse_run_cursor(handler.get_query_argument("cursor", None))
    where = replace(where, after=after, limit=limit + 1)
    found = await handler.scheduler.list_runs(owner=handler.owner, where=where)
    runs, last = page_of(found, limit)
    next_cursor = None if last is None else run_cursor(last)
    handler.send_json({"runs": [run_to_json(run) for run in runs], "next_cursor": next_cursor})


class RunHandler(RecallHandler):
    @web.authenticated
    @authorized
    async def get(self, run_id: str) -> None:
        run = await self.scheduler.get_run(run_id, owner=self.owner)
        self.send_json(run_to_json(run))


class RunStopHandler(RecallHandler):
    @web.authenticated
    @authorized
    async def post(self, run_id: str) -> None:
        run = await self.scheduler.stop_run(run_id, owner=self.owner)
        self.send_json(run_to_json(run))


Method = TypeVar("Method", bound=Callable[..., Any])


def authorized_to(action: str) -> Callable[[Method], Method]:
    """jupyter_server's ``@authorized`` for a fixed action, whatever the HTTP method."""
    decorator: Callable[[Method], Method] = authorized(action)
    return decorator


class ParseHandler(RecallHandler):
    # Parsing changes nothing: whoever may read recall may ask what a phrase means.
    @web.authenticated
    @authorized_to("read")
    async def post(self) -> None:
        body = self.json_body()
        refuse_unknown(body, PARSE_FIELDS)
        when = body.get("when")
        if not isinstance(when, str):
            raise ValidationError("when", f"must be a string, got {json_type(when)}")
        check_text(when, "when", TEXT_LIMITS["when"])
        tz = body.get("tz") or self.settings["jupyter_recall_default_tz"]
        if not isinstance(tz, str):
            raise ValidationError("tz", f"must be a string, got {json_type(tz)}")
        check_text(tz, "tz", TEXT_LIMITS["tz"])
        check = body.get("check", False)
        if not isinstance(check, bool):
            raise ValidationError("check", f"must be true or false, got {check!r}")
        try:
            spec = parse_when(when, now=self.settings["jupyter_recall_clock"].now(), tz=tz)
        except ValidationError as error:
            if not check:
                raise
            # A form checking what is typed expects failures: an answer, not an HTTP error
            # (a 400 would land in the browser's console at every keystroke).
            self.send_json({"when": when, "valid": False, "error": error_body(error)})
            return
        self.send_json(
            {
                **({"valid": True} if check else {}),
                "when": when,
                "kind": spec.kind,
                "canonical": spec.canonical,
                "description": spec.describe(),
                "tz": spec.tz,
                "next_fire_times": [iso(t) for t in spec.next_fire_times(PREVIEW_COUNT)],
            }
        )


class InfoHandler(RecallHandler):
    """What a kernel or CLI checks first: is the extension here, and which version; the root
    directory too (as JupyterLab's page config gives it), for a client that has a notebook's
    filesystem path and no runtime file of this server to place it."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        from jupyter_recall import __version__

        self.send_json(
            {
                "name": "jupyter_recall",
                "version": __version__,
                "default_tz": self.settings["jupyter_recall_default_tz"],
                "user": self.owner,
                "root_dir": os.path.abspath(os.path.expanduser(self.settings["server_root_dir"])),
            }
        )


class ToolsHandler(RecallHandler):
    """The tools the server can run and its tool policies (kernels apply them too)."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        from jupyter_recall.tools import ToolRunner

        runner: ToolRunner = self.settings["jupyter_recall_tools"]
        self.send_json(
            {
                "tools": runner.registry.describe(),
                "policies": dict(self.settings["jupyter_recall_tool_policies"]),
            }
        )


class UnknownRouteHandler(RecallHandler):
    """Any other path under /api/recall/: a JSON 404, whatever the method."""

    @web.authenticated
    def _unknown(self, *args: str) -> None:
        raise NotFoundError("route", self.request.path)

    get = post = put = patch = delete = _unknown


def _id(name: str) -> str:
    return f"(?P<{name}>{ID_PATTERN})"


def route_table() -> list[tuple[str, type[RecallHandler]]]:
    from jupyter_recall.server.prune_api import PruneHandler
    from jupyter_recall.server.sse import EventsHandler

    job, run = _id("job_id"), _id("run_id")
    actions = "|".join(JOB_ACTIONS)
    return [
        (r"/api/recall/info", InfoHandler),
        (r"/api/recall/jobs", JobsHandler),
        (r"/api/recall/jobs/counts", JobCountsHandler),
        (rf"/api/recall/jobs/{job}", JobHandler),
        (rf"/api/recall/jobs/{job}/(?P<action>{actions})", JobActionHandler),
        (rf"/api/recall/jobs/{job}/runs", JobRunsHandler),
        (r"/api/recall/runs", RunsHandler),
        (r"/api/recall/runs/prune", PruneHandler),
        (rf"/api/recall/runs/{run}", RunHandler),
        (rf"/api/recall/runs/{run}/stop", RunStopHandler),
        (r"/api/recall/parse", ParseHandler),
        (r"/api/recall/tools", ToolsHandler),
        (r"/api/recall/events", EventsHandler),
        *_notification_and_watcher_routes(),
        *_owner_routes(),
        (r"/api/recall/.*", UnknownRouteHandler),
    ]


def _owner_routes() -> list[tuple[str, type[RecallHandler]]]:
    from jupyter_recall.server.owners_api import owner_routes

    return owner_routes()


def _notification_and_watcher_routes() -> list[tuple[str, type[RecallHandler]]]:
    from jupyter_recall.server.approvals import approval_routes
    from jupyter_recall.server.notifications import notification_routes
    from jupyter_recall.server.watchers import watcher_routes

    return notification_routes() + watcher_routes() + approval_routes()
