"""A store the standalone scheduler cannot open at start is one line and exit status 3 (the
command line's status for what it cannot reach), not a traceback; a SQLite file whose directory
does not exist is one (it is not made)."""

from __future__ import annotations

import socket
from pathlib import Path

from jupyter_recall.store.urls import sqlite_url
from tests.standalone.scheduler_process import run_scheduler_command


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_postgresql_server_that_does_not_answer_is_one_line(tmp_path: Path):
    url = f"postgresql://nobody:pw@127.0.0.1:{free_port()}/recall"
    result = run_scheduler_command(tmp_path, f"--db-url={url}")
    assert result.returncode == 3, result.stderr
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("jupyter recall scheduler: error: cannot open the store: "), line
    assert ":pw@" not in result.stderr, "the password is not shown"


def test_a_sqlite_file_in_a_directory_that_does_not_exist_is_refused(tmp_path: Path):
    # A typo in the path must not start the scheduler on a new, empty store.
    db = tmp_path / "no" / "such" / "dir" / "jobs.sqlite"
    result = run_scheduler_command(tmp_path, f"--db-url={sqlite_url(db)}")
    assert result.returncode == 3, result.stderr[-2000:]
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("jupyter recall scheduler: error: cannot open the store: "), line
    assert str(db) in line
    assert "does not exist" in line
    assert not (tmp_path / "no").exists(), "no directory was made"
