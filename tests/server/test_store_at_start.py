"""A server whose store cannot be opened at start: its API answers 503 with the reason, it opens
the store by itself once it can (a database restarted while the server started), and SIGTERM
stops it; a server whose jupyter_recall config jupyter_server refused answers 503 naming the
refusal, and SIGTERM stops it too."""

from __future__ import annotations

import json
import re
import time
import urllib.error
from functools import partial
from pathlib import Path

from jupyter_recall.server.app import REOPEN_EVERY
from tests.pg_cluster import Cluster
from tests.server.live_server import LiveServer, answers

FORMATTED = re.compile(r"^\S*\[[WE] [\d:. -]+ jupyter_recall\.[\w.]+\]", re.MULTILINE)
"""A line of a ``jupyter_recall.*`` logger as the server writes its own: ``[W 20:22:29.891
jupyter_recall.engine] ...`` (before, the bare message)."""


def refusal(live: LiveServer, path: str) -> tuple[int, str]:
    try:
        live.request("GET", path)
    except urllib.error.HTTPError as error:
        with error:
            return error.code, error.read().decode()
    raise AssertionError(f"{path} answered 200")


def test_a_store_that_opens_late_is_taken_up_and_the_server_stops_on_sigterm(
    tmp_path: Path, pg_cluster: Cluster
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    name = pg_cluster.new_database_name()
    live = LiveServer(
        root, tmp_path / "unused.sqlite", args=(f"--RecallApp.db_url={pg_cluster.url(name)}",)
    )
    live.start(ready="/api/status")
    try:
        code, text = refusal(live, "/api/recall/jobs")
        body = json.loads(text)
        assert code == 503
        assert "cannot open the store" in body["message"]
        assert name in body["message"]  # the database that does not exist (yet)
        pg_cluster.create_database(name)
        live.wait_for(lambda: answers(partial(live.request, "GET", "/api/recall/jobs")), timeout=60)
        job = live.request(
            "POST",
            "/api/recall/jobs",
            {"when": "in 1s", "action": {"type": "notification", "message": "late"}},
        )
        runs = live.wait_for(
            lambda: [
                run
                for run in live.request("GET", f"/api/recall/jobs/{job['id']}/runs")["runs"]
                if run["status"] == "succeeded"
            ],
            timeout=60,
        )
        assert len(runs) == 1
        # The database gone again: the package's own loggers say so in the server's format.
        pg_cluster.drop_database(name)
        live.wait_for(lambda: FORMATTED.search(live.log.read_text()), timeout=60)
    finally:
        started = time.monotonic()
        live.stop(timeout=30)  # raises, with the server's log, if SIGTERM does not stop it
        pg_cluster.drop_database(name)
    assert time.monotonic() - started < 30


def test_a_server_whose_recall_config_was_refused_says_why_and_stops_on_sigterm(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    # A misspelt scheme: jupyter_server logs the refusal and loads the extension all the same.
    args = ("--RecallApp.db_url=postgresq://nowhere/recall",)
    live = LiveServer(root, tmp_path / "unused.sqlite", args=args).start(ready="/api/status")
    try:
        # Before: a bare 404, and the sidebar could only guess the extension was not installed.
        code, text = refusal(live, "/api/recall/jobs")
        assert code == 503
        message = json.loads(text)["message"]
        assert message.startswith("jupyter_recall is not running: its configuration was refused")
        assert "RecallApp.db_url: unknown scheme 'postgresq'" in message
        # Nothing tries to open a store that URL cannot name (before, a task did after
        # REOPEN_EVERY, died, and its error was logged again at the stop).
        time.sleep(REOPEN_EVERY + 1)
    finally:
        live.stop(timeout=30)
    log = live.log.read_text()
    assert "jupyter_recall: not started: its configuration was refused" in log
    assert "not a URL" not in log
    assert "failed while stopping" not in log
    assert "has no attribute" not in log
