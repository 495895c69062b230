"""Handing a live-kernel run from the engine that fired it to a server that hosts its kernel.

A run needs a live kernel when its job targets one (``target.type == "kernel"``); only the
server hosting that notebook's kernel can execute it. The engine that fired it without hosting
the kernel (the standalone scheduler) marks the run *awaiting*: its ``engine_id`` becomes
``<engine>#awaiting-kernel``, a name whose lease that engine renews while it waits, so a crash
of that engine still ends the run ``interrupted``. A server that hosts the kernel *takes* the
run: in one transaction it re-reads it and, if it is still awaiting and its grace period has
not run out, writes its own ``engine_id`` and executes it. When the grace period is over, the
firing engine *keeps* the run (same transaction check) and applies the job's
``on_missing_kernel`` policy. Servers take runs only until ``TAKE_MARGIN`` seconds before the
deadline, so that a take and a keep never both succeed even on a store that does not serialise
the two transactions (PostgreSQL at READ COMMITTED), as long as the engines' clocks agree
within that margin. See docs/deploy.md, "Live-kernel runs".

These functions are synchronous: they run in a store thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from jupyter_recall.core.errors import NotFoundError
from jupyter_recall.core.model import Job, Run, RunStatus
from jupyter_recall.store.base import Store

AWAITING = "#awaiting-kernel"
"""Suffix of the engine id of a run waiting for a server that hosts its kernel."""

TAKE_MARGIN = 1.0
"""Seconds before the end of the grace period after which no server takes a run any more."""


def awaiting_id(engine_id: str) -> str:
    return f"{engine_id}{AWAITING}"


def needs_live_kernel(job: Job) -> bool:
    return job.target.type == "kernel"


def mark_awaiting(
    store: Store, run_id: str, *, engine_id: str, now: datetime, lease: float
) -> None:
    """Mark a run this engine fired as waiting for a host, and hold the lease of the mark."""
    renew_awaiting(store, engine_id=engine_id, now=now, lease=lease)
    with store.atomic():
        run = store.get_run(run_id, owner=None)
        if run.engine_id == engine_id and run.status is RunStatus.RUNNING:
            store.update_runs([run.evolve(engine_id=awaiting_id(engine_id))])


def renew_awaiting(store: Store, *, engine_id: str, now: datetime, lease: float) -> None:
    store.renew_lease(awaiting_id(engine_id), now=now, until=now + timedelta(seconds=lease))


def taken(store: Store, run_id: str, *, engine_id: str) -> bool:
    """Whether a server took the run (it is no longer this engine's, awaiting or not)."""
    try:
        run = store.get_run(run_id, owner=None)
    except NotFoundError:
        return False  # deleted with its job: this engine's cancellation ends it
    return run.engine_id not in (engine_id, awaiting_id(engine_id))


def keep(store: Store, run_id: str, *, engine_id: str) -> bool:
    """At the end of the grace period: the run is this engine's again, unless a server took it
    (False)."""
    with store.atomic():
        try:
            run = store.get_run(run_id, owner=None)
        except NotFoundError:
            return True
        if run.engine_id != awaiting_id(engine_id):
            return run.engine_id == engine_id
        store.update_runs([run.evolve(engine_id=engine_id)])
        return True


@dataclass(frozen=True, slots=True)
class Awaiting:
    run: Run
    job: Job


def awaiting_runs(
    store: Store, *, now: datetime, grace: float, owner: str | None
) -> list[Awaiting]:
    """Runs waiting for a host whose grace period leaves time to take them (``owner``: only
    that user's)."""
    cutoff = timedelta(seconds=grace - TAKE_MARGIN)
    found = []
    for run in store.running_runs():
        if not (run.engine_id or "").endswith(AWAITING):
            continue
        if owner is not None and run.owner != owner:
            continue
        if now >= run.scheduled_for + cutoff:
            continue
        try:
            found.append(Awaiting(run, store.get_job(run.job_id, owner=None)))
        except NotFoundError:
            continue
    return found


def take(store: Store, awaiting: Awaiting, *, engine_id: str) -> Run | None:
    """Make an awaiting run this engine's; None if another took or kept it meanwhile."""
    with store.atomic():
        try:
            run = store.get_run(awaiting.run.id, owner=None)
        except NotFoundError:
            return None
        if run.engine_id != awaiting.run.engine_id or run.status is not RunStatus.RUNNING:
            return None
        mine = run.evolve(engine_id=engine_id)
        store.update_runs([mine])
        return mine
