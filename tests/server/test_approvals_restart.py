"""A server that stops or crashes while a tool job waits for approval: the record is withdrawn
(``expired``, a note saying why), at the stop itself or, after a crash, at the next start."""

from __future__ import annotations

import json
import signal
import sqlite3
import urllib.error
from pathlib import Path

import pytest

from tests.server.live_server import LiveServer

SHELL_JOB = {
    "when": "now",
    "action": {"type": "tool", "name": "shell.run", "params": {"command": "echo never"}},
}


def _servers(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root, config = tmp_path / "root", tmp_path / "config"
    root.mkdir()
    config.mkdir()
    settings = {"RecallApp": {"tool_policies": {"shell": "approve"}, "approval_timeout": 120}}
    (config / "jupyter_server_config.json").write_text(json.dumps(settings))
    return root, {"JUPYTER_CONFIG_DIR": str(config)}


def _pending(server: LiveServer) -> list[dict]:
    return server.request("GET", "/api/recall/approvals?status=pending")["approvals"]


def _stored(db: Path, approval_id: str) -> tuple[str, str | None]:
    with sqlite3.connect(db) as connection:
        row = connection.execute(
            "SELECT status, note FROM approvals WHERE id = ?", (approval_id,)
        ).fetchone()
    return row[0], row[1]


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGKILL], ids=["stop", "crash"])
def test_the_approval_of_a_run_cut_short_by_a_stop_or_a_crash_is_withdrawn(tmp_path, stop_signal):
    root, env = _servers(tmp_path)
    db = tmp_path / "recall.sqlite"
    server = LiveServer(root, db, env=env).start()
    try:
        server.request("POST", "/api/recall/jobs", SHELL_JOB)
        [record] = server.wait_for(lambda: _pending(server))
    finally:
        server.stop(stop_signal)
    withdrawn = f"withdrawn: {record['asked_by']} was "
    if stop_signal == signal.SIGTERM:
        # Withdrawn by the stop itself, not left pending in the store.
        status, note = _stored(db, record["id"])
        assert (status, note and note.startswith(withdrawn)) == ("expired", True), note

    server = LiveServer(root, db, port=server.port, env=env).start()
    try:
        path = f"/api/recall/approvals/{record['id']}"
        got = server.wait_for(
            lambda: (r := server.request("GET", path))["status"] != "pending" and r
        )
        assert got["status"] == "expired"
        assert got["note"].startswith(withdrawn)
        if stop_signal == signal.SIGKILL:
            assert got["note"] == f"{withdrawn}interrupted (its server stopped) before a decision"
        with pytest.raises(urllib.error.HTTPError) as late:
            server.request("POST", path, {"decision": "approve"})
        assert late.value.code == 409
        late.value.close()
    finally:
        server.stop()
