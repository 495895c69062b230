"""Watchers benchmark: CPU used by many watchers checking a file every few seconds.

``--watchers`` watchers (default 1,000) poll one file with ``filesystem.read`` every
``--interval`` seconds (default 5, the shortest allowed) with the ``on_change`` strategy, in one
process holding the whole server-side stack but HTTP: the scheduler on a SQLite file, the
watcher runtime (tool runner, escalation, batched state writes, run history trimming) and the
notifier. After a warm-up of one interval, the process's CPU time (all threads) is measured over
``--seconds`` (default 60). Target: under 10% of one core. The process runs with the settings
the server applies at its start (``jupyter_recall.engine.process``). ``bench/primitives.py``
runs this measurement too, with its other figures.

    python bench/watchers.py                      # 1,000 watchers, 60 s
    python bench/watchers.py --watchers 50 --seconds 6    # smoke run
    python bench/watchers.py --profile /tmp/w.prof        # cProfile of the measured window

Prints one JSON object; figures are printed, never asserted. ``--profile`` covers the event
loop's thread only (the store's writes run in worker threads: use ``py-spy --gil`` for those)
and slows it down: its CPU figure is not the one to quote.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import tempfile
import time
from pathlib import Path
from typing import Any

OWNER = "bench"


async def measure(
    watchers: int, interval: int, seconds: float, workdir: Path, profile: str | None = None
) -> dict[str, Any]:
    from jupyter_recall.core.clock import SystemClock
    from jupyter_recall.engine import process
    from jupyter_recall.engine.executors import NoopExecutor
    from jupyter_recall.engine.scheduler import Scheduler
    from jupyter_recall.server.notifications import NotificationService
    from jupyter_recall.server.sse import EventHub
    from jupyter_recall.server.watcher_runtime import WatcherExecutor, WatcherRuntime
    from jupyter_recall.server.watchers import WatcherService
    from jupyter_recall.store.sqlite import SQLiteStore
    from jupyter_recall.tools import ToolRunner, default_registry

    process.apply(process.ProcessSettings())  # what the server applies at its start
    root = workdir / "root"
    root.mkdir()
    (root / "status.txt").write_text("all good\n")
    clock = SystemClock()
    store = SQLiteStore(workdir / "watchers.sqlite")
    tools = ToolRunner(default_registry(), root=str(root))
    hub = EventHub(None)
    notifications = NotificationService(store, hub, clock, {})
    runtime = WatcherRuntime(store, notifications, clock, tools=tools, kernel=None)
    executor = WatcherExecutor(NoopExecutor(), runtime)
    scheduler = Scheduler(store, executor, clock=clock, max_concurrent_runs=16)
    # As in the server: changes go to the event stream while a client listens (none here).
    hub.attach(scheduler)
    notifications.attach(scheduler)
    async with scheduler:
        service = WatcherService(scheduler, runtime)
        body = {
            "tool": "filesystem.read",
            "params": {"path": "status.txt"},
            "interval": interval,
            "session": "bench.ipynb",
        }
        for _ in range(watchers):
            await service.create(body, owner=OWNER)
        await asyncio.sleep(interval + 1.0)  # every watcher has made its first checks
        await runtime.flush()
        before = await _checks(service)
        profiler = cProfile.Profile() if profile else None
        cpu, wall = time.process_time(), time.monotonic()
        if profiler is not None:
            profiler.enable()
        await asyncio.sleep(seconds)
        if profiler is not None:
            profiler.disable()
        cpu, wall = time.process_time() - cpu, time.monotonic() - wall
        await runtime.flush()
        after = await _checks(service)
    await executor.aclose()
    tools.close()
    store.close()
    if profiler is not None and profile:
        profiler.dump_stats(profile)
    return {
        "watchers": watchers,
        "interval": interval,
        "seconds": round(wall, 2),
        "checks": after["checks"] - before["checks"],
        "expected_checks": int(watchers * seconds / interval),
        "notifications": after["notifications"],
        "cpu_seconds": round(cpu, 3),
        "cpu_percent_of_one_core": round(100 * cpu / wall, 2),
        "target_percent": 10,
    }


async def _checks(service: Any) -> dict[str, int]:
    found = await service.list(owner=OWNER)
    return {
        "checks": sum(w["checks"] for w in found),
        "notifications": sum(w["notifications"] for w in found),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--watchers", type=int, default=1000)
    parser.add_argument("--interval", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--profile", metavar="FILE", help="write a cProfile of the window here")
    parser.add_argument("--json", action="store_true", help="accepted; the output is JSON anyway")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="watchers-") as tmp:
        result = asyncio.run(
            measure(args.watchers, args.interval, args.seconds, Path(tmp), args.profile)
        )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
