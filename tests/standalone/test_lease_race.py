"""Two schedulers started at the same instant under one engine id: one runs, the other refuses
(exit status 2), however their lease checks meet.

Deterministic on PostgreSQL: the test locks the ``leases`` table until both processes wait on
it, at the first statement either makes about the lease, then lets both go at once.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from jupyter_recall.standalone.app import LEASE_SECONDS, RENEWAL_MARGIN
from jupyter_recall.store.urls import open_store

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

WAITING_ON_LEASES = (
    "SELECT count(*) FROM pg_locks WHERE relation = 'leases'::regclass AND NOT granted"
)


def start_scheduler(db_url: str, root: Path, log: Path) -> subprocess.Popen[bytes]:
    bin_dir = Path(sys.executable).parent
    command = [
        str(bin_dir / "jupyter"),
        "recall",
        "scheduler",
        f"--db-url={db_url}",
        f"--root={root}",
        "--engine-id=twin",
        "--RecallScheduler.default_timezone=UTC",
        "--log-level=DEBUG",
    ]
    env = {**os.environ, "JUPYTER_PLATFORM_DIRS": "1"}
    with log.open("wb") as out:
        return subprocess.Popen(command, stdout=out, stderr=out, env=env, cwd=root)


def wait_for(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def test_two_schedulers_started_at_once_under_one_engine_id_one_runs(
    tmp_path: Path, postgres_db_url: str
):
    open_store(postgres_db_url).close()  # migrated: the processes' first use of leases is theirs
    root = tmp_path / "root"
    root.mkdir()
    logs = [tmp_path / "first.log", tmp_path / "second.log"]
    processes: list[subprocess.Popen[bytes]] = []
    try:
        with (
            psycopg.connect(postgres_db_url, autocommit=True) as watcher,
            psycopg.connect(postgres_db_url) as holder,
        ):
            holder.execute("LOCK TABLE leases IN ACCESS EXCLUSIVE MODE")
            processes = [start_scheduler(postgres_db_url, root, log) for log in logs]

            def both_wait() -> bool:
                row = watcher.execute(WAITING_ON_LEASES).fetchone()
                return row is not None and row[0] == 2

            assert wait_for(both_wait, 60), "both schedulers wait on the leases table"
            holder.rollback()  # both go on at once
        # The one that lost waits for the winner's next renewal, sees it and refuses.
        wait = LEASE_SECONDS / 3 + RENEWAL_MARGIN + 20
        wait_for(lambda: any(p.poll() is not None for p in processes), wait)
        time.sleep(1)
        codes = sorted((p.poll() for p in processes), key=lambda code: code is None)
        texts = {log.name: log.read_text() for log in logs}
        assert codes == [2, None], texts
        (refused,) = (log for p, log in zip(processes, logs, strict=True) if p.poll() == 2)
        assert "engine id 'twin' is in use" in refused.read_text()
        assert "jobs in" not in refused.read_text()
    finally:
        for process in processes:
            if process.poll() is None:
                process.terminate()
                assert process.wait(60) == 0
