"""The server's side of live-kernel handoff: take the awaiting runs whose kernel it hosts.

A standalone scheduler (or any engine that fired a live-kernel run without hosting its kernel)
marks the run awaiting (``engine/handoff.py``); every server looks for such runs every
``interval`` seconds (a bounded poll of running runs, on SQLite and PostgreSQL alike) and
executes those whose notebook's kernel it hosts, as if it had fired them. On SQLite, the same
look relays the runs other engines start and end to this server's event streams, so that a
sidebar open on a server with ``run_scheduler = False`` shows the scheduler's runs as they
happen; on PostgreSQL every event of every engine (output included) comes through NOTIFY
instead (``engine/event_relay.py``), and this look relays nothing.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from contextlib import suppress

from jupyter_recall.core.model import Job
from jupyter_recall.engine.executing import ClaimingScheduler


async def take_awaiting_runs(
    scheduler: ClaimingScheduler,
    hosts: Callable[[Job], Awaitable[bool]],
    *,
    grace: float,
    interval: float,
    stopped: asyncio.Event,
    log: logging.Logger | logging.LoggerAdapter[logging.Logger],
) -> None:
    """Until ``stopped``: take the awaiting runs this server can execute, and announce on its
    event streams the runs other engines (a standalone scheduler) started and ended."""
    since = scheduler.clock.now()
    seen: dict[str, str] = {}
    failing = 0
    """Looks failed in a row: a database down for a minute is told once, not every second."""
    while not stopped.is_set():
        try:
            taken = await scheduler.take_awaiting(hosts, grace=grace)
            since = await scheduler.relay_foreign_runs(since, seen)
        except Exception as error:
            if not failing:
                log.exception("jupyter_recall: looking at runs of other engines failed")
            else:
                log.debug("jupyter_recall: looking at runs of other engines failed: %s", error)
            failing += 1
        else:
            if failing:
                log.warning("jupyter_recall: looking at runs of other engines works again")
            failing = 0
            if taken:
                log.info("jupyter_recall: took %d live-kernel run(s) fired elsewhere", taken)
        with suppress(TimeoutError):
            await asyncio.wait_for(stopped.wait(), interval)
