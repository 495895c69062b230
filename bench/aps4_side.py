"""The APScheduler 4 side of ``burst.py --store postgresql``: one scheduler process (its
SQLAlchemy data store and asyncpg event broker on the same database). It runs in a venv of its
own, since APScheduler 3 (the SQLite comparison) and 4 cannot share one; ``burst.py`` makes it.

    python -c "import aps4_side; aps4_side.main()" ROLE URL WORKDIR JOBS WINDOW LEAD TIMEOUT SEED

Each execution appends ``<schedule id> <lag seconds>`` to a file of its process in WORKDIR; the
creator (ROLE ``create``) creates the schedules, waits until every one ran (or the time
limit), writes ``done`` and prints its creation rate; the others run until ``done`` exists.
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

CALIBRATION = 200
LOG: list[str] = []


async def record(schedule_id: str, due: float) -> None:
    LOG.append(f"{schedule_id} {time.time() - due}\n")


def executions(workdir: Path) -> int:
    return sum(len(path.read_text().splitlines()) for path in workdir.glob("exec-*.txt"))


async def flush_log(path: Path) -> None:
    while True:
        if LOG:
            lines, LOG[:] = list(LOG), []
            with path.open("a") as out:
                out.writelines(lines)
        await asyncio.sleep(0.2)


async def create(scheduler: Any, jobs: int, window: float, lead: float, seed: int) -> float:
    from apscheduler.triggers.date import DateTrigger

    add = scheduler.add_schedule
    started = time.perf_counter()
    for index in range(CALIBRATION):
        far = datetime.fromtimestamp(time.time() + 86400, timezone.utc)
        await add(record, DateTrigger(far), id=f"cal{index}", args=[f"cal{index}", 0.0])
    rate = CALIBRATION / (time.perf_counter() - started)
    base = time.time() + lead + 2.0 * jobs / rate
    rng = random.Random(seed)
    started = time.perf_counter()
    for index in range(jobs):
        due = base + rng.random() * window
        run_at = datetime.fromtimestamp(due, timezone.utc)
        await add(record, DateTrigger(run_at), id=f"job{index}", args=[f"job{index}", due])
    return jobs / (time.perf_counter() - started)


class Settings(NamedTuple):
    role: str
    url: str
    workdir: Path
    jobs: int
    window: float
    lead: float
    timeout: float
    seed: int


async def run(settings: Settings) -> None:
    role, url, workdir, jobs, window, lead, timeout, seed = settings
    from apscheduler import AsyncScheduler
    from apscheduler.datastores.sqlalchemy import SQLAlchemyDataStore
    from apscheduler.eventbrokers.asyncpg import AsyncpgEventBroker
    from sqlalchemy.ext.asyncio import create_async_engine

    engine = create_async_engine(url)
    store = SQLAlchemyDataStore(engine)
    broker = AsyncpgEventBroker.from_async_sqla_engine(engine)
    done = workdir / "done"
    flusher = asyncio.ensure_future(flush_log(workdir / f"exec-{os.getpid()}.txt"))
    async with AsyncScheduler(store, broker) as scheduler:
        await scheduler.start_in_background()
        # The schema is in place: the next process may start (APScheduler 4's schema setup is
        # not safe against two processes at once: CREATE TYPE fails in one of them).
        (workdir / f"ready-{os.getpid()}").write_text("ready")
        if role == "create":
            rate = await create(scheduler, jobs, window, lead, seed)
            deadline = time.time() + lead + window + timeout + 2.0 * jobs / rate
            while executions(workdir) < jobs and time.time() < deadline:
                await asyncio.sleep(0.2)
            done.write_text("done")
            print(rate, flush=True)
        else:
            while not done.exists():
                await asyncio.sleep(0.2)
        await asyncio.sleep(0.5)
    flusher.cancel()


def main() -> None:
    role, url, workdir, jobs, window, lead, timeout, seed = sys.argv[1:9]
    numbers = (int(jobs), float(window), float(lead), float(timeout), int(seed))
    asyncio.run(run(Settings(role, url, Path(workdir), *numbers)))
