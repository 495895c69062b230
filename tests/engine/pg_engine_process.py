"""An engine in a process of its own, for the fault tests: ``python -m
tests.engine.pg_engine_process URL ENGINE_ID LEASE_SECONDS``. It fires every job of the store
at ``URL`` (each run takes 50 ms), prints ``ready`` once running, and runs until killed."""

from __future__ import annotations

import sys

import anyio

from jupyter_recall.core.clock import SystemClock
from jupyter_recall.core.model import Job, Run
from jupyter_recall.engine.executors import CallableExecutor, OutputSink
from jupyter_recall.engine.scheduler import Scheduler
from jupyter_recall.store.urls import open_store


async def take_a_while(job: Job, run: Run, output: OutputSink) -> None:
    await anyio.sleep(0.05)


async def main(url: str, engine_id: str, lease_seconds: float) -> None:
    store = open_store(url)
    engine = Scheduler(
        store,
        CallableExecutor(take_a_while),
        clock=SystemClock(),
        engine_id=engine_id,
        lease_seconds=lease_seconds,
        batch_size=25,
    )
    async with engine:
        print("ready", flush=True)
        await anyio.sleep_forever()


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2], float(sys.argv[3]))
