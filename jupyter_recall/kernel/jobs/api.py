"""The Python API used from notebooks and agent loops: schedule, recall, jobs, job, Job.

Every call is one or two synchronous REST requests to the server that owns this kernel
(``client.py``). Domain errors are the server's, rebuilt as ``ValidationError``/``ParseError``/
``NotFoundError``/``ConflictError`` with its message, field and accepted values.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Unpack

from jupyter_recall.client.documents import (
    ActionDocument,
    AfterDocument,
    NewJobDocument,
    ParseDocument,
    PoliciesDocument,
    PolicySettings,
    RunDocument,
    RunPage,
    TargetDocument,
    headless_target,
)
from jupyter_recall.client.ids import check_job_id
from jupyter_recall.client.json_values import check_json
from jupyter_recall.client.records import JobRecord
from jupyter_recall.core.dependency import After
from jupyter_recall.core.errors import (
    ConflictError,
    PassedWhilePaused,
    PendingRecallExists,
    ValidationError,
)
from jupyter_recall.core.text import check_plain_text
from jupyter_recall.kernel.connection import client as _client
from jupyter_recall.kernel.connection import notifications

ACTION_ARGUMENTS = ("code", "instruction", "tool", "notification", "notebook")
TARGET_NAMES = ("kernel", "headless", "server")
ENDED = ("completed", "failed", "cancelled")
RECENT_RUNS = 5


def _job_path(job_id: str, suffix: str = "") -> str:
    return f"/api/recall/jobs/{check_job_id(job_id)}{suffix}"


class Job(JobRecord):
    """A handle on one job: its typed fields (``client/records.py``) and as a mapping, plus its
    actions; ``refresh()`` reads them again.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        nxt = self.next_fire_at
        where = f", next {nxt}" if nxt else ""
        return (
            f"<Job {self.id} {self._fields.get('name')!r} "
            f"{self.description or self.when!r}, {self.status or '?'}{where}>"
        )

    def _replace(self, data: Mapping[str, Any]) -> Job:
        self._hold(data)
        return self

    def refresh(self) -> Job:
        """The job as the server holds it now (this handle is updated too)."""
        return self._replace(_client.get_client().request("GET", _job_path(self.id)))

    def cancel(self) -> Job:
        """Make sure nothing more fires: the job and its runs stay (status ``cancelled``) and a
        run in flight finishes, so a recall's handler may cancel its own recall. A job that has
        already ended (completed, failed) is left as it is."""
        client = _client.get_client()
        try:
            return self._replace(client.request("POST", _job_path(self.id, "/cancel")))
        except ConflictError:
            current = self.refresh()
            if current.get("status") in ENDED:
                return current
            raise

    def delete(self) -> None:
        """Delete the job and its history; a run in flight is stopped."""
        _client.get_client().request("DELETE", _job_path(self.id))

    def pause(self) -> Job:
        """Stop firing until ``resume()``; runs in flight finish."""
        return self._replace(_client.get_client().request("POST", _job_path(self.id, "/pause")))

    def resume(self, *, catch_up: bool = False) -> Job:
        """Fire again from now on. What passed while paused is skipped, unless ``catch_up``:
        then it runs once now (a one-shot whose time passed is refused without it, naming
        ``catch_up``)."""
        body = {"catch_up": catch_up}
        try:
            answer = _client.get_client().request("POST", _job_path(self.id, "/resume"), body=body)
        except PassedWhilePaused as error:
            hint = f"jupyter_recall.job({error.job_id!r}).resume(catch_up=True)"
            raise error.hinted(hint) from None
        return self._replace(answer)

    def skip(self) -> Job:
        """Skip the next occurrence of a recurring job (never earlier than now)."""
        return self._replace(_client.get_client().request("POST", _job_path(self.id, "/skip")))

    def run_now(self) -> RunDocument:
        """Fire once now without moving the schedule; the new run (status ``running``)."""
        run: RunDocument = _client.get_client().request("POST", _job_path(self.id, "/trigger"))
        return run

    def runs(self, limit: int | None = None) -> list[RunDocument]:
        """The job's runs, newest first, with their output: all (read page by page), or the
        newest ``limit``."""
        client, path = _client.get_client(), _job_path(self.id, "/runs")
        if limit is None:
            return client.every_run(path)
        page: RunPage = client.request("GET", path, query={"limit": str(limit)})
        return list(page["runs"])


# --- payloads ---------------------------------------------------------------------------------


def action_payload(
    *,
    code: str | None = None,
    instruction: str | None = None,
    tool: str | None = None,
    params: Mapping[str, Any] | None = None,
    notification: str | None = None,
    title: str | None = None,
    channel: str | None = None,
    notebook: str | None = None,
    parameters: Mapping[str, Any] | None = None,
    comment: str | None = None,
) -> ActionDocument:
    """The action of exactly one of code/instruction/tool/notification/notebook."""
    given = {
        "code": code,
        "instruction": instruction,
        "tool": tool,
        "notification": notification,
        "notebook": notebook,
    }
    _check_texts(**given, title=title, channel=channel, comment=comment)
    chosen = [key for key, value in given.items() if value is not None]
    if len(chosen) != 1:
        raise ValidationError(
            "action",
            f"give exactly one of {', '.join(ACTION_ARGUMENTS)}; got {', '.join(chosen) or 'none'}",
            accepted=ACTION_ARGUMENTS,
        )
    _check_belongs(
        chosen[0],
        params=params,
        title=title,
        channel=channel,
        parameters=parameters,
        comment=comment,
    )
    if code is not None:
        return {"type": "code", "code": code}
    if instruction is not None:
        return _instruction_action(instruction, comment)
    if tool is not None:
        return {"type": "tool", "name": tool, "params": dict(params or {})}
    if notebook is not None:
        return {"type": "notebook", "path": notebook, "parameters": dict(parameters or {})}
    return _notification_action(str(notification), title, channel)


BELONGS_TO = {
    "params": "tool",
    "title": "notification",
    "channel": "notification",
    "parameters": "notebook",
    "comment": "instruction",
}
"""The action each of these arguments goes with: given with another, it would be dropped."""


def _check_belongs(chosen: str, **given: object) -> None:
    for field_name, value in given.items():
        action = BELONGS_TO[field_name]
        if value is not None and action != chosen:
            raise ValidationError(
                field_name, f"only with {action}=...; this job's action is {chosen}=..."
            )


def _instruction_action(instruction: str, comment: str | None) -> ActionDocument:
    action: ActionDocument = {"type": "instruction", "instruction": instruction}
    if comment is not None:
        action["comment"] = comment
    return action


def _notification_action(message: str, title: str | None, channel: str | None) -> ActionDocument:
    action: ActionDocument = {"type": "notification", "message": message}
    if title is not None:
        action["title"] = title
    if channel is not None:
        action["channel"] = channel
    return action


def _this_kernel(ident: _client.Identity, what: str = "code") -> TargetDocument:
    if ident.external:
        message = _client.not_the_servers(what, code=what == "code")
        raise ValidationError("target", message, accepted=TARGET_NAMES)
    target = ident.target()
    if target is None:
        raise ValidationError(
            "target",
            "this process is not a kernel of the Jupyter server (no kernel id found): give "
            "target='headless' or 'server', or a target dict naming a notebook",
            accepted=TARGET_NAMES,
        )
    return target


def _default_target(action: Mapping[str, Any], ident: _client.Identity | None) -> str:
    """This kernel for code and instructions, else the server; code from a kernel the server
    did not start (nbconvert, papermill) runs in a fresh headless kernel instead."""
    if action["type"] not in ("code", "instruction"):
        return "server"
    external = (ident or _client.identity()).external
    return "headless" if external and action["type"] == "code" else "kernel"


def target_payload(
    target: str | TargetDocument | None,
    action: ActionDocument,
    *,
    kernel_name: str | None = None,
    ident: _client.Identity | None = None,
) -> TargetDocument:
    """Where the job runs. Default: this kernel for code and instructions, else the server."""
    if kernel_name is not None:
        target = _with_kernel_name(target)
    if target is None:
        target = _default_target(action, ident)
    if isinstance(target, Mapping):
        # A target document as the REST API takes it: the server checks it, naming the field.
        return TargetDocument(**target)
    if target == "kernel":
        return _this_kernel(ident or _client.identity()).copy()
    if target == "headless":
        return headless_target(kernel_name)
    if target == "server":
        return {"type": "server"}
    raise ValidationError("target", f"unknown target {target!r}", accepted=TARGET_NAMES)


def _with_kernel_name(target: str | TargetDocument | None) -> str:
    """``kernel_name`` names the spec of a fresh kernel: it implies ``target='headless'`` and
    goes with no other (the kernel of this notebook or the server's have their own)."""
    if target is None or target == "headless":
        return "headless"
    if isinstance(target, Mapping):
        reason = "put it in the target dict: {'type': 'headless', 'kernel_name': ...}"
    else:
        reason = f"only with target='headless' (a fresh kernel of that spec), not {target!r}"
    raise ValidationError("kernel_name", reason)


def check_instruction_target(action: ActionDocument, target: TargetDocument) -> None:
    """An instruction goes to the ``@on_recall`` handler of the kernel it runs in: a fresh
    headless kernel never has one (it would only print the instruction into the run's output,
    and queue a notification that dies with that kernel)."""
    if action["type"] == "instruction" and target.get("type") == "headless":
        raise ValidationError(
            "target",
            "an instruction is delivered to this kernel's @on_recall handler, which a fresh "
            "headless kernel never has: leave target out (this kernel), or schedule "
            "notification=... to be told, or code=... to run in a fresh kernel",
            accepted=("kernel",),
        )


def _policies_document(
    settings: PolicySettings, end_at: str | datetime | None
) -> PoliciesDocument | PolicySettings:
    """The keyword policies as sent (the server refuses unknown ones by name); an ``end_at``
    given as a ``datetime`` as its ISO text."""
    if end_at is None:
        return settings
    return {**settings, "end_at": end_at.isoformat() if isinstance(end_at, datetime) else end_at}


def after_payload(after: str | AfterDocument | Job) -> AfterDocument:
    """``after=`` of ``schedule``: a job id (``"3f9c2a1b7d0e"``, or with its outcome
    ``"3f9c2a1b7d0e:failed"``), a ``Job``, or ``{"job": ID, "on": ...}``."""
    if isinstance(after, Job):
        parsed = After(after.id)
    elif isinstance(after, str):
        parsed = After.from_option(after)
    else:
        parsed = After.from_json(after)
    return {"job": parsed.job, "on": parsed.on.value}


def job_body(
    when: str | None,
    action: ActionDocument,
    target: TargetDocument,
    *,
    kind: str = "job",
    name: str | None = None,
    tz: str | None = None,
    session: str | None = None,
    policies: PoliciesDocument | PolicySettings | None = None,
    options: Mapping[str, Any] | None = None,
    after: str | AfterDocument | Job | None = None,
) -> NewJobDocument:
    """The body of ``POST /api/recall/jobs``; a job fires on a time (``when``) or after
    another job (``after``): exactly one."""
    body: NewJobDocument = {"action": action, "target": target, "kind": kind}
    if after is not None:
        if when is not None:
            raise ValidationError("after", "give when or after, not both")
        body["after"] = after_payload(after)
    elif not isinstance(when, str):
        raise ValidationError("when", f"must be a string, got {when!r}")
    else:
        body["when"] = when
    if name is not None:
        body["name"] = name
    if tz is not None:
        body["tz"] = tz
    if session is not None:
        body["session"] = session
    if policies:
        body["policies"] = policies
    if options:
        body["options"] = dict(options)
    return body


def create(body: NewJobDocument) -> Job:
    """POST a job body; the created job, followed by this kernel's notification listener."""
    created = Job(_client.get_client().request("POST", "/api/recall/jobs", body=body))

    notifications.track(created.id)
    notifications.start_in_kernel()
    return created


# --- the public functions ---------------------------------------------------------------------


def schedule(
    when: str | None = None,
    code: str | None = None,
    *,
    after: str | AfterDocument | Job | None = None,
    instruction: str | None = None,
    tool: str | None = None,
    params: Mapping[str, Any] | None = None,
    notification: str | None = None,
    title: str | None = None,
    notebook: str | None = None,
    parameters: Mapping[str, Any] | None = None,
    target: str | TargetDocument | None = None,
    kernel_name: str | None = None,
    name: str | None = None,
    tz: str | None = None,
    session: str | None = None,
    exclusive: bool | None = None,
    on_missing_kernel: str | None = None,
    options: Mapping[str, Any] | None = None,
    end_at: str | datetime | None = None,
    **policies: Unpack[PolicySettings],
) -> Job:
    """Schedule a job: ``code`` in this kernel (or ``target='headless'``/a target dict), a
    self-``instruction`` for this kernel's agent (never a fresh kernel's: it has none), a
    ``tool`` call, a ``notification`` or a ``notebook``; at ``when``, or instead each time
    another job's run ends: ``after=`` that job (its id, ``"ID:failed"``/``"ID:finished"``, a
    ``Job``, or ``{"job": ID, "on": ...}``; on success by default). Keyword policies:
    ``max_runs``, ``end_at``, ``overlap``, ``coalesce``, ``catchup_window``, ``jitter``,
    ``timeout`` (seconds a run may execute before it is stopped as ``timed_out``),
    ``retries`` (a count, or ``{"max": N, "backoff": S, ...}``: a failed occurrence runs again),
    ``pause_after_failures`` (pause after that many consecutive failed occurrences),
    ``keep_runs`` and ``keep_runs_for`` (seconds or ``"7d"``: retention of its runs).
    Options: ``exclusive`` (wait until this kernel is idle), ``on_missing_kernel`` (``start``,
    ``skip`` or ``fail``: a notebook's kernel that is not running when the job fires)."""
    _check_mappings(params=params, options=options, parameters=parameters)
    action = action_payload(
        code=code,
        instruction=instruction,
        tool=tool,
        params=params,
        notification=notification,
        title=title,
        notebook=notebook,
        parameters=parameters,
    )
    ident = _client.identity()
    where = target_payload(target, action, kernel_name=kernel_name, ident=ident)
    check_instruction_target(action, where)
    all_options = dict(options or {})
    if exclusive is not None:
        all_options["exclusive"] = exclusive
    if on_missing_kernel is not None:
        all_options["on_missing_kernel"] = on_missing_kernel
    body = job_body(
        when,
        action,
        where,
        name=name,
        tz=tz,
        session=session or ident.session,
        policies=_policies_document(policies, end_at),
        options=all_options,
        after=after,
    )
    return create(body)


def _check_mappings(**given: object) -> None:
    """Each of these arguments is None or a mapping of JSON values: ``dict()`` of a list or a
    string would fail later with a bare TypeError or ValueError, and so would sending a set or
    bytes inside (``json.dumps``)."""
    for field_name, value in given.items():
        if value is None:
            continue
        if not isinstance(value, Mapping):
            raise ValidationError(
                field_name, f"must be an object (a dict), got {type(value).__name__}"
            )
        check_json(dict(value), field_name)


def _check_texts(**given: object) -> None:
    """Each of these arguments is None or a string (bytes are not text: decode them)."""
    for field_name, value in given.items():
        if value is not None and not isinstance(value, str):
            raise ValidationError(field_name, f"must be a string, got {type(value).__name__}")


def recall(
    when: str,
    instruction: str,
    *,
    comment: str | None = None,
    name: str | None = None,
    tz: str | None = None,
    session: str | None = None,
    target: str | TargetDocument | None = None,
    end_at: str | datetime | None = None,
    **policies: Unpack[PolicySettings],
) -> Job:
    """Schedule a recall: at ``when`` (``in 30m``, ``every 15m``, ``now``), the agent in this
    kernel gets ``instruction`` (see ``on_recall``). At most one pending recall per session:
    a second one raises ``PendingRecallExists`` (a ConflictError) naming the pending one."""
    if not isinstance(instruction, str):
        raise ValidationError("instruction", f"must be a string, got {instruction!r}")
    action = action_payload(instruction=instruction, comment=comment)
    ident = _client.identity()
    if target is None:
        where = _this_kernel(ident, "recalls")
    else:
        where = target_payload(target, action, ident=ident)
    check_instruction_target(action, where)
    body = job_body(
        when,
        action,
        where,
        kind="recall",
        name=name,
        tz=tz,
        session=session or ident.session,
        policies=_policies_document(policies, end_at),
    )
    try:
        return create(body)
    except PendingRecallExists as error:
        raise error.hinted(f"jupyter_recall.job({error.recall_id!r}).cancel()") from None


def jobs(
    *,
    all: bool = False,
    status: str | None = None,
    kind: str | None = None,
    session: str | None = None,
    search: str | None = None,
    sort: str | None = None,
    order: str | None = None,
    limit: int | None = None,
) -> list[Job]:
    """The jobs of this notebook (its session), or every job of the user with ``all=True``.
    ``status`` and ``kind`` filter (comma-separated values accepted), ``search`` keeps those
    whose id, name, ``when`` or session holds the text; ``sort`` (created_at, next_fire_at,
    last_run_at, name) and ``order`` (asc, desc) as ``GET /api/recall/jobs``. All of them
    (read page by page), or the first ``limit``. The server filters and sorts."""
    _check_query_texts(search=search, session=session)
    query: dict[str, str | None] = {
        "status": status,
        "kind": kind,
        "q": search,
        "sort": sort,
        "order": order,
    }
    if not all:
        query["path"] = session or _client.identity().session
    client = _client.get_client()
    if limit is None:
        return [Job(data) for data in client.every("/api/recall/jobs", "jobs", query=query)]
    query["limit"] = str(limit)
    return [Job(data) for data in client.request("GET", "/api/recall/jobs", query=query)["jobs"]]


def job(job_id: str) -> Job:
    """The job with this id (NotFoundError if it does not exist for this user)."""
    return Job(_client.get_client().request("GET", _job_path(job_id)))


def pending_recall(session: str | None = None) -> Job | None:
    """The pending recall of this session (or of ``session``), if any."""
    _check_query_texts(session=session)
    query = {
        "path": session or _client.identity().session,
        "kind": "recall",
        "pending_recalls": "1",
    }
    found = _client.get_client().request("GET", "/api/recall/jobs", query=query)["jobs"]
    return Job(found[0]) if found else None


def _check_query_texts(**texts: str | None) -> None:
    """Refuse, naming the argument, what cannot be a query's text (not a string, a NUL, a
    lone surrogate): else the server's refusal would name its own query field."""
    _check_texts(**texts)
    for name, text in texts.items():
        if text is not None:
            check_plain_text(text, name)


def parse(when: str, tz: str | None = None) -> ParseDocument:
    """What the server understands of ``when``: kind, canonical form, words, next fire times."""
    body = {"when": when} if tz is None else {"when": when, "tz": tz}
    result: ParseDocument = _client.get_client().request("POST", "/api/recall/parse", body=body)
    return result
