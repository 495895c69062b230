"""The jupyter_server extension: typed config, start-up and shutdown of the scheduler."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, MutableMapping
from pathlib import Path
from typing import Any, cast

from jupyter_core.paths import jupyter_data_dir
from jupyter_core.utils import ensure_async
from jupyter_server.extension.application import ExtensionApp
from jupyter_server.gateway.gateway_client import GatewayClient
from traitlets import (
    Bool,
    Bunch,
    Dict,
    Float,
    Integer,
    List,
    TraitError,
    Unicode,
    Union,
    default,
    validate,
)

from jupyter_recall.core.clock import SystemClock
from jupyter_recall.core.errors import StoreError, ValidationError
from jupyter_recall.engine import process
from jupyter_recall.engine.channels.settings import ChannelSettingsJSON
from jupyter_recall.engine.executing import ClaimingScheduler, ExecutingScheduler
from jupyter_recall.engine.process import ProcessSettings
from jupyter_recall.server.approvals import ApprovalInbox
from jupyter_recall.server.authorization import AuthorizedExecutor, JobAuthorization
from jupyter_recall.server.claims import take_awaiting_runs
from jupyter_recall.server.engine_name import server_engine_id
from jupyter_recall.server.executors.fresh import FreshKernels
from jupyter_recall.server.executors.kernel_journal import KernelJournal
from jupyter_recall.server.executors.kernel_pool import KernelPool
from jupyter_recall.server.executors.launcher import ManagedKernelLauncher
from jupyter_recall.server.executors.notebook import ExecutedCopies
from jupyter_recall.server.handlers import route_table
from jupyter_recall.server.kernel_checks import KernelSpecNames, SpecReader
from jupyter_recall.server.kernels import KernelExecutors
from jupyter_recall.server.localzone import local_zone_name
from jupyter_recall.server.notifications import (
    NotificationActionExecutor,
    NotificationService,
)
from jupyter_recall.server.option_checks import (
    checked_channels,
    checked_count,
    checked_db_url,
    checked_retention,
    checked_timeout,
    checked_timezone,
    checked_tool_policies,
)
from jupyter_recall.server.owners import names_users, owner_resolver
from jupyter_recall.server.pause_notices import PauseNotices
from jupyter_recall.server.sessions import SessionWatcher
from jupyter_recall.server.sse import EventHub
from jupyter_recall.server.watcher_runtime import WatcherExecutor, WatcherRuntime
from jupyter_recall.server.watchers import WatcherService
from jupyter_recall.server.wiring import make_server_executor, make_tool_runner
from jupyter_recall.store.base import Store
from jupyter_recall.store.urls import open_store, sqlite_url

LOG_HANDLER = "jupyter_recall server format"
REOPEN_EVERY = 5.0
STOP_STEP_TIMEOUT = 20.0
"""How long one step of stopping may take before it is given up on (and logged)."""
"""Seconds between attempts to open a store that could not be opened at start."""
MAX_POOL_SIZE = 32


def _task_stacks() -> str:
    """Where each task of the event loop waits, one line a task, for a log. A suspended
    task's own stack is its outermost coroutine only: the awaits below it are followed."""
    return "\n".join(
        f"  {task.get_name()}: " + " -> ".join(_awaits(task.get_coro()))
        for task in asyncio.all_tasks()
    )


def _awaits(awaitable: object) -> list[str]:
    places = []
    while awaitable is not None:
        frame = getattr(awaitable, "cr_frame", None) or getattr(awaitable, "gi_frame", None)
        if frame is not None:
            places.append(
                f"{frame.f_code.co_qualname} ({frame.f_code.co_filename}:{frame.f_lineno})"
            )
        awaitable = getattr(awaitable, "cr_await", None) or getattr(awaitable, "gi_yieldfrom", None)
    return places


def _unopened(error: StoreError) -> str:
    return f"cannot open the store, trying again every {REOPEN_EVERY:g} s: {error}"


class RecallApp(ExtensionApp):
    """Persist jobs, run the scheduler tick, and serve /api/recall/."""

    _loaded = False
    """Whether ``initialize_settings`` ran on an accepted configuration (jupyter_server still
    starts and stops an extension whose configuration it refused)."""
    _assembled = False
    """Whether the store opened and the scheduler and services exist."""
    _refused: str | None = None
    """Why jupyter_server refused this extension's configuration when it linked it, if it did:
    it loads the extension all the same, on a configuration read in part."""
    name = "jupyter_recall"
    load_other_extensions = True

    db_path = Unicode(
        "",
        config=True,
        help="SQLite file of jobs and runs (default: <jupyter data dir>/jupyter_recall.sqlite).",
    )
    db_url = Unicode(
        "",
        config=True,
        help="The store of jobs and runs as a URL: sqlite:///absolute/path, sqlite:///:memory: "
        "or postgresql://user:password@host:port/database (the postgres extra) "
        "(default: the SQLite file db_path; when both are set, db_url wins).",
    )
    default_timezone = Unicode(
        "",
        config=True,
        help="IANA zone or ±HH:MM offset for schedules that name none "
        "(default: the server's local zone).",
    )
    max_concurrent_runs = Integer(16, config=True, help="Runs executing at once, server-wide.")
    per_kernel_limit = Integer(
        2,
        config=True,
        help="Runs executing at once per target: in one live kernel, in fresh kernels "
        "all together, on the server all together.",
    )
    output_limit = Integer(
        100_000, config=True, help="Characters of output kept per run (the head, then a marker)."
    )
    sse_heartbeat = Float(15.0, config=True, help="Seconds between SSE heartbeat comments.")
    approval_timeout = Float(
        300.0,
        config=True,
        help="Seconds a server-side tool job under an approve policy waits for a decision in "
        "the approvals inbox before it fails (denied as expired).",
    )
    default_timeout = Float(
        None,
        allow_none=True,
        config=True,
        help="Seconds a run may execute before it is stopped as timed_out, for jobs whose "
        "policies set no timeout (default: no limit).",
    )
    keep_runs = Integer(
        None,
        allow_none=True,
        config=True,
        help="Runs kept per job (the newest), for jobs whose policies set no keep_runs; older "
        "ones are pruned in the background (default: all are kept).",
    )
    keep_runs_for = Union(
        [Float(), Unicode()],
        default_value=None,
        allow_none=True,
        config=True,
        help="How long runs are kept after they end, for jobs whose policies set no "
        "keep_runs_for: seconds, or a duration such as '7d', '12h' (default: forever).",
    )
    prune_interval = Float(
        60.0, config=True, help="Seconds between two background sweeps of runs to prune."
    )
    max_sleep = Float(
        30.0, config=True, help="Longest the scheduler sleeps before re-reading the wall clock."
    )
    fire_ahead = Float(
        0.25,
        config=True,
        help="Seconds before their instant that due jobs are fired (recorded) by the scheduler, "
        "to execute at the instant: a burst of jobs then starts on time. 0 records each run "
        "at its instant.",
    )
    fire_owner = Unicode(
        "",
        config=True,
        help="Fire only the jobs of this user (default: every user's). Set it to the server's "
        "user when several users' servers share one store (JupyterHub on one PostgreSQL "
        "database), so that no server runs another user's jobs.",
    )
    run_scheduler = Bool(
        True,
        config=True,
        help="Fire due jobs in this server. False when a standalone scheduler (jupyter recall "
        "scheduler) fires them on the same store: the server then fires nothing, serves REST, "
        "events and the UI, and executes the runs triggered through it (docs/deploy.md).",
    )
    live_kernel_grace = Float(
        30.0,
        config=True,
        help="Seconds after its due instant that a live-kernel run fired by another engine (a "
        "standalone scheduler) may be taken by the server hosting its kernel; after that the "
        "firing engine applies the job's on_missing_kernel policy. Give the scheduler the same "
        "RecallScheduler.live_kernel_grace.",
    )
    claim_interval = Float(
        1.0,
        config=True,
        help="Seconds between looks for live-kernel runs fired elsewhere that wait for a server "
        "hosting their kernel (docs/deploy.md).",
    )
    gil_switch_interval = Float(
        0.001,
        config=True,
        help="Seconds the interpreter lets a thread hold the GIL while another waits "
        "(sys.setswitchinterval), set at start: the scheduler's store thread then holds up a "
        "due run at most this long. 0 keeps Python's (0.005).",
    )
    freeze_gc_at_start = Bool(
        True,
        config=True,
        help="Freeze the objects the server holds once started (gc.freeze), so that full "
        "garbage collections skip them: about 0.1 s less pause per full collection.",
    )
    notification_channels = Dict(
        config=True,
        help="Named notification channels: {name: {type: log|webhook|email|session|ui, ...}}.",
    )
    tool_policies = Dict(
        config=True, help="Policy per tool module or module.action: auto, approve or block."
    )

    scope_by_user = Bool(
        None,
        allow_none=True,
        config=True,
        help="Scope rows by jupyter_server user name. Default (None): yes when the identity "
        "provider names users (JupyterHub, custom providers), no with the stock shared token, "
        "where every caller is the server's OS user.",
    )

    kernel_pool = Dict(
        key_trait=Unicode(),
        value_trait=Integer(),
        config=True,
        help="Warm kernels kept started per kernel spec for headless runs and notebooks, "
        "{kernel spec name: how many}, e.g. {'python3': 2}; each serves one run, then a "
        "replacement starts. Python kernel specs only. Default {}: every run starts its kernel.",
    )

    disabled_owners = List(
        Unicode(),
        config=True,
        help="Owners of declared jobs (PUT /api/recall/owners/{owner}/jobs, entry points) "
        "switched off at start for the server's user; nothing of theirs fires.",
    )

    @default("db_path")
    def _default_db_path(self) -> str:
        return str(Path(jupyter_data_dir()) / "jupyter_recall.sqlite")

    @default("db_url")
    def _default_db_url(self) -> str:
        return sqlite_url(self.db_path)

    @validate("db_url")
    def _check_db_url(self, proposal: Bunch) -> str:
        return checked_db_url("RecallApp", proposal["value"])

    @default("default_timezone")
    def _default_timezone(self) -> str:
        return local_zone_name()

    @validate("default_timezone")
    def _check_timezone(self, proposal: Bunch) -> str:
        return checked_timezone("RecallApp", proposal["value"])

    @validate("max_concurrent_runs", "per_kernel_limit", "output_limit")
    def _check_positive(self, proposal: Bunch) -> int:
        return checked_count("RecallApp", proposal["trait"].name, proposal["value"])

    @validate(
        "sse_heartbeat",
        "max_sleep",
        "live_kernel_grace",
        "claim_interval",
        "prune_interval",
        "approval_timeout",
    )
    def _check_seconds(self, proposal: Bunch) -> float:
        value = float(proposal["value"])
        if value <= 0:
            raise TraitError(f"RecallApp.{proposal['trait'].name} must be > 0, got {value}")
        return value

    @validate("keep_runs", "keep_runs_for")
    def _check_retention(self, proposal: Bunch) -> float | None:
        return checked_retention("RecallApp", proposal["trait"].name, proposal["value"])

    @validate("default_timeout")
    def _check_default_timeout(self, proposal: Bunch) -> float | None:
        return checked_timeout("RecallApp", proposal["value"])

    @validate("fire_ahead")
    def _check_fire_ahead(self, proposal: Bunch) -> float:
        value = float(proposal["value"])
        if value < 0:
            raise TraitError(f"RecallApp.fire_ahead must be >= 0 seconds, got {value}")
        return value

    @validate("gil_switch_interval")
    def _check_switch_interval(self, proposal: Bunch) -> float:
        try:
            return ProcessSettings(switch_interval=float(proposal["value"])).switch_interval
        except ValidationError as error:
            raise TraitError(f"RecallApp.gil_switch_interval: {error}") from None

    @validate("kernel_pool")
    def _check_kernel_pool(self, proposal: Bunch) -> dict[str, int]:
        sizes = dict(proposal["value"])
        for name, size in sizes.items():
            if not name:
                raise TraitError("RecallApp.kernel_pool: a kernel spec name is empty")
            if not 0 <= size <= MAX_POOL_SIZE:
                raise TraitError(
                    f"RecallApp.kernel_pool[{name!r}] must be 0..{MAX_POOL_SIZE} kernels, "
                    f"got {size}"
                )
        return sizes

    @validate("notification_channels")
    def _check_channels(self, proposal: Bunch) -> dict[str, ChannelSettingsJSON]:
        return checked_channels("RecallApp", proposal["value"])

    @validate("tool_policies")
    def _check_policies(self, proposal: Bunch) -> dict[str, str]:
        return checked_tool_policies("RecallApp", proposal["value"])

    def _link_jupyter_server_extension(self, serverapp: Any) -> None:
        try:
            super()._link_jupyter_server_extension(serverapp)
        except TraitError as error:
            self._refused = str(error)
            raise

    def initialize_settings(self) -> None:
        self._log_like_the_server()
        self._ready = asyncio.Event()
        self.failure: str | None = None
        """Why the API answers 503: the configuration refused, the store not open yet, or the
        scheduler stopped by itself."""
        self.settings.update(
            jupyter_recall_ready=self._ready, jupyter_recall_failure=lambda: self.failure
        )
        if self._refused is not None:
            # jupyter_server logged the refusal and loads us anyway: nothing starts, and the
            # API (the sidebar, the kernels' clients) says why instead of a bare 404.
            self.failure = f"its configuration was refused: {self._refused}"
            self.log.error("jupyter_recall: not started: %s", self.failure)
            self._ready.set()
            return
        self._clock = SystemClock()
        self._engine_name: str | None = None
        self._engine_id()
        self._stopped = asyncio.Event()
        self._runner: asyncio.Task[None] | None = None
        self._loaded = True
        try:
            store = open_store(self.db_url)
        except StoreError as error:
            # A database down for a moment must not leave this server without jupyter_recall
            # for its whole life: the API answers 503 with the reason until the store opens.
            self.failure = _unopened(error)
            self.log.error("jupyter_recall: %s", self.failure)
            self._ready.set()
            return
        self._assemble(store, self.settings)

    def _log_like_the_server(self) -> None:
        """The package's own loggers (``jupyter_recall.engine``, ``...store.postgres``) print
        in the server's format (``[W 12:00:00.000 jupyter_recall.engine] ...``): with no
        handler on the way, Python printed their bare text. One handler, replaced by the
        next server of the process (tests start many)."""
        formatter = next((h.formatter for h in self.log.handlers if h.formatter), None)
        if formatter is None:
            return
        handler = logging.StreamHandler()
        handler.name = LOG_HANDLER
        handler.setFormatter(formatter)
        package = logging.getLogger("jupyter_recall")
        package.handlers = [h for h in package.handlers if h.name != LOG_HANDLER] + [handler]

    def _assemble(self, store: Store, settings: MutableMapping[str, object]) -> None:
        """Build the scheduler and the services on an open store, into ``settings``."""
        self._store = store
        self._events = EventHub(getattr(self.serverapp, "event_logger", None))
        self.authorization = JobAuthorization()
        self.tool_runner = make_tool_runner(self.serverapp, self)
        self.approvals = ApprovalInbox(self._store, self._events, self._clock)
        self.notifications = NotificationService(
            self._store, self._events, self._clock, self.notification_channels
        )
        engine = ClaimingScheduler if self.run_scheduler else ExecutingScheduler
        self.scheduler = engine(
            self._store,
            self._make_executor(),
            clock=self._clock,
            default_tz=self.default_timezone,
            max_concurrent_runs=self.max_concurrent_runs,
            per_target_limit=self.per_kernel_limit,
            output_limit=self.output_limit,
            max_sleep=self.max_sleep,
            fire_ahead=self.fire_ahead,
            fire_owner=self.fire_owner or None,
            engine_id=self._engine_id(),
            default_timeout=self.default_timeout,
            keep_runs=self.keep_runs,
            keep_runs_for=self.keep_runs_for,
            prune_interval=self.prune_interval,
        )
        self._events.attach(self.scheduler)
        self.notifications.attach(self.scheduler)
        self.approvals.attach(self.scheduler)
        self._pause_notices = PauseNotices(self.notifications)
        self._pause_notices.attach(self.scheduler)
        self._executed_copies = ExecutedCopies(self._kernels.managers)
        self.scheduler.on_runs_deleted(self._executed_copies.runs_deleted)
        self.watchers = WatcherService(self.scheduler, self._watcher_runtime)
        self._session_watcher = self._make_session_watcher()
        settings.update(
            jupyter_recall_scheduler=self.scheduler,
            jupyter_recall_events=self._events,
            jupyter_recall_clock=self._clock,
            jupyter_recall_default_tz=self.default_timezone,
            jupyter_recall_heartbeat=self.sse_heartbeat,
            jupyter_recall_owner=owner_resolver(self._scoped_by_user()),
            jupyter_recall_tools=self.tool_runner,
            jupyter_recall_kernel_specs=KernelSpecNames(self._kernel_spec_reader()),
            jupyter_recall_approvals=self.approvals,
            jupyter_recall_tool_policies=self.tool_policies,
            jupyter_recall_notifications=self.notifications,
            jupyter_recall_take_notifications=self.notifications.take,
            jupyter_recall_watchers=self.watchers,
            jupyter_recall_authorization=self.authorization,
        )
        self._assembled = True
        self.log.info(
            "jupyter_recall: jobs in %r, default zone %s", self._store, self.default_timezone
        )

    def _make_session_watcher(self) -> SessionWatcher | None:
        event_logger = getattr(self.serverapp, "event_logger", None)
        if event_logger is None:
            return None
        return SessionWatcher(self.scheduler, self.serverapp, event_logger, self.approvals)

    def _engine_id(self) -> str:
        # Read once, before jupyter_server binds its port (engine_name.py says why).
        if self._engine_name is None:
            self._engine_name = server_engine_id(self.serverapp)
        return self._engine_name

    def _scoped_by_user(self) -> bool:
        if self.scope_by_user is not None:
            return bool(self.scope_by_user)
        return names_users(getattr(self.serverapp, "identity_provider", None))

    def _kernel_spec_reader(self) -> SpecReader:
        serverapp: Any = self.serverapp
        return cast(SpecReader, serverapp.kernel_spec_manager.get_all_specs)

    def _make_fresh_kernels(self) -> FreshKernels:
        serverapp: Any = self.serverapp
        journal = KernelJournal.for_engine(
            serverapp.runtime_dir, self._engine_id(), GatewayClient.instance().url or ""
        )
        launcher = ManagedKernelLauncher(
            serverapp.kernel_manager, serverapp.kernel_spec_manager, journal=journal
        )
        pool = None
        if any(self.kernel_pool.values()):
            pool = KernelPool(launcher, self.kernel_pool, cwd=str(serverapp.root_dir))
        return FreshKernels(launcher, pool)

    def _make_executor(self) -> AuthorizedExecutor:
        self.fresh_kernels = self._make_fresh_kernels()
        kernels: KernelExecutors = make_server_executor(self.serverapp, self)
        self._kernels = kernels
        self._watcher_runtime = WatcherRuntime(
            self._store,
            self.notifications,
            self._clock,
            tools=self.tool_runner,
            kernel=kernels.live,
        )
        # Permissions first (watchers' checks too); then watchers' checks and notification
        # actions; the rest by target.
        inner = NotificationActionExecutor(kernels, self.notifications)
        self._executor = AuthorizedExecutor(
            WatcherExecutor(inner, self._watcher_runtime), self.authorization, self.serverapp
        )
        return self._executor

    def initialize_handlers(self) -> None:
        from jupyter_recall.mcp.http import McpEndpoint, mcp_routes

        # Before route_table(), whose last route answers every other /api/recall/ path.
        self.mcp = McpEndpoint()
        self.handlers.extend(mcp_routes(self.mcp))
        self.handlers.extend(route_table())

    async def _start_jupyter_server_extension(self, serverapp: Any) -> None:
        # Every extension is loaded by now: what the process holds will live as long as it.
        process.apply(ProcessSettings(self.gil_switch_interval, self.freeze_gc_at_start))
        if not self._loaded:
            return  # not loaded (a bad config, which jupyter_server logged): nothing to start
        if not self._assembled:
            self._runner = asyncio.create_task(self._reopen_then_run())
            return
        await self._start_scheduler()

    async def _reopen_then_run(self) -> None:
        """Open the store that could not be opened at start, every ``REOPEN_EVERY`` seconds
        until it opens (or the server stops), then start as at start."""
        while True:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stopped.wait(), REOPEN_EVERY)
            if self._stopped.is_set():
                return
            try:
                store = await asyncio.to_thread(open_store, self.db_url)
            except StoreError as error:
                self.failure = _unopened(error)
                continue
            serverapp: Any = self.serverapp
            self._assemble(store, serverapp.web_app.settings)
            self.log.warning("jupyter_recall: the store is open now: %r", store)
            await self._run_scheduler(asyncio.Event())
            return

    async def _start_scheduler(self) -> None:
        started = asyncio.Event()
        self._runner = asyncio.create_task(self._run_scheduler(started))
        waiting = asyncio.ensure_future(started.wait())
        # A scheduler that fails to start ends its task instead of setting ``started``.
        await asyncio.wait({waiting, self._runner}, return_when=asyncio.FIRST_COMPLETED)
        waiting.cancel()

    async def _run_scheduler(self, started: asyncio.Event) -> None:
        try:
            await self.fresh_kernels.start()
            async with self.scheduler:
                started.set()
                await self._declare_owned_jobs()
                self.failure = None  # the store's, when it opened late
                self._ready.set()
                if self._session_watcher is not None:
                    self._session_watcher.start()
                await take_awaiting_runs(
                    self.scheduler,
                    self._kernels.live.hosts,
                    grace=self.live_kernel_grace,
                    interval=self.claim_interval,
                    stopped=self._stopped,
                    log=self.log,
                )
        except Exception as error:
            # The server goes on (other extensions, notebooks); our handlers answer 503 naming
            # this instead of waiting for a scheduler that will not come.
            self.failure = f"the scheduler stopped: {type(error).__name__}: {error}"
            self.log.exception("jupyter_recall: %s", self.failure)
            self._ready.set()

    async def _declare_owned_jobs(self) -> None:
        from jupyter_recall.server.owners_api import declare_installed_jobs, disable_configured

        # At start there is no caller: declared jobs belong to the server's user.
        owner = owner_resolver(False)(None)
        await disable_configured(self.scheduler, self.disabled_owners, owner=owner)
        await declare_installed_jobs(self.scheduler, owner=owner)

    async def stop_extension(self) -> None:
        """Stop firing; runs in flight end as ``interrupted``; nothing is left running.

        Never raises: jupyter_server stops its event loop only after every extension has
        stopped, so an exception here would leave the process running after SIGTERM. A step
        that fails is logged, and the following ones still run; one that hangs is given up
        on after ``STOP_STEP_TIMEOUT``. The log says when it is over: a server that does not
        exit after it is held by something else."""
        await self._run_steps([self._stop_mcp, self._stop_scheduler])
        # Not loaded, or the store never opened: nothing else was made.
        if self._assembled:
            await self._run_steps(
                [
                    self._executor.aclose,
                    self.fresh_kernels.aclose,
                    self.notifications.aclose,
                    self._pause_notices.aclose,
                    self._executed_copies.aclose,
                    self.tool_runner.close,
                    self.approvals.aclose,
                    self._store.close,
                ]
            )
        self.log.info("jupyter_recall: stopped")

    async def _run_steps(self, steps: list[Callable[[], object]]) -> None:
        for step in steps:
            try:
                await self._within_bound(step)
            except Exception:
                self.log.exception("jupyter_recall: %s failed while stopping", step.__qualname__)

    async def _within_bound(self, step: Callable[[], object]) -> None:
        """Run ``step``; one that has not ended after ``STOP_STEP_TIMEOUT`` is cancelled, so
        that SIGTERM still stops the server, and logged with where every task waits then."""
        task = asyncio.ensure_future(ensure_async(step()))
        done, _ = await asyncio.wait({task}, timeout=STOP_STEP_TIMEOUT)
        if done:
            task.result()
            return
        self.log.error(
            "jupyter_recall: %s did not end in %s s while stopping; going on. Tasks:\n%s",
            step.__qualname__,
            STOP_STEP_TIMEOUT,
            _task_stacks(),
        )
        task.cancel()

    async def _stop_mcp(self) -> None:
        if hasattr(self, "mcp"):
            await self.mcp.aclose()

    async def _stop_scheduler(self) -> None:
        if not self._loaded:
            return
        if self._assembled:
            if self._session_watcher is not None:
                await self._session_watcher.aclose()
            self._events.close_all()
        self._stopped.set()
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner
