"""What the command says when the user is probably wrong: an unknown subcommand, and a schedule
that starts a fresh kernel more often than once a minute (real server, real command)."""

from __future__ import annotations

import pytest

from jupyter_recall.cli.app import SUBCOMMANDS
from jupyter_recall.cli.base import RecallCommand
from jupyter_recall.core.errors import PassedWhilePaused, PendingRecallExists


@pytest.mark.parametrize(
    ("typed", "meant"), [("lst", "list"), ("ad", "add"), ("trigerr", "trigger")]
)
def test_an_unknown_subcommand_suggests_the_nearest(cli, typed, meant):
    result = cli(typed)
    assert result.code == 2
    assert result.out == ""
    assert f"unknown subcommand '{typed}': did you mean '{meant}'?" in result.err
    assert ", ".join(SUBCOMMANDS) in result.err


def test_a_word_near_no_subcommand_lists_them_all(app):
    result = app("xyzzy")
    assert result.code == 2
    assert "unknown subcommand 'xyzzy': the subcommands are list, show, add" in result.err
    assert "did you mean" not in result.err


def test_a_second_pending_recall_says_how_to_cancel_the_first_here() -> None:
    # Whichever command meets it, the way to cancel is this command line's, not the kernel's.
    text = RecallCommand().describe(PendingRecallExists("nb.ipynb", "r1"))
    assert text == (
        "session 'nb.ipynb' already has a pending recall r1; cancel it first "
        "(jupyter recall cancel r1)"
    )


def test_a_one_shot_passed_while_paused_says_how_to_catch_up_here() -> None:
    # The server's words are REST's (catch_up=true): this command line says its own flag.
    passed = PassedWhilePaused("j1", "2030-01-01T00:00:00+00:00", hint="catch_up=true")
    assert RecallCommand().describe(passed) == (
        "job j1 was to run once at 2030-01-01T00:00:00+00:00, which passed while it was "
        "paused: resume it with catch-up (jupyter recall resume --catch-up j1) to run it now, "
        "or cancel it"
    )


def test_no_subcommand_asks_for_one(app):
    result = app()
    assert result.code == 2
    assert "give a subcommand: list, show, add" in result.err


def _added(app, server, *args):
    """`jupyter recall add ARGS --json`: the result, the job deleted at once (it would fire)."""
    result = app("add", *args, "--json")
    assert result.code == 0, result.err
    server.request("DELETE", f"/api/recall/jobs/{result.json()['id']}")
    return result


def test_a_fresh_kernel_more_than_once_a_minute_is_warned_about(app, server):
    result = _added(app, server, "every 10s", "x = 1")
    assert result.json()["target"]["type"] == "headless"
    assert "warning: this schedule starts a fresh kernel every 10 s" in result.err
    assert "more often than once a minute" in result.err
    # The warning is the server's: in its answer, for any client.
    (warning,) = result.json()["warnings"]
    assert f"jupyter recall add: {warning}" in result.err


def test_the_rest_answer_carries_the_warning_for_each_new_job(server):
    fresh = {"when": "every 20s", "action": {"type": "code", "code": "x = 1"}}
    fresh["target"] = {"type": "headless"}
    batch = {"jobs": [fresh, {**fresh, "when": "every 2m"}]}
    quick, slow = server.request("POST", "/api/recall/jobs", batch)["jobs"]
    read_back = server.request("GET", f"/api/recall/jobs/{quick['id']}")
    for job in (quick, slow):
        server.request("DELETE", f"/api/recall/jobs/{job['id']}")
    assert quick["warnings"][0].startswith(
        "warning: this schedule starts a fresh kernel every 20 s"
    )
    assert "warnings" not in slow
    assert "warnings" not in read_back  # said once, to whoever created it


@pytest.mark.parametrize(
    "args",
    [
        ("every minute", "x = 1"),  # once a minute is not more often
        ("every 10s", "x = 1", "--notebook", "live.ipynb"),  # a live kernel: no start per run
        ("in 10s", "x = 1"),  # one run
        ("every 10s", "--notify", "hello"),  # on the server
    ],
)
def test_no_warning_otherwise(app, server, args):
    result = _added(app, server, *args)
    assert "warning" not in result.err
    assert "warnings" not in result.json()
