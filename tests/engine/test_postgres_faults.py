"""Faults with two engine processes on one PostgreSQL database: one of them killed with
``kill -9`` in the middle of a burst. Every job still ends with exactly one run: succeeded, or
interrupted (the survivor takes over the dead engine's runs once its lease expires); none is
lost and none runs twice. The same when the database restarts in the middle of a burst."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

from jupyter_recall.core.model import Run, RunStatus
from jupyter_recall.store.base import RunFilter, Store
from jupyter_recall.store.urls import open_store
from tests.engine.support import UTC
from tests.pg_cluster import Cluster
from tests.store.factories import make_job

REPO = Path(__file__).resolve().parents[2]
LEASE_SECONDS = 2.0
JOBS = 300


def start_engine(url: str, engine_id: str) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.engine.pg_engine_process",
            url,
            engine_id,
            str(LEASE_SECONDS),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "ready"
    return process


def wait_settled(store: Store, *, timeout: float) -> list[Run]:
    """Every run, once there is one per job and all are final."""
    deadline = time.monotonic() + timeout
    while True:
        runs = store.list_runs(owner=None, where=RunFilter())
        settled = [run for run in runs if run.status.is_final]
        if len(settled) >= JOBS and len(runs) == len(settled):
            return runs
        assert time.monotonic() < deadline, f"{len(settled)} of {JOBS} runs settled"
        time.sleep(0.25)


def an_engine_with_runs(store: Store, *, timeout: float) -> str:
    """The id of an engine that holds runs of the burst, once one does."""
    deadline = time.monotonic() + timeout
    while True:
        runs = store.list_runs(owner=None, where=RunFilter())
        held = Counter(run.engine_id for run in runs if run.engine_id)
        if held:
            return held.most_common(1)[0][0]
        assert time.monotonic() < deadline, f"no engine ran anything in {timeout} s"
        time.sleep(0.05)


def stop(engine: subprocess.Popen[str]) -> None:
    if engine.poll() is None:
        engine.kill()
    engine.wait(timeout=30)
    if engine.stdout is not None:
        engine.stdout.close()


def test_an_engine_killed_mid_burst_loses_and_repeats_nothing(postgres_db_url: str) -> None:
    engines = [start_engine(postgres_db_url, f"engine-{n}") for n in range(2)]
    store = open_store(postgres_db_url)
    try:
        now = datetime.now(UTC)
        start = now + timedelta(seconds=1)
        jobs = [
            make_job(when=(start + timedelta(milliseconds=10 * i)).isoformat(), created_at=now)
            for i in range(JOBS)
        ]
        store.insert_jobs(jobs)
        # The engine killed is one that holds runs of the burst: which one claims first is
        # the engines' race (in CI the second started claimed every run of the first seconds),
        # and killing one that holds none tests nothing.
        victim = an_engine_with_runs(store, timeout=60)
        killed = engines[int(victim.rsplit("-", 1)[1])]
        os.kill(killed.pid, signal.SIGKILL)
        killed.wait(timeout=30)
        runs = wait_settled(store, timeout=120)
    finally:
        for engine in engines:
            stop(engine)
        store.close()
    per_job = Counter(run.job_id for run in runs)
    assert set(per_job) == {job.id for job in jobs}
    assert set(per_job.values()) == {1}
    statuses = Counter(run.status for run in runs)
    assert set(statuses) <= {RunStatus.SUCCEEDED, RunStatus.INTERRUPTED}
    assert statuses[RunStatus.SUCCEEDED] > 0
    survivor = "engine-1" if victim == "engine-0" else "engine-0"
    by_engine = Counter(run.engine_id for run in runs)
    assert by_engine[victim] > 0
    assert by_engine[survivor] > 0
    for run in runs:
        if run.status is RunStatus.INTERRUPTED:
            assert run.engine_id == victim
            assert victim in (run.error or "")


def test_a_database_restart_mid_burst_loses_and_repeats_nothing(
    pg_cluster: Cluster, postgres_db_url: str
) -> None:
    engines = [start_engine(postgres_db_url, f"engine-{n}") for n in range(2)]
    try:
        store = open_store(postgres_db_url)
        now = datetime.now(UTC)
        start = now + timedelta(seconds=1)
        jobs = [
            make_job(when=(start + timedelta(milliseconds=10 * i)).isoformat(), created_at=now)
            for i in range(JOBS)
        ]
        store.insert_jobs(jobs)
        store.close()
        time.sleep(2.0)
        pg_cluster.restart()
        store = open_store(postgres_db_url)
        try:
            runs = wait_settled(store, timeout=120)
        finally:
            store.close()
    finally:
        for engine in engines:
            stop(engine)
    per_job = Counter(run.job_id for run in runs)
    assert set(per_job) == {job.id for job in jobs}
    assert set(per_job.values()) == {1}
    assert {run.status for run in runs} <= {RunStatus.SUCCEEDED, RunStatus.INTERRUPTED}
