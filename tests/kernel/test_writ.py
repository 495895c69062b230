"""The writ syntax of the magics: `[options] <when>: <what>`, split at the first ': '."""

from __future__ import annotations

import re

import pytest

from jupyter_recall import ParseError, ValidationError
from jupyter_recall.kernel.magics.writ import (
    COMMAND_OPTIONS,
    RECALL_OPTIONS,
    SCHEDULE_COMMAND_OPTIONS,
    SCHEDULE_OPTIONS,
    SUBCOMMANDS_RECALL,
    SUBCOMMANDS_SCHEDULE,
    Command,
    named_as_typed,
    parse_command,
    parse_writ,
    split_arguments,
    split_writ,
)


@pytest.mark.parametrize(
    ("line", "head", "body"),
    [
        ("in 30m: print(df.shape)", "in 30m", "print(df.shape)"),
        ("every monday at 09:00: run()", "every monday at 09:00", "run()"),
        ("at 09:00:30: x = 1", "at 09:00:30", "x = 1"),
        ("2026-06-01T12:00:00+02:00: go()", "2026-06-01T12:00:00+02:00", "go()"),
        ("in 5m: d = {'a': 1}; print(d['a'])", "in 5m", "d = {'a': 1}; print(d['a'])"),
        ("in 5m:   spaced()", "in 5m", "spaced()"),
        ("every day at 9:00:", "every day at 9:00", ""),
        ("--name 'a: b' in 5m: code()", "--name 'a: b' in 5m", "code()"),
        ("aujourd'hui à 18h: dîner()", "aujourd'hui à 18h", "dîner()"),
    ],
)
def test_split_at_first_colon_space(line, head, body):
    assert split_writ(line) == (head, body)


@pytest.mark.parametrize("line", ["every monday at 09:00", "in 30m:print(x)", ""])
def test_no_separator(line):
    assert split_writ(line) is None


def test_options_anywhere_before_the_separator():
    writ = parse_writ(
        "--headless --name 'nightly report' every day at 09:00 --max-runs 3 --tz=Europe/Paris "
        "--timeout 2.5 --retries 2 --retry-backoff 5: f()",
        None,
        SCHEDULE_OPTIONS,
        "code",
    )
    assert writ.when == "every day at 09:00"
    assert writ.body == "f()"
    assert writ.options == {
        "headless": True,
        "name": "nightly report",
        "max_runs": 3,
        "tz": "Europe/Paris",
        "timeout": 2.5,
        "retries": 2,
        "retry_backoff": 5.0,
    }


def test_a_retry_backoff_may_be_zero_as_in_rest():
    writ = parse_writ("--retries 3 --retry-backoff 0 in 5m: f()", None, SCHEDULE_OPTIONS, "code")
    assert writ.options == {"retries": 3, "retry_backoff": 0.0}


def test_negative_offset_is_a_value():
    writ = parse_writ("--tz -05:00 tomorrow at 9am: f()", None, RECALL_OPTIONS, "instruction")
    assert writ.options == {"tz": "-05:00"}
    assert writ.when == "tomorrow at 9am"


def test_cell_body_is_the_code():
    writ = parse_writ(
        "--exclusive every monday at 09:00", "x = 1\nprint(x)\n", SCHEDULE_OPTIONS, "code"
    )
    assert writ == type(writ)(
        when="every monday at 09:00", body="x = 1\nprint(x)\n", options={"exclusive": True}
    )
    # A trailing ':' on the magic line is allowed.
    assert parse_writ("in 5m:", "go()", SCHEDULE_OPTIONS, "code").body == "go()"
    # An empty cell with the code on the line is a one-liner.
    assert parse_writ("in 5m: go()", "", SCHEDULE_OPTIONS, "code").body == "go()"


@pytest.mark.parametrize(
    ("line", "cell", "field", "words"),
    [
        ("--bogus in 5m: f()", None, "--bogus", "accepted: --headless"),
        ("--max-runs many in 5m: f()", None, "--max-runs", "positive integer"),
        ("--timeout 0 in 5m: f()", None, "--timeout", "above 0"),
        ("--timeout soon in 5m: f()", None, "--timeout", "number of seconds"),
        ("--retries two in 5m: f()", None, "--retries", "an integer of 0 or more, got 'two'"),
        ("--max-runs 0 in 5m: f()", None, "--max-runs", "a positive integer, got '0'"),
        ("--pause-after-failures 0 in 5m: f()", None, "--pause-after-failures", "positive"),
        ("--retry-backoff -1 in 5m: f()", None, "--retry-backoff", "0 or more"),
        ("--retry-backoff soon in 5m: f()", None, "--retry-backoff", "number of seconds"),
        ("in 5m --name: f()", None, "--name", "needs a value"),
        ("--headless=yes in 5m: f()", None, "--headless", "takes no value"),
        (": f()", None, "when", "missing"),
        ("--headless: f()", None, "when", "missing"),
        ("in 5m print(x)", None, "code", "missing ': '"),
        ("in 5m:", None, "code", "nothing to schedule"),
        ("in 5m: f()", "g()", "code", "not both"),
        ("in 5m", "   \n", "code", "cell is empty"),
    ],
)
def test_usage_errors_name_the_part(line, cell, field, words):
    with pytest.raises(ValidationError) as caught:
        parse_writ(line, cell, SCHEDULE_OPTIONS, "code")
    assert caught.value.field == field
    assert words in str(caught.value)


@pytest.mark.parametrize(
    ("field", "named"),
    [
        ("max_runs", "--max-runs"),
        ("policies.keep_runs_for", "--keep-runs-for"),
        ("options.on_missing_kernel", "--on-missing-kernel"),
        ("target", "target"),  # no option fills it: as the API named it
    ],
)
def test_an_error_of_the_api_names_the_option_the_user_typed(field, named):
    with pytest.raises(ValidationError) as raised, named_as_typed(SCHEDULE_OPTIONS):
        raise ValidationError(field, "no good", accepted=("a",))
    typed = raised.value
    assert (typed.field, str(typed)) == (named, f"{named}: no good (accepted: a)")


def test_a_time_that_cannot_be_read_stays_a_parse_error_of_when():
    error = ParseError("whenever", "not a recognised time expression")
    with pytest.raises(ParseError) as raised, named_as_typed(SCHEDULE_OPTIONS):
        raise error
    assert raised.value is error


@pytest.mark.parametrize(
    ("line", "names", "options_of", "message"),
    [
        (
            "cancel --all 3f9c2a1b7d0e",
            SUBCOMMANDS_SCHEDULE,
            SCHEDULE_COMMAND_OPTIONS,
            "--all: goes with list: %schedule list --all",
        ),
        (
            "list --catch-up",
            SUBCOMMANDS_SCHEDULE,
            SCHEDULE_COMMAND_OPTIONS,
            "--catch-up: goes with resume: %schedule resume --catch-up <id>",
        ),
        (
            "cancel --colour red 3f9c2a1b7d0e",
            SUBCOMMANDS_SCHEDULE,
            SCHEDULE_COMMAND_OPTIONS,
            "--colour: unknown option: cancel takes none",
        ),
        ("list --all", SUBCOMMANDS_RECALL, {}, "--all: unknown option: list takes none"),
    ],
)
def test_a_subcommand_refuses_the_options_of_another(line, names, options_of, message):
    with pytest.raises(ValidationError, match=re.escape(message)):
        parse_command(line, names, options_of)


def test_recall_refuses_target_options():
    with pytest.raises(ValidationError, match="accepted: --tz, --name, --max-runs"):
        parse_writ("--headless in 5m: do it", None, RECALL_OPTIONS, "instruction")


def test_subcommands():
    assert parse_command("list", SUBCOMMANDS_SCHEDULE, SCHEDULE_COMMAND_OPTIONS) == Command("list")
    assert parse_command("list --all", SUBCOMMANDS_SCHEDULE, SCHEDULE_COMMAND_OPTIONS) == Command(
        "list", None, {"all": True}
    )
    assert parse_command(
        "cancel 3f9c2a1b7d0e", SUBCOMMANDS_SCHEDULE, SCHEDULE_COMMAND_OPTIONS
    ) == Command("cancel", "3f9c2a1b7d0e")
    assert parse_command("cancel", SUBCOMMANDS_RECALL, {}) == Command("cancel")
    # A writ is never a subcommand, even when its code starts like one.
    assert parse_command("in 5m: list", SUBCOMMANDS_SCHEDULE, SCHEDULE_COMMAND_OPTIONS) is None
    assert (
        parse_command("every day at 09:00", SUBCOMMANDS_SCHEDULE, SCHEDULE_COMMAND_OPTIONS) is None
    )
    with pytest.raises(ValidationError, match="at most one job id"):
        parse_command("cancel a b", SUBCOMMANDS_SCHEDULE, SCHEDULE_COMMAND_OPTIONS)


def test_a_braced_id_is_one_argument_as_typed():
    line = "resume {ids['my job: 1']} --catch-up"
    assert parse_command(line, SUBCOMMANDS_SCHEDULE, SCHEDULE_COMMAND_OPTIONS) == Command(
        "resume", "{ids['my job: 1']}", {"catch_up": True}
    )
    words, options = split_arguments('--all { w["a b"] } x', COMMAND_OPTIONS)
    assert (words, dict(options)) == (['{ w["a b"] }', "x"], {"all": True})
    # Braces inside a word are no id of their own; a writ's code keeps its braces.
    assert split_arguments("a{b c}", ()) == (["a{b", "c}"], {})
    assert (
        parse_command("in 5m: x = {1: 2}", SUBCOMMANDS_SCHEDULE, SCHEDULE_COMMAND_OPTIONS) is None
    )


@pytest.mark.parametrize(
    ("line", "cell", "magic", "message"),
    [
        ("", "body", "recall", "write the time on the magic's line, e.g. '%%recall in 30m'"),
        ("--name x", "body", "schedule", "e.g. '%%schedule in 30m'"),
        ("--name x", None, "recall", "write '<when>: <instruction>', e.g. 'in 30m: ...'"),
        ("--name x: go", "", "recall", "write '<when>: <instruction>'"),
    ],
)
def test_a_missing_time_is_asked_for_where_the_magic_takes_it(line, cell, magic, message):
    with pytest.raises(ValidationError) as caught:
        parse_writ(line, cell, RECALL_OPTIONS, "instruction", magic=magic)
    assert str(caught.value).startswith("when: missing: ")
    assert message in str(caught.value)
