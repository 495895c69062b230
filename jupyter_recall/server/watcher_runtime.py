"""The watcher runtime: what one check of a watcher does, and the executor that runs checks.

A watcher is a job of kind ``watcher``: an interval schedule (``every <interval>s``), a ``tool``
action, and its configuration in ``job.options["watcher"]`` (``WatcherSpec``). The engine fires
watchers like any job; ``WatcherExecutor`` takes their runs and ``WatcherRuntime.check`` runs
the tool (built-in tools on the server through the tool runner; user tools in the notebook's
kernel, while it is alive: a check finding no kernel is skipped), decides with
``core/escalation.py``, and sends the notification, if any, through the notifier
(``output_channel``, default the session).

State (escalation state, counters) and the ring buffer of the last 100 results persist in
the store (``WatcherStore``), so watchers survive restarts of kernels and of the server. The
runtime keeps each watcher's state in memory once read and writes checks in batches
(``FLUSH_INTERVAL``): a crash loses at most that fraction of a second of history.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, NotRequired, TypedDict, TypeVar

import anyio

from jupyter_recall.core.clock import Clock
from jupyter_recall.core.documents import OutputConfigJSON, output_config_of
from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.escalation import (
    CheckResult,
    Decision,
    EscalationConfig,
    NotifyConfigJSON,
    WatcherInfo,
    WatchState,
    WatchStateJSON,
    decide,
    notification_text,
    parse_escalation,
)
from jupyter_recall.core.limits import TEXT_LIMITS
from jupyter_recall.core.model import Job, JobKind, Run, new_id
from jupyter_recall.core.payloads import check_text
from jupyter_recall.core.records import (
    Action,
    CodeAction,
    JobOptions,
    Target,
    ToolAction,
    optional_object,
)
from jupyter_recall.core.text import check_name_text
from jupyter_recall.engine.executors import CollectingSink, Executor, OutputSink, RunOutcome
from jupyter_recall.engine.notify import Notification
from jupyter_recall.server.notifications import NotificationService, describe_delivery
from jupyter_recall.server.watcher_options import (
    DEFAULT_INTERVAL,
    OPTION,
    check_interval,
)
from jupyter_recall.store.base import WatcherStore
from jupyter_recall.store.watchers import CheckRecord, WatcherRecord
from jupyter_recall.tools import ToolRunner

T = TypeVar("T")

log = logging.getLogger("jupyter_recall.watchers")

DEFAULT_HISTORY = 10
FLUSH_INTERVAL = 0.5
"""Seconds between batched writes of check results."""
UNATTENDED_POLICIES = ("auto",)
NO_APPROVAL = "a watcher runs unattended: nobody is there to approve each check"
CHECK_DONE = RunOutcome()
RESULT_MARKER = "@@jupyter_recall-watch-result@@ "
"""Prefix of the line a kernel check prints its result on (``kernel/watchers/watch.py``)."""
WATCHER_FIELDS = (
    "tool",
    "params",
    "interval",
    "label",
    "notify_when",
    "notify_config",
    "output_channel",
    "output_config",
    "session",
    "target",
)


# --- the configuration ----------------------------------------------------------------------------


class WatcherConfigJSON(TypedDict):
    """A watcher's settings, kept in its job's ``options.watcher``."""

    interval: int
    label: str
    notify_when: str
    notify_config: NotifyConfigJSON
    output_config: OutputConfigJSON
    """The channel's settings: each channel checks the keys it reads."""


class WatcherOptionsJSON(TypedDict):
    """The options of a watcher's job."""

    watcher: WatcherConfigJSON
    on_missing_kernel: NotRequired[str]
    output_channel: NotRequired[str]


@dataclass(frozen=True, slots=True)
class WatcherSpec:
    tool: str
    params: dict[str, Any]
    interval: int
    label: str
    escalation: EscalationConfig
    output_channel: str | None = None
    output_config: OutputConfigJSON = field(default_factory=OutputConfigJSON)

    def options(self, target: Target) -> WatcherOptionsJSON:
        options: WatcherOptionsJSON = {
            OPTION: {
                "interval": self.interval,
                "label": self.label,
                "notify_when": self.escalation.notify_when.value,
                "notify_config": self.escalation.notify_config(),
                "output_config": self.output_config,
            }
        }
        if target.type == "kernel":
            # A user tool runs in its kernel only while the kernel is alive.
            options["on_missing_kernel"] = "skip"
        if self.output_channel:
            options["output_channel"] = self.output_channel
        return options

    @classmethod
    def of(cls, job: Job) -> WatcherSpec:
        config = job.options.values.get(OPTION) or {}
        channel = job.options.values.get("output_channel")
        action = job.action
        return cls(
            tool=action.name if isinstance(action, ToolAction) else action.headline,
            params=dict(action.params) if isinstance(action, ToolAction) else {},
            interval=int(config.get("interval", DEFAULT_INTERVAL)),
            label=str(config.get("label") or ""),
            escalation=parse_escalation(config.get("notify_when"), config.get("notify_config")),
            output_channel=channel if isinstance(channel, str) else None,
            output_config=output_config_of(config.get("output_config") or {}),
        )

    def info(self, job_id: str) -> WatcherInfo:
        return WatcherInfo(job_id, self.label, self.tool, self.interval)


def optional_text(body: Mapping[str, Any], key: str) -> str | None:
    value = body.get(key)
    if value is not None and not isinstance(value, str):
        raise ValidationError(key, f"must be a string, got {value!r}")
    return value or None


def _label(body: Mapping[str, Any]) -> str:
    """The watcher's label, which is its job's name: bounded and checked as a name is."""
    label = optional_text(body, "label") or ""
    check_text(label, "label", TEXT_LIMITS["name"])
    return check_name_text(label, "label")


def parse_spec(body: Mapping[str, Any]) -> WatcherSpec:
    """The watcher a REST body (or ``watch_start``) describes; errors name the field."""
    unknown = sorted(set(body) - set(WATCHER_FIELDS))
    if unknown:
        raise ValidationError(unknown[0], "unknown field", accepted=WATCHER_FIELDS)
    tool = body.get("tool")
    module, dot, action = tool.partition(".") if isinstance(tool, str) else ("", "", "")
    if not (module.isidentifier() and dot and action.isidentifier()):
        raise ValidationError("tool", f"must name a tool as 'module.action', got {tool!r}")
    assert isinstance(tool, str)
    return WatcherSpec(
        tool=tool,
        params=optional_object(body, "params"),
        interval=check_interval(body.get("interval", DEFAULT_INTERVAL)),
        label=_label(body),
        escalation=parse_escalation(body.get("notify_when"), body.get("notify_config")),
        output_channel=optional_text(body, "output_channel"),
        output_config=output_config_of(optional_object(body, "output_config")),
    )


# --- checks ---------------------------------------------------------------------------------------


def kernel_check_code(tool: str, params: Mapping[str, Any]) -> str:
    """What a check of a user tool runs in its kernel (``kernel/watchers/watch.py`` prints the
    result)."""
    arguments = json.dumps(dict(params), default=str)
    return (
        '__import__("jupyter_recall.kernel.watchers.watch", fromlist=["run_check"])'
        f".run_check({tool!r}, {arguments!r})"
    )


def result_from_output(text: str, outcome: RunOutcome) -> CheckResult:
    for line in reversed(text.splitlines()):
        if line.startswith(RESULT_MARKER):
            try:
                return CheckResult.from_tool(json.loads(line[len(RESULT_MARKER) :]))
            except ValueError:
                break
    reason = outcome.error or text.strip()[-500:] or "the kernel printed no result"
    return CheckResult(False, error=f"the check did not complete in the kernel: {reason}")


_Pending = tuple[str, str, WatchStateJSON, CheckRecord]
"""A check to write: the watcher's id, owner, new state and result, as ``record_checks`` takes."""


class WatcherRuntime:
    """Runs checks: the tool, the escalation decision, the notification, the state."""

    def __init__(
        self,
        store: WatcherStore,
        notifications: NotificationService,
        clock: Clock,
        *,
        tools: ToolRunner | None,
        kernel: Executor | None,
    ) -> None:
        self.store = store
        self.notifications = notifications
        self.clock = clock
        self.tools = tools
        self.kernel = kernel
        self._states: dict[str, WatchState] = {}
        self._specs: dict[str, tuple[Action, JobOptions, WatcherSpec]] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._pending: list[_Pending] = []
        self._limiter = anyio.CapacityLimiter(1)
        self._flush_lock = anyio.Lock()
        self._flush_task: asyncio.Task[None] | None = None

    async def _in_store(self, func: Callable[[], T]) -> T:
        return await anyio.to_thread.run_sync(func, limiter=self._limiter)

    def is_server_tool(self, name: str) -> bool:
        return self.tools is not None and name in self.tools.registry

    # --- one check --------------------------------------------------------------------------

    def _spec(self, job: Job) -> WatcherSpec:
        # Keyed on what the spec is made of, not on ``updated_at``: every firing changes that.
        cached = self._specs.get(job.id)
        if cached is None or cached[0] != job.action or cached[1] != job.options:
            cached = (job.action, job.options, WatcherSpec.of(job))
            self._specs[job.id] = cached
        return cached[2]

    async def check(self, job: Job, run: Run, output: OutputSink) -> RunOutcome:
        spec = self._spec(job)
        # asyncio's lock: taking a free one does not yield to the loop (anyio's does), and
        # this runs for every check of every watcher.
        lock = self._locks.get(job.id)
        if lock is None:
            lock = self._locks[job.id] = asyncio.Lock()
        async with lock:
            result = await self._run_tool(job, run, spec)
            if isinstance(result, RunOutcome):
                output.write(f"check skipped: {result.skipped_reason}\n")
                return result
            state = await self._state(job.id)
            decision = decide(spec.escalation, state, result)
            self._states[job.id] = decision.state
            sent = await self._notify(job, run, spec, decision, result) if decision.notify else ""
            self._record(job, run, decision, result)
        if decision.notify or not result.success:
            # Quiet checks write nothing: their results are in the watcher's history.
            outcome = "ok" if result.success else f"error: {result.error}"
            output.write(f"check #{decision.state.checks}: {outcome}; {decision.reason}{sent}\n")
        if not result.success:
            return RunOutcome(error=f"check failed: {result.error}")
        return CHECK_DONE

    async def _run_tool(self, job: Job, run: Run, spec: WatcherSpec) -> CheckResult | RunOutcome:
        if job.target.type == "kernel":
            return await self._run_in_kernel(job, run, spec)
        if self.tools is None:
            return CheckResult(False, error="no tool runner is configured on this server")
        answer = await self.tools.run_tool(
            spec.tool, spec.params, allow_approval=False, denial_reason=NO_APPROVAL
        )
        return CheckResult.from_tool(answer)

    async def _run_in_kernel(
        self, job: Job, run: Run, spec: WatcherSpec
    ) -> CheckResult | RunOutcome:
        if self.kernel is None:
            return CheckResult(False, error="no kernel executor is configured on this server")
        code = CodeAction(kernel_check_code(spec.tool, spec.params))
        collected = CollectingSink()
        outcome = await self.kernel.execute(job.evolve(action=code), run, collected)
        if outcome.skipped_reason is not None:
            return outcome
        return result_from_output(collected.text, outcome)

    async def _state(self, job_id: str) -> WatchState:
        state = self._states.get(job_id)
        if state is None:
            record: WatcherRecord | None = await self._in_store(
                partial(self.store.get_watcher, job_id)
            )
            state = WatchState.from_dict(record.state) if record is not None else WatchState()
        return state

    async def _notify(
        self, job: Job, run: Run, spec: WatcherSpec, decision: Decision, result: CheckResult
    ) -> str:
        title, message = notification_text(spec.info(job.id), spec.escalation, decision, result)
        notification = Notification(
            id=new_id(),
            owner=job.owner,
            message=message,
            created_at=self.clock.now(),
            channel=spec.output_channel or "session",
            title=title,
            priority="normal" if result.success else "high",
            tags=("watcher", decision.reason),
            structured_data={
                "watcher_id": job.id,
                "tool": spec.tool,
                "label": spec.label,
                "check": decision.state.checks,
                "reason": decision.reason,
                "strategy": spec.escalation.notify_when.value,
                "result": result.to_json() if not decision.batch else None,
                "batch": list(decision.batch),
            },
            output_config=spec.output_config,
            session=job.session,
            source={"kind": "watcher", "job_id": job.id, "run_id": run.id},
        )
        try:
            delivery = await self.notifications.send(notification)
        except Exception as error:
            log.exception("watcher %s: notification failed", job.id)
            return f"; notification failed: {error}"
        return f"; {describe_delivery(delivery)}"

    # --- persistence ------------------------------------------------------------------------------

    def _record(self, job: Job, run: Run, decision: Decision, result: CheckResult) -> None:
        check = CheckRecord(
            check=decision.state.checks,
            checked_at=self.clock.now(),
            success=result.success,
            result=result.to_json(),
            notified=decision.notify,
            reason=decision.reason,
            run_id=run.id,
        )
        self._pending.append((job.id, job.owner, decision.state.to_dict(), check))
        if self._flush_task is None or self._flush_task.done():
            self._flush_task = asyncio.get_running_loop().create_task(self._flush_later())

    async def _flush_later(self) -> None:
        await anyio.sleep(FLUSH_INTERVAL)
        await self.flush()

    async def flush(self) -> None:
        """Write the checks made since the last write, in one transaction."""
        async with self._flush_lock:
            pending, self._pending = self._pending, []
            if not pending:
                return
            try:
                await self._in_store(partial(self.store.record_checks, pending))
            except Exception:
                # The job may have been deleted meanwhile (its rows are refused): keep the rest.
                log.exception("could not save %d watcher checks", len(pending))

    async def register(self, job: Job) -> None:
        now = self.clock.now()
        await self._in_store(partial(self.store.create_watcher, job.id, job.owner, {}, now=now))

    def forget(self, job_id: str) -> None:
        self._states.pop(job_id, None)
        self._specs.pop(job_id, None)
        self._locks.pop(job_id, None)
        self._pending = [p for p in self._pending if p[0] != job_id]

    async def records(self, job_ids: list[str]) -> dict[str, WatcherRecord]:
        await self.flush()
        found: dict[str, WatcherRecord] = await self._in_store(
            partial(self.store.get_watchers, job_ids)
        )
        return found

    async def history(self, job_id: str, last_n: int) -> list[CheckRecord]:
        await self.flush()
        found: list[CheckRecord] = await self._in_store(
            partial(self.store.watcher_history, job_id, last_n)
        )
        return found

    async def aclose(self) -> None:
        task = self._flush_task
        if task is not None and not task.done():
            task.cancel()
        with anyio.CancelScope(shield=True):
            await self.flush()


class WatcherExecutor:
    """Takes the runs of watchers; every other run goes to ``inner``.

    ``kernel_checks``: in a process that hosts no notebook's kernel (the standalone scheduler),
    where a check that runs in a notebook's kernel goes whole, to be handed to the server that
    hosts that kernel, which checks, decides and notifies as for its own watchers.
    """

    def __init__(
        self, inner: Executor, runtime: WatcherRuntime, *, kernel_checks: Executor | None = None
    ) -> None:
        self.inner = inner
        self.runtime = runtime
        self.kernel_checks = kernel_checks

    def concurrency_key(self, job: Job) -> str:
        if job.kind is JobKind.WATCHER and job.target.type != "kernel":
            # Checks of different watchers do not wait for each other (the global bound holds).
            return f"watcher:{job.id}"
        return self.inner.concurrency_key(job)

    async def execute(self, job: Job, run: Run, output: OutputSink) -> RunOutcome:
        if job.kind is not JobKind.WATCHER:
            return await self.inner.execute(job, run, output)
        if self.kernel_checks is not None and job.target.type == "kernel":
            return await self.kernel_checks.execute(job, run, output)
        return await self.runtime.check(job, run, output)

    async def aclose(self) -> None:
        await self.runtime.aclose()
        closer = getattr(self.inner, "aclose", None)
        if closer is not None:
            await closer()
