"""The executor of the standalone scheduler: every kind of run, with no Jupyter server."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jupyter_core.paths import jupyter_runtime_dir
from jupyter_server.gateway.gateway_client import GatewayClient

from jupyter_recall.core.clock import Clock
from jupyter_recall.engine.executors import Executor
from jupyter_recall.server.approvals import ApprovalInbox
from jupyter_recall.server.executors import (
    HeadlessExecutor,
    LiveKernelExecutor,
    ServerActionExecutor,
    ServerManagers,
    TargetRouter,
)
from jupyter_recall.server.executors.fresh import FreshKernels
from jupyter_recall.server.executors.kernel_journal import KernelJournal
from jupyter_recall.server.executors.launcher import ManagedKernelLauncher
from jupyter_recall.server.notifications import NotificationActionExecutor, NotificationService
from jupyter_recall.server.sse import EventHub
from jupyter_recall.server.watcher_runtime import WatcherExecutor, WatcherRuntime
from jupyter_recall.server.wiring import make_tool_runner
from jupyter_recall.standalone.live import HandedLiveKernels
from jupyter_recall.store.base import Store
from jupyter_recall.tools import ToolRunner


@dataclass(slots=True)
class StandaloneExecutor:
    """What the standalone scheduler hands runs to, and what it closes at the end."""

    executor: Executor
    live: LiveKernelExecutor
    notifications: NotificationService
    approvals: ApprovalInbox
    tools: ToolRunner
    fresh: FreshKernels

    async def aclose(self) -> None:
        await self.fresh.aclose()
        await self.live.aclose()
        await self.notifications.aclose()
        await self.approvals.aclose()
        self.tools.close()


@dataclass(frozen=True, slots=True)
class _Root:
    """What ``make_tool_runner`` reads of a server: its root."""

    root_dir: str


def build_executor(
    app: Any, stores: tuple[Store, Store], clock: Clock, managers: ServerManagers
) -> StandaloneExecutor:
    """Headless and notebook runs in fresh kernels from ``managers``; tools and notifications
    here; watchers' checks; live-kernel runs handed to a server hosting their kernel, else by
    their policy after ``app.live_kernel_grace`` (``stores``: the engine's, and a connection of
    their own for live-kernel runs that wait)."""
    store, handoff_store = stores
    notifications = NotificationService(store, EventHub(None), clock, app.notification_channels)
    tools = make_tool_runner(_Root(str(Path(managers.root_dir))), app)
    journal = KernelJournal.for_engine(
        jupyter_runtime_dir(), app.engine_id, GatewayClient.instance().url or ""
    )
    fresh = FreshKernels(
        ManagedKernelLauncher(
            managers.kernel_manager, managers.kernel_spec_manager, journal=journal
        )
    )
    live = LiveKernelExecutor(managers)
    handed = HandedLiveKernels(
        live, handoff_store, clock, engine_id=app.engine_id, grace=app.live_kernel_grace
    )
    # An `approve` tool job waits in the inbox of the store, which every server on it shows
    # and decides from (the run polls its record), as on a server.
    approvals = ApprovalInbox(store, EventHub(None), clock)
    router = TargetRouter(
        kernel=handed,
        headless=HeadlessExecutor(managers, fresh),
        server=ServerActionExecutor(tools, inbox=approvals, approval_timeout=app.approval_timeout),
    )
    runtime = WatcherRuntime(store, notifications, clock, tools=tools, kernel=live)
    inner = NotificationActionExecutor(router, notifications)
    # A watcher's check in a notebook's kernel is handed whole to the server hosting it.
    watchers = WatcherExecutor(inner, runtime, kernel_checks=handed)
    return StandaloneExecutor(watchers, live, notifications, approvals, tools, fresh)
