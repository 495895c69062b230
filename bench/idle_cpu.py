"""Idle benchmark: CPU used by an engine that holds many future jobs and has nothing to do.

The engine holds ``--jobs`` one-shot jobs due in one to two days (created through ``add_jobs``,
SQLite store), then the process's CPU time is measured over ``--seconds`` of idling: what an
idle Jupyter server pays for having the scheduler on. A polling scheduler pays per poll; this
one sleeps until the earliest job (at most ``max_sleep``) and renews its lease every
``lease_seconds / 3``.

    python bench/idle_cpu.py --jobs 100000 --seconds 30 --json

Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

UTC = timezone.utc
BATCH = 10_000


async def measure(jobs: int, seconds: float, workdir: Path) -> dict[str, Any]:
    from jupyter_recall.core.model import Job, Run
    from jupyter_recall.core.records import NotificationAction
    from jupyter_recall.engine.executors import CallableExecutor, OutputSink
    from jupyter_recall.engine.scheduler import NewJob, Scheduler
    from jupyter_recall.store.sqlite import SQLiteStore

    async def never(job: Job, run: Run, output: OutputSink) -> None:
        raise AssertionError("no job is due during the measurement")

    rng = random.Random(1)
    store = SQLiteStore(workdir / "idle.sqlite")
    async with Scheduler(store, CallableExecutor(never)) as scheduler:
        now = datetime.now(UTC)
        action = NotificationAction("later")
        for start in range(0, jobs, BATCH):
            batch = [
                NewJob(when=(now + timedelta(days=1 + rng.random())).isoformat(), action=action)
                for _ in range(min(BATCH, jobs - start))
            ]
            await scheduler.add_jobs(batch, owner="bench")
        held = store.count_jobs(owner=None)
        await asyncio.sleep(1.0)  # let the loop settle into its sleep
        cpu, wall = time.process_time(), time.monotonic()
        await asyncio.sleep(seconds)
        cpu, wall = time.process_time() - cpu, time.monotonic() - wall
    store.close()
    return {"jobs": held, "seconds": round(wall, 2), "cpu_seconds": round(cpu, 4)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="idle-") as tmp:
        result = asyncio.run(measure(args.jobs, args.seconds, Path(tmp)))
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"{result['jobs']} jobs held for {result['seconds']} s: "
            f"{result['cpu_seconds']} CPU seconds"
        )


if __name__ == "__main__":
    main()
