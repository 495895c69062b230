"""Finding the server without configuration, and saying clearly what is wrong when we can't."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jupyter_recall import ConflictError, NotFoundError, ParseError, ValidationError
from jupyter_recall.core.errors import PendingRecallExists, UnknownServerTool
from jupyter_recall.kernel.connection.client import (
    Client,
    RecallConnectionError,
    ServerInfo,
    ancestor_pids,
    api_path_from_session_name,
    discover_server,
    error_from_response,
    kernel_id_from_connection_file,
)
from jupyter_recall.kernel.connection.notifications import parse_sse
from tests.server.live_server import free_port


def write_server_file(directory: Path, pid: int, url: str, token: str = "secret") -> Path:
    path = directory / f"jpserver-{pid}.json"
    path.write_text(
        json.dumps({"url": url, "token": token, "root_dir": "/srv/notebooks", "pid": pid})
    )
    return path


def test_ancestors_start_with_the_parent():
    ancestors = ancestor_pids()
    assert ancestors[0] == os.getppid()
    assert os.getpid() not in ancestors


def test_the_ancestors_end_with_pid_1():
    # Before, PID 1 was left out: a kernel of a server that is PID 1 (a container whose command
    # is `jupyter lab`) did not find the server's runtime file.
    ancestors = ancestor_pids(limit=100)
    assert ancestors[-1] == 1, ancestors
    assert ancestor_pids(1) == []


def test_a_server_that_is_pid_1_is_found_as_the_kernels_parent(tmp_path):
    # A process whose parent is PID 1, as a kernel's is when the server is PID 1.
    orphan = [os.getpid(), *ancestor_pids(limit=100)][-2]
    write_server_file(tmp_path, 1, "http://127.0.0.1:8888/")
    info = discover_server({}, runtime=tmp_path, pid=orphan)
    assert info.url == "http://127.0.0.1:8888/"
    assert info.source.endswith("jpserver-1.json"), info.source


def test_runtime_file_of_the_parent_process(tmp_path):
    write_server_file(tmp_path, os.getppid(), "http://127.0.0.1:8888/")
    write_server_file(tmp_path, 999_999_999, "http://127.0.0.1:9999/")  # not ours
    info = discover_server({}, runtime=tmp_path)
    assert info.url == "http://127.0.0.1:8888/"
    assert info.token == "secret"
    assert info.root_dir == "/srv/notebooks"
    assert f"jpserver-{os.getppid()}.json" in info.source


def test_a_grandparent_server_is_found(tmp_path):
    # A kernel started through a wrapper (nanny, provisioner script) is a grandchild.
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        write_server_file(tmp_path, os.getpid(), "http://127.0.0.1:7777/")
        info = discover_server({}, runtime=tmp_path, pid=child.pid)
        assert info.url == "http://127.0.0.1:7777/"
    finally:
        child.kill()
        child.wait()


def test_environment_wins(tmp_path):
    write_server_file(tmp_path, os.getppid(), "http://127.0.0.1:8888/")
    env = {"JUPYTER_RECALL_URL": "http://10.0.0.1:9000/base/", "JUPYTER_RECALL_TOKEN": "t0k"}
    info = discover_server(env, runtime=tmp_path)
    assert (info.url, info.token, info.source) == (
        "http://10.0.0.1:9000/base/",
        "t0k",
        "$JUPYTER_RECALL_URL",
    )
    only_token = discover_server({"JUPYTER_RECALL_TOKEN": "t0k"}, runtime=tmp_path)
    assert (only_token.url, only_token.token) == ("http://127.0.0.1:8888/", "t0k")


def test_no_server_says_where_it_looked_and_what_to_set(tmp_path):
    with pytest.raises(RecallConnectionError) as caught:
        discover_server({}, runtime=tmp_path)
    message = str(caught.value)
    assert str(tmp_path) in message
    assert "JUPYTER_RECALL_URL" in message
    assert "jpserver-<pid>.json" in message


def test_kernel_id_and_notebook_path():
    assert kernel_id_from_connection_file("/run/kernel-5a1b-77.json") == "5a1b-77"
    assert kernel_id_from_connection_file("/run/other.json") is None
    assert kernel_id_from_connection_file(None) is None
    assert api_path_from_session_name("dir/nb.ipynb", "/srv") == "dir/nb.ipynb"
    assert api_path_from_session_name("/srv/dir/nb.ipynb", "/srv") == "dir/nb.ipynb"
    assert api_path_from_session_name("/elsewhere/nb.ipynb", "/srv") is None
    assert api_path_from_session_name(None, "/srv") is None


def test_server_errors_become_domain_errors():
    parse = error_from_response(
        400,
        {
            "message": "when: cannot parse 'x'",
            "reason": "ParseError",
            "field": "when",
            "accepted": ["30m"],
        },
        url="u",
    )
    assert isinstance(parse, ParseError)
    assert (str(parse), parse.field, parse.accepted) == ("when: cannot parse 'x'", "when", ("30m",))
    bad = error_from_response(
        400, {"message": "tz: unknown", "reason": "ValidationError", "field": "tz"}, url="u"
    )
    assert isinstance(bad, ValidationError)
    assert not isinstance(bad, ParseError)
    assert (bad.field, str(bad)) == ("tz", "tz: unknown")
    missing = error_from_response(
        404, {"message": "job 'x' not found", "reason": "NotFoundError"}, url="u"
    )
    assert isinstance(missing, NotFoundError)
    assert str(missing) == "job 'x' not found"
    clash = error_from_response(
        409, {"message": "already pending", "reason": "ConflictError"}, url="u"
    )
    assert isinstance(clash, ConflictError)
    assert not isinstance(clash, PendingRecallExists)
    assert isinstance(
        error_from_response(403, {"message": "Forbidden"}, url="u"), RecallConnectionError
    )


def test_structured_refusals_come_back_as_their_subclass() -> None:
    message = "session 'nb.ipynb' already has a pending recall r1; cancel it first"
    pending = {"session": "nb.ipynb", "recall_id": "r1"}
    body = {"message": message, "reason": "PendingRecallExists", "pending_recall": pending}
    clash = error_from_response(409, body, url="u")
    assert isinstance(clash, PendingRecallExists)
    assert (clash.session, clash.recall_id, str(clash)) == ("nb.ipynb", "r1", message)
    # Each surface adds its own way to cancel the pending one, from the fields.
    assert str(clash.hinted("%recall cancel r1")) == f"{message} (%recall cancel r1)"
    # Without its fields (a server of another version), a plain conflict with the message.
    for broken in (None, {"session": "nb.ipynb"}, {"session": 1, "recall_id": "r1"}):
        other = error_from_response(409, {**body, "pending_recall": broken}, url="u")
        assert type(other) is ConflictError
        assert str(other) == message
    text = "tool: unknown tool 'a.b' on the server; a user tool is watched in its kernel"
    unknown = error_from_response(
        400,
        {
            "message": text,
            "reason": "UnknownServerTool",
            "field": "tool",
            "accepted": ["filesystem.read"],
            "unknown_tool": "a.b",
        },
        url="u",
    )
    assert isinstance(unknown, UnknownServerTool)
    assert (unknown.tool, unknown.field, unknown.accepted) == ("a.b", "tool", ("filesystem.read",))
    assert str(unknown) == text
    plain = error_from_response(
        400, {"message": text, "reason": "UnknownServerTool", "field": "tool"}, url="u"
    )
    assert type(plain) is ValidationError


def test_server_without_the_extension(plain_jupyter):
    client = Client(ServerInfo(plain_jupyter, "", "test"))
    with pytest.raises(RecallConnectionError, match="does not have the jupyter_recall extension"):
        client.info()
    with pytest.raises(RecallConnectionError, match="does not have the jupyter_recall extension"):
        client.request("GET", "/api/recall/jobs")


def test_nothing_listening():
    url = f"http://127.0.0.1:{free_port()}/"
    client = Client(ServerInfo(url, "", "$JUPYTER_RECALL_URL"), timeout=2)
    with pytest.raises(RecallConnectionError) as caught:
        client.request("GET", "/api/recall/jobs")
    assert f"cannot reach the Jupyter server at {url}" in str(caught.value)
    assert "$JUPYTER_RECALL_URL" in str(caught.value)


def test_sse_parsing():
    lines = [
        "event: open",
        'data: {"ok": true}',
        "",
        ": heartbeat",
        "",
        "event: run.finished",
        'data: {"a":',
        "data: 1}",
        "",
        "data: plain",
        "",
    ]
    assert list(parse_sse(lines)) == [
        ("open", '{"ok": true}'),
        ("run.finished", '{"a":\n1}'),
        ("message", "plain"),
    ]


def test_import_is_cheap():
    code = (
        "import sys, jupyter_recall\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in "
        "('IPython', 'jupyter_server', 'ipykernel', 'tornado') "
        "or m.startswith('jupyter_recall.kernel')]\n"
        "print(heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
