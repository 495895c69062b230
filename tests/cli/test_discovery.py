"""Which server `jupyter recall` talks to, and what it says when there is none."""

from __future__ import annotations

import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_recall.client.remote import ServerInfo, running_servers, token_for
from tests.cli.conftest import CliServer, jupyter_recall
from tests.server.live_server import TOKEN, free_port


def server_file(server: CliServer) -> Path:
    (found,) = server.runtime.glob("jpserver-*.json")
    return found


def write_server_file(directory: Path, pid: int, url: str, token: str = "x") -> Path:
    path = directory / f"jpserver-{pid}.json"
    path.write_text(json.dumps({"url": url, "token": token, "pid": pid, "root_dir": "/"}))
    return path


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_no_server_running(tmp_path):
    result = jupyter_recall("list", runtime=tmp_path)
    assert result.code == 3
    assert result.out == ""
    lines = result.err.splitlines()
    assert len(lines) == 1
    assert "no running Jupyter server with jupyter_recall found" in lines[0]
    assert str(tmp_path) in lines[0]  # where it looked
    assert "`jupyter lab` or `jupyter server`" in lines[0]  # how to fix
    assert "--url and --token" in lines[0]


def test_unreachable_url(tmp_path):
    url = f"http://127.0.0.1:{free_port()}/"
    result = jupyter_recall("runs", "--url", url, runtime=tmp_path)
    assert result.code == 3
    (line,) = result.err.splitlines()
    assert f"cannot use the Jupyter server at {url} (--url)" in line
    assert "Connection refused" in line
    from_env = jupyter_recall("runs", runtime=tmp_path, JUPYTER_RECALL_URL=url)
    assert from_env.code == 3
    assert "($JUPYTER_RECALL_URL)" in from_env.err


def test_url_and_token_from_options_or_environment(server, tmp_path):
    # An empty runtime directory: only what is given explicitly can work.
    options = jupyter_recall(
        "list", "--json", "--url", server.url, "--token", TOKEN, runtime=tmp_path
    )
    assert options.code == 0, options.err
    assert "jobs" in options.json()
    env = jupyter_recall(
        "list",
        "--json",
        runtime=tmp_path,
        JUPYTER_RECALL_URL=server.url,
        JUPYTER_RECALL_TOKEN=TOKEN,
    )
    assert env.code == 0, env.err
    wrong = jupyter_recall("list", "--url", server.url, "--token", "wrong", runtime=tmp_path)
    assert wrong.code == 3
    assert "it refused the token (Forbidden)" in wrong.err


def test_url_without_token_takes_the_runtime_files_token(app, server):
    localhost = server.url.replace("127.0.0.1", "localhost") + "/"
    result = app("list", "--json", "--url", localhost)
    assert result.code == 0, result.err


def test_the_server_with_the_extension_is_chosen(server, tmp_path, plain_jupyter):
    shutil.copy(server_file(server), tmp_path / server_file(server).name)
    write_server_file(tmp_path, dead_pid(), f"http://127.0.0.1:{free_port()}/")
    # Most recent, alive, but without jupyter_recall: tried first, passed over.
    newest = write_server_file(tmp_path, os.getpid(), plain_jupyter)
    os.utime(newest, (newest.stat().st_atime + 60, newest.stat().st_mtime + 60))
    result = jupyter_recall("list", "--json", runtime=tmp_path)
    assert result.code == 0, result.err
    assert "jobs" in result.json()


def test_no_server_with_the_extension_says_what_was_tried(tmp_path, plain_jupyter):
    write_server_file(tmp_path, os.getpid(), plain_jupyter)
    result = jupyter_recall("list", runtime=tmp_path)
    assert result.code == 3
    (line,) = result.err.splitlines()
    assert f"tried 1 server(s) from {tmp_path}: {plain_jupyter}" in line
    assert "does not have the jupyter_recall extension" in line


def test_running_servers_newest_first_without_the_dead(tmp_path):
    older = write_server_file(tmp_path, os.getppid(), "http://127.0.0.1:1/")
    newer = write_server_file(tmp_path, os.getpid(), "http://127.0.0.1:2/")
    write_server_file(tmp_path, dead_pid(), "http://127.0.0.1:3/")
    os.utime(older, (older.stat().st_atime, newer.stat().st_mtime - 10))
    found = running_servers(tmp_path)
    assert [info.url for info in found] == ["http://127.0.0.1:2/", "http://127.0.0.1:1/"]
    assert found[0].source == f"runtime file {newer}"


def test_token_for_the_same_server_however_written():
    known = [ServerInfo("http://127.0.0.1:8888/lab/", "secret", "file")]
    assert token_for("http://localhost:8888/lab", known) == "secret"
    assert token_for("http://127.0.0.1:8889/lab/", known) is None
    assert token_for("http://127.0.0.1:8888/", known) is None


class LoginPage(http.server.BaseHTTPRequestHandler):
    """What a login page or a proxy answers to any path: 200, HTML."""

    def do_GET(self) -> None:
        page = b"<html><body>Please log in</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def login_page() -> Iterator[str]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), LoginPage)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


def test_a_page_that_is_not_json_is_not_our_server(server, tmp_path, login_page):
    given = jupyter_recall("list", "--url", login_page, "--token", "x", runtime=tmp_path)
    assert given.code == 3
    (line,) = given.err.splitlines()
    assert f"cannot use the Jupyter server at {login_page} (--url)" in line
    assert "it does not answer as jupyter_recall (/api/recall/info answered text/html" in line
    # Found in the runtime directory, it is passed over for the one that answers.
    shutil.copy(server_file(server), tmp_path / server_file(server).name)
    newest = write_server_file(tmp_path, os.getpid(), login_page)
    os.utime(newest, (newest.stat().st_atime + 60, newest.stat().st_mtime + 60))
    found = jupyter_recall("list", "--json", runtime=tmp_path)
    assert found.code == 0, found.err
    assert "jobs" in found.json()
