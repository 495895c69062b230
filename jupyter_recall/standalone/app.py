"""``jupyter recall scheduler``: fires every job and executes every run, with no Jupyter server.

Servers sharing its store with ``RecallApp.run_scheduler = False`` then fire nothing; they serve
REST, events and the UI. Configured like the server, from the same config files
(``jupyter_server_config.py``/``.json``), as ``RecallScheduler.<option>``. See docs/deploy.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
import sys
from datetime import datetime, timedelta
from functools import partial
from typing import Any, NoReturn

from jupyter_core.application import JupyterApp, base_aliases, base_flags
from jupyter_core.utils import ensure_async
from traitlets import (
    Bunch,
    Dict,
    Enum,
    Float,
    HasTraits,
    Integer,
    TraitError,
    Unicode,
    Union,
    default,
    validate,
)
from traitlets.config import Config

from jupyter_recall._version import __version__
from jupyter_recall.command_line import EXIT_USAGE, StrictConfig
from jupyter_recall.core.clock import SystemClock
from jupyter_recall.core.errors import StoreError, UsageError, ValidationError
from jupyter_recall.engine.channels.settings import ChannelSettingsJSON
from jupyter_recall.engine.scheduler import Scheduler
from jupyter_recall.server.executors.notebook import ExecutedCopies
from jupyter_recall.server.localzone import local_zone_name
from jupyter_recall.server.option_checks import (
    checked_channels,
    checked_count,
    checked_db_url,
    checked_retention,
    checked_timeout,
    checked_timezone,
    checked_tool_policies,
)
from jupyter_recall.server.pause_notices import PauseNotices
from jupyter_recall.standalone.executor import build_executor
from jupyter_recall.standalone.managers import standalone_managers
from jupyter_recall.store.base import Store
from jupyter_recall.store.urls import MEMORY, SQLITE, open_store, sqlite_path, store_kind

APP = "RecallScheduler"
COMMAND = "jupyter recall scheduler"
EXIT_UNREACHABLE = 3
"""The exit status of a store that cannot be opened (the CLI's for a server it cannot reach)."""
LEASE_SECONDS = 30.0
"""The engine's lease: renewed every third of it; a crashed scheduler's runs are interrupted
by the others once it is over, and by a restart under the same engine id at once."""
RENEWAL_MARGIN = 3.0
"""Seconds a live holder's renewal may come late (its store busy) and still count."""

ALIASES = {
    **base_aliases,
    "db-url": "RecallScheduler.db_url",
    "root": "RecallScheduler.root_dir",
    "gateway-url": "RecallScheduler.gateway_url",
    "engine-id": "RecallScheduler.engine_id",
    "fire-owner": "RecallScheduler.fire_owner",
}

FLAGS = {name: flag for name, flag in base_flags.items() if name != "generate-config"}
"""jupyter_core's flags but ``--generate-config``: it would write the server's config file
(this one reads ``jupyter_server_config``), and jupyter_core, which skips the config files for
it, then ran the scheduler on none of their settings."""

SHARED_WITH_SERVERS = (
    "tool_policies",
    "notification_channels",
    "approval_timeout",
    "default_timezone",
    "default_timeout",
    "keep_runs",
    "keep_runs_for",
    "live_kernel_grace",
)
"""The settings a scheduler takes from ``RecallApp``'s section of a shared config file when
its own section does not set them: how jobs run, whichever process fires them."""

LOG_LEVELS = ("DEBUG", "INFO", "WARN", "ERROR", "CRITICAL", 0, 10, 20, 30, 40, 50)
"""``Application.log_level``'s values."""


class LogLevelEnum(Enum[Any]):
    """``Application.log_level``, a bad value refused with a ValidationError naming
    ``--log-level`` (``RecallScheduler.initialize`` makes it one line, exit status 2): traitlets
    answers its TraitError at start with "Bad config", a message naming the trait, status 1.
    ("Enum" in its name: traitlets' help lists the choices of such traits.)"""

    def from_string(self, s: str) -> Any:
        # Enum's probes its validation (which would refuse) before reading a number.
        return int(s) if s.isdigit() else s

    def error(
        self,
        obj: HasTraits | None,
        value: Any,
        error: Exception | None = None,
        info: str | None = None,
    ) -> NoReturn:
        raise ValidationError(
            "--log-level", f"not a log level: {value!r}", accepted=map(str, LOG_LEVELS)
        )


class RecallScheduler(StrictConfig, JupyterApp):
    """The jupyter_recall engine in a process of its own."""

    name = "jupyter-recall-scheduler"
    description = (
        "Fire every jupyter_recall job and execute every run that needs no live kernel "
        "(fresh kernels, notebooks, tools, notifications), with no Jupyter server. Servers on "
        "the same store then run with RecallApp.run_scheduler = False. Stops on SIGTERM."
    )
    version = __version__
    aliases = ALIASES
    flags = FLAGS
    examples = """
jupyter recall scheduler --db-url sqlite:////home/me/.local/share/jupyter/jupyter_recall.sqlite
jupyter recall scheduler --db-url postgresql://recall@db/recall --root /srv/notebooks
"""

    db_url = Unicode(
        "",
        config=True,
        help="The store of jobs and runs, as RecallApp.db_url: sqlite:///absolute/path or "
        "postgresql://user:password@host:port/database. Required.",
    )
    root_dir = Unicode(
        "", config=True, help="Directory notebook paths and cwds are relative to (default: cwd)."
    )
    gateway_url = Unicode(
        "",
        config=True,
        help="A Jupyter Kernel/Enterprise Gateway: fresh kernels run there (as the server's "
        "--gateway-url).",
    )
    engine_id = Unicode(
        "",
        config=True,
        help="This engine's lease name; the same across restarts, so a restarted scheduler "
        "interrupts its predecessor's runs at once (default: scheduler@<host name>).",
    )
    default_timezone = Unicode(
        "", config=True, help="As RecallApp.default_timezone (default: the local zone)."
    )
    max_concurrent_runs = Integer(16, config=True, help="Runs executing at once.")
    per_kernel_limit = Integer(
        2,
        config=True,
        help="Runs executing at once per target: in one live kernel, in fresh kernels "
        "all together, on the server all together.",
    )
    output_limit = Integer(100_000, config=True, help="Characters of output kept per run.")
    max_sleep = Float(
        1.0,
        config=True,
        help="Longest the scheduler sleeps between looks at the store. On SQLite a job created "
        "or changed by a server is noticed within this (SQLite has no notifications); on "
        "PostgreSQL LISTEN/NOTIFY wakes it at once and this only bounds clock jumps.",
    )
    fire_ahead = Float(0.25, config=True, help="As RecallApp.fire_ahead.")
    fire_owner = Unicode(
        "",
        config=True,
        help="Fire only the jobs of this user (default: every user's). One scheduler per user "
        "(each under that user's account, with that user's --root) must each name its user: "
        "otherwise each fires every user's jobs as its own account.",
    )
    default_timeout = Float(
        None, allow_none=True, config=True, help="As RecallApp.default_timeout."
    )
    keep_runs = Integer(None, allow_none=True, config=True, help="As RecallApp.keep_runs.")
    keep_runs_for = Union(
        [Float(), Unicode()],
        default_value=None,
        allow_none=True,
        config=True,
        help="As RecallApp.keep_runs_for.",
    )
    prune_interval = Float(60.0, config=True, help="As RecallApp.prune_interval.")
    live_kernel_grace = Float(
        30.0,
        config=True,
        help="Seconds a live-kernel run waits after its due instant for a server hosting its "
        "kernel to take it, before its job's on_missing_kernel policy (fail, skip, start) "
        "applies (this process hosts no user's kernel). Give servers the same "
        "RecallApp.live_kernel_grace.",
    )
    approval_timeout = Float(300.0, config=True, help="As RecallApp.approval_timeout.")
    notification_channels = Dict(config=True, help="As RecallApp.notification_channels.")
    tool_policies = Dict(config=True, help="As RecallApp.tool_policies.")
    log_level = LogLevelEnum(
        LOG_LEVELS, default_value=logging.WARN, help="Set the log level by value or name."
    ).tag(config=True)

    @default("engine_id")
    def _default_engine_id(self) -> str:
        return f"scheduler@{socket.gethostname()}"

    @validate("engine_id")
    def _check_engine_id(self, proposal: Bunch) -> str:
        value = str(proposal["value"])
        if not value.strip():
            # An unset shell variable (--engine-id=$ID): every such scheduler would share ''.
            raise TraitError(f"{APP}.engine_id must name this scheduler, got {value!r}")
        return value

    @default("default_timezone")
    def _default_timezone(self) -> str:
        return local_zone_name()

    @validate("db_url")
    def _check_db_url(self, proposal: Bunch) -> str:
        url = checked_db_url(APP, proposal["value"])
        if store_kind(url) is SQLITE and sqlite_path(url) == MEMORY:
            # A store of its own that no server sees: it would fire nothing, forever.
            raise TraitError(
                f"{APP}.db_url: {url!r} is a private, empty store no server shares; give the "
                "servers' store: sqlite:///absolute/path or postgresql://..."
            )
        return url

    @validate("default_timezone")
    def _check_timezone(self, proposal: Bunch) -> str:
        return checked_timezone(APP, proposal["value"])

    @validate("max_sleep", "live_kernel_grace", "fire_ahead", "prune_interval", "approval_timeout")
    def _check_seconds(self, proposal: Bunch) -> float:
        value = float(proposal["value"])
        above_zero = ("max_sleep", "prune_interval", "approval_timeout")
        if value < 0 or (value == 0 and proposal["trait"].name in above_zero):
            raise TraitError(
                f"{APP}.{proposal['trait'].name} must be a positive number of seconds, got {value}"
            )
        return value

    @validate("default_timeout")
    def _check_default_timeout(self, proposal: Bunch) -> float | None:
        return checked_timeout(APP, proposal["value"])

    @validate("keep_runs", "keep_runs_for")
    def _check_retention(self, proposal: Bunch) -> float | None:
        return checked_retention(APP, proposal["trait"].name, proposal["value"])

    @validate("max_concurrent_runs", "per_kernel_limit", "output_limit")
    def _check_positive(self, proposal: Bunch) -> int:
        return checked_count(APP, proposal["trait"].name, proposal["value"])

    @validate("notification_channels")
    def _check_channels(self, proposal: Bunch) -> dict[str, ChannelSettingsJSON]:
        return checked_channels(APP, proposal["value"])

    @validate("tool_policies")
    def _check_policies(self, proposal: Bunch) -> dict[str, str]:
        # Unchecked, a misspelt policy ("maybe") would let its tool run without approval.
        return checked_tool_policies(APP, proposal["value"])

    def _log_format_default(self) -> str:
        # As the Jupyter server logs.
        return "[%(levelname)1.1s %(asctime)s.%(msecs).03d %(name)s] %(message)s"

    def _config_file_name_default(self) -> str:
        # The server's own config files: one place for RecallApp and RecallScheduler options.
        return "jupyter_server_config"

    def command_label(self) -> str:
        return COMMAND

    def inherit_server_settings(self) -> None:
        """What the server's section sets of ``SHARED_WITH_SERVERS`` (``c.RecallApp.tool_policies``
        in the config file both read) and this one's does not: a job runs under one tool
        policy, channel set and retention, whichever process fires it."""
        server = self.config.get("RecallApp") or {}
        own = self.config.get("RecallScheduler") or {}
        inherited = {
            name: server[name] for name in SHARED_WITH_SERVERS if name in server and name not in own
        }
        if not inherited:
            return
        try:
            self.update_config(Config({"RecallScheduler": inherited}))
        except UsageError as error:
            raise UsageError(f"{error} (set as RecallApp's, which this one takes)") from None

    def check_command_line(self) -> None:
        """Arguments (it takes options only), then the ``--config`` file (``StrictConfig``);
        then the server's settings it shares (``inherit_server_settings``)."""
        self.inherit_server_settings()
        if self.extra_args:
            words = ", ".join(repr(word) for word in self.extra_args)
            raise ValidationError(
                "arguments",
                f"unexpected {words}: the scheduler takes options only, as --db-url=URL "
                "(--help lists them)",
            )
        super().check_command_line()
        if not self.db_url:
            raise ValidationError(
                "--db-url", "give the store: --db-url sqlite:///PATH or postgresql://..."
            )

    def start(self) -> None:
        # The engine's and the executors' loggers write where this application's log does.
        package_log = logging.getLogger("jupyter_recall")
        for handler in self.log.handlers:
            package_log.addHandler(handler)
        package_log.setLevel(self.log.level)
        code = asyncio.run(self._serve())
        if code:
            raise SystemExit(code)

    async def _take_lease(
        self, store: Store, clock: SystemClock, stop: asyncio.Event
    ) -> int | None:
        """None once this scheduler holds its engine id's lease, else its exit status.

        Two schedulers with one engine id would each take the other's running runs for a
        predecessor's and interrupt them (a retried job then runs twice): the lease is claimed
        in one statement, which one of two schedulers started at once wins (``claim_lease``).
        A lease still current may also be a crashed predecessor's, which a restart must take
        over at once rather than when it expires: its holder renews it every third of its
        length, so we wait for that renewal and take the lease over if it did not come, in one
        statement again (of two restarts, one takes it).
        """
        seen = await _claim(store, self.engine_id, clock, None)
        if seen is not None:
            await _wait_for_renewal(seen, self.engine_id, clock, stop, self.log)
            if stop.is_set():
                return 0
            held = await _claim(store, self.engine_id, clock, seen)
            if held is not None:
                self.refuse(
                    f"engine id {self.engine_id!r} is in use: a scheduler running on this store "
                    f"renews its lease (now until {held.isoformat(timespec='seconds')}); stop "
                    "that one, or give this one another --engine-id"
                )
                return EXIT_USAGE
        if stop.is_set():
            await asyncio.to_thread(store.release_lease, self.engine_id)
            return 0
        return None

    async def _serve(self) -> int:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        clock = SystemClock()
        try:
            # An explicit URL: a SQLite file's missing directory is a typo, not made.
            store = open_store(self.db_url, create_dirs=False)
        except StoreError as error:
            # A store that cannot be reached at start (a PostgreSQL server down, a wrong
            # password): one line, as the command line says a server it cannot reach.
            # The URL is not repeated: it may hold a password (the error names it without).
            self.refuse(f"cannot open the store: {' '.join(str(error).split())}")
            return EXIT_UNREACHABLE
        except ValidationError as error:
            # A URL this install cannot open (PostgreSQL without its extra): one line, as a
            # bad option; a service manager must not restart it in a loop on a traceback.
            self.refuse(f"RecallScheduler.{error}")
            return EXIT_USAGE
        try:
            refused = await self._take_lease(store, clock, stop)
        except BaseException:
            store.close()
            raise
        if refused is not None:
            store.close()
            return refused
        handoff_store = open_store(self.db_url, create_dirs=False)
        managers = standalone_managers(self, self.root_dir or ".", self.gateway_url)
        built = build_executor(self, (store, handoff_store), clock, managers)
        scheduler = Scheduler(
            store,
            built.executor,
            clock=clock,
            default_tz=self.default_timezone,
            engine_id=self.engine_id,
            lease_seconds=LEASE_SECONDS,
            max_concurrent_runs=self.max_concurrent_runs,
            per_target_limit=self.per_kernel_limit,
            output_limit=self.output_limit,
            max_sleep=self.max_sleep,
            fire_ahead=self.fire_ahead,
            fire_owner=self.fire_owner or None,
            default_timeout=self.default_timeout,
            keep_runs=self.keep_runs,
            keep_runs_for=self.keep_runs_for,
            prune_interval=self.prune_interval,
        )
        built.notifications.attach(scheduler)
        built.approvals.attach(scheduler)
        pause_notices = PauseNotices(built.notifications)
        pause_notices.attach(scheduler)
        executed_copies = ExecutedCopies(managers)
        scheduler.on_runs_deleted(executed_copies.runs_deleted)
        try:
            await built.fresh.start()
            async with scheduler:
                # At every log level: whoever started it sees it runs, and on which store.
                whose = f"{self.fire_owner}'s jobs" if self.fire_owner else "jobs"
                print(
                    f"{COMMAND}: running as engine {self.engine_id!r}, {whose} in {store!r} "
                    "(SIGTERM or Ctrl-C stops it)",
                    file=sys.stderr,
                    flush=True,
                )
                await stop.wait()
                self.log.info("stopping: runs in flight end interrupted")
        finally:
            await pause_notices.aclose()
            await executed_copies.aclose()
            await built.aclose()
            await _shutdown_kernels(managers.kernel_manager, self.log)
            store.close()
            handoff_store.close()
            self.log.info("jupyter_recall scheduler %s stopped", self.engine_id)
        return 0


async def _claim(
    store: Store, engine_id: str, clock: SystemClock, ending_by: datetime | None
) -> datetime | None:
    """None once ``engine_id``'s lease is this process's: it had none, or one ending by
    ``ending_by`` (or by now, if later); else the expiry of the lease its holder keeps."""
    while True:
        now = clock.now()
        claim = partial(
            store.claim_lease,
            engine_id,
            now=now,
            until=now + timedelta(seconds=LEASE_SECONDS),
            ending_by=now if ending_by is None else max(ending_by, now),
        )
        if await asyncio.to_thread(claim):
            return None
        held = await asyncio.to_thread(store.lease_until, engine_id)
        if held is not None:
            return held
        # Released between the two statements (its holder stopped): claim it again.


async def _wait_for_renewal(
    seen: datetime, engine_id: str, clock: SystemClock, stop: asyncio.Event, log: logging.Logger
) -> None:
    """Wait until a live holder of a lease seen ending at ``seen`` has renewed it (every third
    of the lease, plus a margin: at most 13 s, less the time since its last renewal), or a
    stop."""
    renewed_at = seen - timedelta(seconds=LEASE_SECONDS)
    next_renewal = renewed_at + timedelta(seconds=LEASE_SECONDS / 3 + RENEWAL_MARGIN)
    wait = (next_renewal - clock.now()).total_seconds()
    if wait <= 0:
        return
    log.info(
        "engine id %r has a lease until %s: waiting %.0f s to see whether its holder is alive",
        engine_id,
        seen.isoformat(timespec="seconds"),
        wait,
    )
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), wait)


async def _shutdown_kernels(kernel_manager: Any, log: logging.Logger) -> None:
    """Kernels started for live-kernel jobs (on_missing_kernel 'start') end with the process.

    Not ``shutdown_all``: it also shuts down the ids of kernels that failed to start, which
    jupyter_client keeps as pending and jupyter_server answers with a 404, and that raised out
    of the stop, leaving the stores open. The started kernels, each on its own.
    """
    kernel_ids = list(kernel_manager.list_kernel_ids())
    outcomes = await asyncio.gather(
        *(ensure_async(kernel_manager.shutdown_kernel(kid, now=True)) for kid in kernel_ids),
        return_exceptions=True,
    )
    for kernel_id, outcome in zip(kernel_ids, outcomes, strict=True):
        if isinstance(outcome, Exception):
            log.warning("could not shut kernel %s down: %s", kernel_id, outcome)
