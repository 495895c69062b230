"""Burst benchmark: N one-shot jobs due at random instants within a short window.

Each scheduler runs in its own subprocess, one after the other: jupyter_recall (batch API
``add_jobs``, SQLite store, no-op executor, every run persisted) and APScheduler 3
(``AsyncIOScheduler`` + ``SQLAlchemyJobStore`` on a SQLite file, ``misfire_grace_time=None``).

Lag is measured from a job's due instant to the entry of its executor (``time.time()``). The
window starts after creation is expected to be over: creation speed is first measured on a
scratch file, so that both schedulers get a fair start whatever their creation speed. The
APScheduler side has a time limit; ``fired`` reports honestly how many jobs ran within it.

    python bench/burst.py --jobs 20000 --window 5 --json

``--store postgresql --engines N`` measures the shared store instead: N engine processes on one
PostgreSQL database (``--db-url``, or a throwaway cluster the bench starts and removes itself,
``tests/pg_cluster.py``), the first of which creates the jobs; ``duplicates`` counts the jobs
executed more than once over all engines. APScheduler 4 (``4.0.0a6``: its SQLAlchemy data
store and asyncpg event broker, as many scheduler processes, on a second database of the same
cluster) is measured in the same run, from a venv of its own that the bench makes once
(``APS4_VENV``; APScheduler 3 and 4 cannot share one); with ``--db-url`` it is not (``null``).

Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

UTC = timezone.utc
CALIBRATION_JOBS = 500
CREATION_SAFETY = 2.0
"""The window starts after the expected creation time times this, plus ``--lead``."""


def percentile(values: list[float], q: float) -> float:
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def summary(create_per_s: float, lags: list[float]) -> dict[str, Any]:
    return {
        "create_per_s": round(create_per_s, 1),
        "p50_ms": round(percentile(lags, 0.50) * 1000, 2),
        "p99_ms": round(percentile(lags, 0.99) * 1000, 2),
        "fired": len(lags),
    }


def due_offsets(jobs: int, window: float, seed: int) -> list[float]:
    rng = random.Random(seed)
    return [rng.random() * window for _ in range(jobs)]


def window_start(jobs: int, rate: float, lead: float) -> float:
    return time.time() + lead + CREATION_SAFETY * jobs / rate


def check_head_start(side: str, base: float) -> None:
    """Say so if creation ran into the window (the lags of the first jobs then include it)."""
    overrun = time.time() - base
    if overrun > 0:
        print(f"{side}: creation ended {overrun:.1f} s into the window", file=sys.stderr)


async def wait_for(done: Callable[[], bool], deadline: float) -> None:
    while not done() and time.time() < deadline:
        await asyncio.sleep(0.05)


# --- jupyter_recall ---------------------------------------------------------------------------


async def run_recall(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    from jupyter_recall.core.clock import SystemClock
    from jupyter_recall.core.model import Job, Run
    from jupyter_recall.core.records import NotificationAction
    from jupyter_recall.engine import process
    from jupyter_recall.engine.executors import CallableExecutor, OutputSink
    from jupyter_recall.engine.scheduler import NewJob, Scheduler
    from jupyter_recall.store.base import RunFilter
    from jupyter_recall.store.sqlite import SQLiteStore

    process.apply(process.ProcessSettings())  # what the server applies at its start
    lags: list[float] = []

    async def record(job: Job, run: Run, output: OutputSink) -> None:
        lags.append(time.time() - run.scheduled_for.timestamp())

    def news(offsets: list[float], base: float) -> list[NewJob]:
        action = NotificationAction("burst")
        return [
            NewJob(when=datetime.fromtimestamp(base + o, UTC).isoformat(), action=action)
            for o in offsets
        ]

    async def create(scheduler: Scheduler, batch: list[NewJob]) -> float:
        started = time.perf_counter()
        await scheduler.add_jobs(batch, owner="bench")
        return len(batch) / (time.perf_counter() - started)

    calibration = SQLiteStore(workdir / "calibration.sqlite")
    async with Scheduler(calibration, CallableExecutor(record)) as scratch:
        offsets = due_offsets(min(args.jobs, CALIBRATION_JOBS), 1.0, args.seed)
        rate = await create(scratch, news(offsets, time.time() + 3600))
    calibration.close()

    if args.prune_backlog:
        await add_backlog(workdir / "recall.sqlite", args.prune_backlog)
    store = SQLiteStore(workdir / "recall.sqlite")
    # --keep-runs: the background pruning works during the burst (its runs are deleted).
    pruning = (
        {}
        if args.keep_runs is None
        else {"keep_runs": args.keep_runs, "prune_interval": args.prune_interval}
    )
    executor = CallableExecutor(record)
    async with Scheduler(store, executor, clock=SystemClock(), **pruning) as scheduler:
        base = window_start(args.jobs, rate, args.lead)
        batch = news(due_offsets(args.jobs, args.window, args.seed), base)
        create_per_s = await create(scheduler, batch)
        del batch  # a caller does not keep its submissions; held, the GC scans them all
        check_head_start("recall", base)
        await wait_for(lambda: len(lags) >= args.jobs, base + args.window + args.timeout)
    persisted = len(store.list_runs(owner="bench", where=RunFilter()))
    left = len(store.list_runs(owner="backlog", where=RunFilter()))
    store.close()
    if args.keep_runs is not None:
        print(f"recall: {persisted} burst and {left} backlog runs left", file=sys.stderr)
    elif persisted != len(lags):
        print(f"recall: {len(lags)} fired but {persisted} runs persisted", file=sys.stderr)
    return summary(create_per_s, lags)


BACKLOG_RUNS_PER_JOB = 200


async def add_backlog(path: Path, runs: int) -> None:
    """Ended runs of other jobs, for the background pruning to delete while the burst comes
    (``--prune-backlog``): recurring jobs due in a day, ``BACKLOG_RUNS_PER_JOB`` runs each."""
    from jupyter_recall.core.model import Run, RunStatus, RunTrigger, new_id
    from jupyter_recall.core.records import NotificationAction
    from jupyter_recall.engine.executors import CallableExecutor
    from jupyter_recall.engine.scheduler import NewJob, Scheduler
    from jupyter_recall.store.sqlite import SQLiteStore

    async def nothing(*_: Any) -> None:
        return None

    count = max(1, runs // BACKLOG_RUNS_PER_JOB)
    news = [NewJob(when="every day", action=NotificationAction("backlog"))] * count
    async with Scheduler(SQLiteStore(path), CallableExecutor(nothing)) as scheduler:
        jobs = await scheduler.add_jobs(news, owner="backlog")
    store = SQLiteStore(path)
    then = datetime(2020, 1, 1, tzinfo=UTC)
    rows = [
        Run(
            new_id(), job.id, "backlog", then.replace(minute=i % 60, hour=i // 60),
            RunTrigger.SCHEDULE, RunStatus.SUCCEEDED, then, then, then,
        )
        for job in jobs
        for i in range(BACKLOG_RUNS_PER_JOB)
    ]  # fmt: skip
    for start in range(0, len(rows), 5000):
        store.insert_runs(rows[start : start + 5000])
    store.close()


# --- APScheduler 3 ----------------------------------------------------------------------------

APS_LAGS: list[float] = []


async def aps_record(due: float) -> None:
    APS_LAGS.append(time.time() - due)


async def run_apscheduler(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
    from apscheduler.schedulers.asyncio import AsyncIOScheduler

    from jupyter_recall.engine import process

    process.apply(process.ProcessSettings())  # the same process settings for both sides

    def scheduler(path: Path) -> AsyncIOScheduler:
        sched = AsyncIOScheduler(
            jobstores={"default": SQLAlchemyJobStore(url=f"sqlite:///{path}")},
            job_defaults={"misfire_grace_time": None},
            timezone=UTC,
        )
        sched.start()
        return sched

    def create(sched: AsyncIOScheduler, offsets: list[float], base: float) -> float:
        started = time.perf_counter()
        for index, offset in enumerate(offsets):
            due = base + offset
            sched.add_job(
                aps_record,
                "date",
                run_date=datetime.fromtimestamp(due, UTC),
                args=[due],
                id=f"job{index}",
            )
        return len(offsets) / (time.perf_counter() - started)

    scratch = scheduler(workdir / "aps-calibration.sqlite")
    rate = create(scratch, due_offsets(min(args.jobs, CALIBRATION_JOBS), 1.0, args.seed), 1e10)
    scratch.shutdown(wait=False)

    sched = scheduler(workdir / "aps.sqlite")
    base = window_start(args.jobs, rate, args.lead)
    create_per_s = create(sched, due_offsets(args.jobs, args.window, args.seed), base)
    check_head_start("apscheduler", base)
    await wait_for(lambda: len(APS_LAGS) >= args.jobs, base + args.window + args.timeout)
    sched.shutdown(wait=False)
    return summary(create_per_s, list(APS_LAGS))


# --- jupyter_recall on PostgreSQL, several engine processes ---------------------------------------


async def run_pg_engine(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """One engine process on the shared database: the creator (``--role create``) calibrates,
    creates every job and says when the burst is over (a file); the others fire until then."""
    from jupyter_recall.core.clock import SystemClock
    from jupyter_recall.core.model import Job, Run
    from jupyter_recall.core.records import NotificationAction
    from jupyter_recall.engine import process
    from jupyter_recall.engine.executors import CallableExecutor, OutputSink
    from jupyter_recall.engine.scheduler import NewJob, Scheduler
    from jupyter_recall.store.urls import open_store

    process.apply(process.ProcessSettings())
    lags: list[float] = []
    executed: list[str] = []
    claimed_late = 0

    async def record(job: Job, run: Run, output: OutputSink) -> None:
        nonlocal claimed_late
        due = run.scheduled_for.timestamp()
        lags.append(time.time() - due)
        executed.append(job.id)
        # Recorded after its instant: the firing pass came late, not the start of the run.
        claimed_late += run.created_at.timestamp() > due

    def news(offsets: list[float], base: float) -> list[NewJob]:
        action = NotificationAction("burst")
        return [
            NewJob(when=datetime.fromtimestamp(base + o, UTC).isoformat(), action=action)
            for o in offsets
        ]

    done = Path(args.done_file)
    store = open_store(args.db_url)
    result: dict[str, Any] = {}
    async with Scheduler(store, CallableExecutor(record), clock=SystemClock()) as scheduler:
        if args.role == "create":
            started = time.perf_counter()
            calibration = news(due_offsets(CALIBRATION_JOBS, 1.0, args.seed), time.time() + 86400)
            await scheduler.add_jobs(calibration, owner="calibration")
            rate = CALIBRATION_JOBS / (time.perf_counter() - started)
            base = window_start(args.jobs, rate, args.lead)
            batch = news(due_offsets(args.jobs, args.window, args.seed), base)
            started = time.perf_counter()
            await scheduler.add_jobs(batch, owner="bench")
            result["create_per_s"] = args.jobs / (time.perf_counter() - started)
            del batch
            check_head_start("recall", base)
            await _wait_finished(args, base + args.window + args.timeout)
            done.write_text("done")
        else:
            await wait_for(done.exists, time.time() + 3600)
    store.close()
    return {**result, "lags": lags, "executed": executed, "claimed_late": claimed_late}


FINISHED_RUNS = "SELECT count(*) FROM runs WHERE owner = 'bench' AND status <> 'running'"
FINISHED_EVERY = 0.5
"""Seconds between two counts of the ended runs. The count is the bench's, not the engine's
work: it runs on a connection of its own, in a thread, so that it holds neither the engine's
store nor its event loop (listing the runs in the loop every 50 ms, as this did up to session 4,
blocked it for tens of ms at a time and was a large part of the p99 measured)."""


async def _wait_finished(args: argparse.Namespace, deadline: float) -> None:
    import psycopg

    with psycopg.connect(args.db_url, autocommit=True) as conn:

        def finished() -> int:
            row = conn.execute(FINISHED_RUNS).fetchone()
            return int(row[0]) if row else 0

        while time.time() < deadline and await asyncio.to_thread(finished) < args.jobs:
            await asyncio.sleep(FINISHED_EVERY)


def pg_command(args: argparse.Namespace, role: str, url: str, done: Path) -> list[str]:
    return [
        sys.executable,
        __file__,
        "--side",
        "recall-pg",
        *("--role", role, "--db-url", url, "--done-file", str(done)),
        *("--jobs", str(args.jobs), "--window", str(args.window)),
        *("--lead", str(args.lead), "--timeout", str(args.timeout), "--seed", str(args.seed)),
    ]


APS4_VENV = Path(tempfile.gettempdir()) / "recall-bench-aps4"
APS4_PACKAGES = [
    "apscheduler==4.0.0a6",
    "anyio>=4.6,<4.10",  # newer anyio breaks 4.0.0a6 (its callbacks find no event loop)
    "sqlalchemy[asyncio]>=2",
    "asyncpg",
    "sniffio",
]


def aps4_python() -> str:
    python = APS4_VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(APS4_VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", *APS4_PACKAGES], check=True)
    return str(python)


def _wait_ready(workdir: Path, count: int, proc: subprocess.Popen[str]) -> None:
    """Until ``count`` APScheduler 4 processes have their scheduler started."""
    deadline = time.monotonic() + 120
    while len(list(workdir.glob("ready-*"))) < count:
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("an APScheduler 4 process did not start (its output is above)")
        time.sleep(0.05)


def run_aps4(args: argparse.Namespace, url: str) -> dict[str, Any]:
    """APScheduler 4 with ``--engines`` scheduler processes on the database at ``url``."""
    python = aps4_python()
    with tempfile.TemporaryDirectory(prefix="burst-aps4-") as tmp:
        numbers = [str(args.jobs), str(args.window), str(args.lead), str(args.timeout)]
        roles = ["create"] + ["fire"] * (args.engines - 1)
        commands = [
            [python, "-c", "import aps4_side; aps4_side.main()", role, url, tmp, *numbers,
             str(args.seed)]
            for role in reversed(roles)
        ]  # fmt: skip
        bench = Path(__file__).resolve().parent
        procs = []
        for command in commands:  # one at a time: each sets up the schema it finds missing
            procs.append(subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=bench))
            if command is not commands[-1]:
                _wait_ready(Path(tmp), len(procs), procs[-1])
        rate = float(procs[-1].communicate()[0].strip().splitlines()[-1])
        for proc in procs[:-1]:
            proc.communicate()
        lines = [
            line.split() for path in Path(tmp).glob("exec-*.txt")
            for line in path.read_text().splitlines()
        ]  # fmt: skip
    executed = [name for name, _ in lines if name.startswith("job")]
    result = summary(rate, [float(lag) for name, lag in lines if name.startswith("job")])
    result["fired"] = len(set(executed))
    result["duplicates"] = len(executed) - len(set(executed))
    return result


def run_postgres(args: argparse.Namespace) -> dict[str, Any]:
    """Both sides on PostgreSQL with ``--engines`` processes each; their summaries."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests.pg_cluster import Cluster, binaries

    cluster = None
    url = args.db_url
    aps4_url = ""
    if url is None:
        bin_dir = binaries()
        if bin_dir is None:
            raise SystemExit("PostgreSQL's binaries are not installed: give --db-url")
        cluster = Cluster(bin_dir).start()
        url = cluster.url(cluster.create_database())
        aps4_url = cluster.tcp_url(cluster.create_database(), driver="postgresql+asyncpg")
    try:
        with tempfile.TemporaryDirectory(prefix="burst-") as tmp:
            done = Path(tmp) / "done"
            roles = ["create"] + ["fire"] * (args.engines - 1)
            procs = [
                subprocess.Popen(
                    pg_command(args, role, url, done), stdout=subprocess.PIPE, text=True
                )
                for role in reversed(roles)  # the creator last: the others are up by then
            ]
            outputs = [json.loads(proc.communicate()[0].strip().splitlines()[-1]) for proc in procs]
        # ``--side recall`` skips APScheduler 4 (many minutes at 20,000 jobs) on a cluster too.
        aps4 = run_aps4(args, aps4_url) if cluster is not None and args.side is None else None
    finally:
        if cluster is not None:
            cluster.stop()
    lags = [lag for out in outputs for lag in out["lags"]]
    executed = [job for out in outputs for job in out["executed"]]
    creator = outputs[-1]
    result = summary(creator["create_per_s"], lags)
    result["fired"] = len(set(executed))
    result["duplicates"] = len(executed) - len(set(executed))
    result["per_engine"] = [len(out["executed"]) for out in outputs]
    result["claimed_late"] = sum(out["claimed_late"] for out in outputs)
    return {"recall": result, "apscheduler4": aps4}


# --- driver -----------------------------------------------------------------------------------

SIDES = {"recall": run_recall, "apscheduler": run_apscheduler}
SHARED_SIDES = {"recall-pg": run_pg_engine}


def run_side(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="burst-") as tmp:
        result = asyncio.run(SIDES[args.side](args, Path(tmp)))
    print(json.dumps(result))


def run_shared(args: argparse.Namespace) -> None:
    results = {
        "jobs": args.jobs,
        "store": "postgresql",
        "engines": args.engines,
        **run_postgres(args),
    }
    print(json.dumps(results) if args.json else json.dumps(results, indent=2))


def run_both(args: argparse.Namespace) -> None:
    results: dict[str, Any] = {"jobs": args.jobs}
    for side in SIDES:
        command = [
            sys.executable,
            __file__,
            "--side",
            side,
            *("--jobs", str(args.jobs), "--window", str(args.window)),
            *("--lead", str(args.lead), "--timeout", str(args.timeout)),
            *("--seed", str(args.seed)),
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            print(done.stderr, file=sys.stderr)
            results[side] = {"error": f"exit status {done.returncode}"}
            continue
        sys.stderr.write(done.stderr)
        results[side] = json.loads(done.stdout.strip().splitlines()[-1])
    if args.json:
        print(json.dumps(results))
        return
    print(f"{args.jobs} one-shot jobs due within {args.window} s")
    print(f"{'scheduler':<12} {'create/s':>10} {'p50 ms':>10} {'p99 ms':>10} {'fired':>8}")
    for side in SIDES:
        row = results[side]
        if "error" in row:
            print(f"{side:<12} {row['error']}")
            continue
        print(
            f"{side:<12} {row['create_per_s']:>10.0f} {row['p50_ms']:>10.2f} "
            f"{row['p99_ms']:>10.2f} {row['fired']:>8}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--window", type=float, default=5.0, help="seconds jobs fall due over")
    parser.add_argument("--lead", type=float, default=2.0, help="seconds from creation to window")
    parser.add_argument(
        "--timeout", type=float, default=60.0, help="seconds after the window before giving up"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--keep-runs", type=int, help="recall side: RecallApp.keep_runs (background pruning)"
    )
    parser.add_argument(
        "--prune-interval", type=float, default=0.5, help="recall side: seconds between sweeps"
    )
    parser.add_argument(
        "--prune-backlog", type=int, default=0, help="recall side: ended runs to prune meanwhile"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--store", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--engines", type=int, default=1, help="engine processes (postgresql)")
    parser.add_argument("--db-url", help="a PostgreSQL database (default: a throwaway cluster)")
    parser.add_argument("--side", choices=sorted({*SIDES, *SHARED_SIDES}), help=argparse.SUPPRESS)
    parser.add_argument("--role", choices=["create", "fire"], help=argparse.SUPPRESS)
    parser.add_argument("--done-file", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side in SHARED_SIDES:
        with tempfile.TemporaryDirectory(prefix="burst-") as tmp:
            print(json.dumps(asyncio.run(SHARED_SIDES[args.side](args, Path(tmp)))))
    elif args.store == "postgresql":
        run_shared(args)
    elif args.side:
        run_side(args)
    else:
        run_both(args)


if __name__ == "__main__":
    main()
