"""Jobs authorized as jupyter_server would authorize doing their work directly.

What each job needs is ``permissions.py``. It is asked of the server's Authorizer twice:

- when a request creates, changes or triggers a job: with that request's handler and user, as
  jupyter_server's own handlers ask for permissions beyond their route's (``GET /api/me``);
  a refusal is a 403 worded as jupyter_server's (``PermissionDeniedError``);
- when a run starts, since permissions change: with the identity of the job's owner and a
  handler made for the run (``RunAuthorizationHandler``), since ``is_authorized`` takes one. A
  refusal fails the run, naming the permission, before its executor sees it.

The owner's identity is the ``User`` the identity provider gave on the owner's last request
that passed these checks, kept in memory: it is the object Authorizers know, with whatever a
provider adds to it (JupyterHub's scopes). Until the owner makes such a request after a
restart, and for jobs declared at start by installed packages, it is ``User(username=owner)``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from jupyter_core.utils import ensure_async
from jupyter_server.auth.authorizer import AllowAllAuthorizer
from jupyter_server.auth.identity import User
from jupyter_server.base.handlers import JupyterHandler
from tornado import httputil, web

from jupyter_recall.core.errors import PermissionDeniedError
from jupyter_recall.core.model import Job, JobKind, Run
from jupyter_recall.core.records import Action, JobOptions, Target
from jupyter_recall.engine.executors import Executor, OutputSink, RunOutcome
from jupyter_recall.engine.jobs import JobChanges, NewJob
from jupyter_recall.engine.owners import OwnedJob
from jupyter_recall.server.permissions import Requirement, required_permissions

log = logging.getLogger("jupyter_recall.server")


@dataclass(frozen=True, slots=True)
class JobShape:
    """What decides a job's permissions."""

    kind: JobKind
    action: Action
    target: Target
    options: JobOptions

    def requirements(self) -> tuple[Requirement, ...]:
        return required_permissions(self.kind.value, self.action, self.target, self.options)


def shape_of(job: Job | NewJob) -> JobShape:
    """Of a ``Job`` or ``NewJob``."""
    return JobShape(job.kind, job.action, job.target, job.options)


def declared_shape(spec: OwnedJob) -> JobShape:
    """Of a job an owner declares (``PUT /api/recall/owners/{owner}/jobs``): always a job."""
    return JobShape(JobKind.JOB, spec.action, spec.target, spec.options)


def changed_shape(current: Job, changes: JobChanges) -> JobShape:
    """The job as a PATCH with these changes leaves it."""
    return JobShape(
        current.kind,
        current.action if changes.action is None else changes.action,
        current.target if changes.target is None else changes.target,
        current.options if changes.options is None else changes.options,
    )


class JobAuthorization:
    """The two checkpoints, and the owners' identities the second one needs."""

    def __init__(self) -> None:
        self._identities: dict[str, User] = {}

    async def check_request(
        self, handler: JupyterHandler, owner: str, jobs: Sequence[JobShape], *, batch: bool = False
    ) -> None:
        """Raise ``PermissionDeniedError`` for the first permission refused to the caller;
        ``jobs[i]: `` prefixes its reason in a ``batch`` (``{"jobs": [...]}``, even of one)."""
        user = handler.current_user
        for index, job in enumerate(jobs):
            for need in job.requirements():
                if not await _allowed(handler, user, need):
                    reason = need.reason[:1].upper() + need.reason[1:]
                    if batch:
                        reason = f"jobs[{index}]: {need.reason}"
                    permission = need.permission
                    raise PermissionDeniedError(permission.action, permission.resource, reason)
        if isinstance(user, User):
            self._identities[owner] = user

    def identity(self, owner: str) -> User:
        return self._identities.get(owner) or User(username=owner)

    async def refusal(self, app: web.Application, job: Job, run: Run) -> str | None:
        """Why this run may not start now, or None when it may."""
        needs = shape_of(job).requirements()
        # The default Authorizer allows everything: no handler to build for each run.
        if not needs or type(app.settings.get("authorizer")) is AllowAllAuthorizer:
            return None
        user = self.identity(job.owner)
        handler = RunAuthorizationHandler.for_run(app, job, run, user)
        for need in needs:
            try:
                allowed = await _allowed(handler, user, need)
            except Exception as error:  # a third-party Authorizer: its failure is a refusal
                log.exception("jupyter_recall: the Authorizer failed on run %s", run.id)
                return f"not run: the server's Authorizer failed ({type(error).__name__}: {error})"
            if not allowed:
                return (
                    f"not run: user {user.username!r} is not authorized to {need.permission} "
                    f"(checked as the run started); {need.reason}. Nothing was executed."
                )
        return None


async def _allowed(handler: JupyterHandler, user: Any, need: Requirement) -> bool:
    permission = need.permission
    decision = await ensure_async(
        handler.authorizer.is_authorized(handler, user, permission.action, permission.resource)
    )
    return bool(decision)


class _DetachedConnection(httputil.HTTPConnection):
    """The connection of a request that no client sent: nothing is ever written to it."""

    def set_close_callback(self, callback: Any) -> None:
        """Tornado's handlers register one; there is no socket to close."""


class RunAuthorizationHandler(JupyterHandler):
    """What an Authorizer is handed when a run starts: a ``JupyterHandler`` of the server's
    application (its settings, authorizer, identity provider, log), on a request standing for
    the run (``POST {base_url}api/recall/jobs/{job id}/runs``), whose current user is the job
    owner's identity. It serves no request and writes nothing."""

    auth_resource = "recall"

    @classmethod
    def for_run(cls, app: web.Application, job: Job, run: Run, user: User) -> JupyterHandler:
        base_url = str(app.settings.get("base_url", "/"))
        request = httputil.HTTPServerRequest(
            start_line=httputil.RequestStartLine(
                "POST", f"{base_url}api/recall/jobs/{job.id}/runs", "HTTP/1.1"
            ),
            # The server itself, as a local client addresses it.
            headers=httputil.HTTPHeaders({"Host": "localhost", "X-Jupyter-Recall-Run": run.id}),
            connection=_DetachedConnection(),
        )
        handler = cls(app, request)
        handler.current_user = handler._jupyter_current_user = user
        return handler


class AuthorizedExecutor:
    """Checks each run's permissions (``JobAuthorization.refusal``) before ``inner`` sees it."""

    def __init__(self, inner: Executor, authorization: JobAuthorization, serverapp: Any) -> None:
        self.inner = inner
        self.authorization = authorization
        self._serverapp = serverapp

    def concurrency_key(self, job: Job) -> str:
        return self.inner.concurrency_key(job)

    async def execute(self, job: Job, run: Run, output: OutputSink) -> RunOutcome:
        refusal = await self.authorization.refusal(self._serverapp.web_app, job, run)
        if refusal is not None:
            output.write(f"[recall] {refusal}\n")
            return RunOutcome(error=refusal)
        return await self.inner.execute(job, run, output)

    async def aclose(self) -> None:
        closer = getattr(self.inner, "aclose", None)
        if closer is not None:
            await closer()


async def authorize_jobs(
    handler: JupyterHandler, owner: str, jobs: Sequence[JobShape], *, batch: bool = False
) -> None:
    """The first checkpoint, for our request handlers (the server's ``JobAuthorization``)."""
    authorization = handler.settings["jupyter_recall_authorization"]
    assert isinstance(authorization, JobAuthorization)
    await authorization.check_request(handler, owner, jobs, batch=batch)
