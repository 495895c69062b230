"""Ids as the user types them: each travels as one escaped path segment, and a command given
several ids acts on every one of them, reporting each failure."""

from __future__ import annotations

import pytest

from jupyter_recall.client.remote import api_path
from tests.cli.conftest import CliServer

NOTE = {"when": "every day at 09:00", "action": {"type": "notification", "message": "ids"}}


def new_job(server: CliServer) -> str:
    return str(server.request("POST", "/api/recall/jobs", NOTE)["id"])


def kernel_count(server: CliServer) -> int:
    return len(server.request("GET", "/api/kernels"))


@pytest.mark.parametrize(
    "args",
    [
        ("show", "a b"),
        ("show", "x?y=1"),
        ("show", "a/b"),
        ("show", ".."),
        ("cancel", "../../../api/kernels?x="),
        ("pause", "../.."),
        ("logs", "../jobs"),
        ("logs", "r?x=1", "--follow"),
        ("approve", "../../kernels?x="),
    ],
)
def test_an_id_is_one_escaped_segment(app, server, args):
    kernels = kernel_count(server)
    result = app(*args)
    assert result.code == 1, (result.out, result.err)
    assert "Traceback" not in result.err
    (line,) = result.err.splitlines()
    # Named whole: as the id (a route of ids), or escaped in the path (a route that takes
    # none of its characters), never cut at "?" or resolved to another route.
    escaped = api_path(args[1]).rsplit("/", 1)[1]
    assert "%" in escaped
    assert f"{args[1]!r} not found" in line or f"/{escaped}" in line, line
    assert kernel_count(server) == kernels  # no other route was reached


def test_an_empty_id_is_refused(app):
    result = app("show", "")
    assert result.code == 2
    assert result.err.splitlines() == ["jupyter recall show: error: ID: is empty"]


def test_every_id_is_acted_on_and_each_failure_reported(app, server):
    first, second = new_job(server), new_job(server)
    result = app("pause", first, "nosuch", second)
    assert result.code == 1
    assert [
        server.request("GET", f"/api/recall/jobs/{ident}")["status"] for ident in (first, second)
    ] == [
        "paused",
        "paused",
    ]
    (line,) = result.err.splitlines()
    assert line.startswith("jupyter recall pause: error: nosuch: "), line
    assert len(result.out.splitlines()) == 2

    both = app("cancel", "nosuch1", first, "nosuch2")
    assert both.code == 1
    assert len(both.err.splitlines()) == 2
    assert server.request("GET", f"/api/recall/jobs/{first}")["status"] == "cancelled"

    fine = app("resume", second)
    assert (fine.code, fine.err) == (0, "")


def test_every_approval_id_is_decided(app):
    result = app("deny", "nosuch1", "nosuch2")
    assert result.code == 1
    assert [line.split(": error: ")[1].split(":")[0] for line in result.err.splitlines()] == [
        "nosuch1",
        "nosuch2",
    ]
