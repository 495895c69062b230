"""Bad command lines and bad input: one line naming the option and what it accepts, exit status 2,
never a traceback, and nothing done."""

from __future__ import annotations

import subprocess

import pytest

from tests.cli.conftest import JUPYTER, CliServer, cli_env, jupyter_recall


def one_error_line(err: str) -> str:
    assert "Traceback" not in err, err
    (line,) = err.splitlines()
    return line


def job_ids(server: CliServer) -> set[str]:
    return {job["id"] for job in server.request("GET", "/api/recall/jobs?limit=1000")["jobs"]}


@pytest.mark.parametrize(
    ("args", "typed", "meant"),
    [
        (("prune", "--dryrun=1"), "--dryrun", "--dry-run"),
        (("prune", "--dryrun"), "--dryrun", "--dry-run"),
        (("list", "--staus", "active"), "--staus", "--status"),
        (("add", "in 1h", "x = 1", "--notebok", "a.ipynb"), "--notebok", "--notebook"),
        (("add", "in 1h", "x = 1", "--timout", "5"), "--timout", "--timeout"),
        (("list", "--ListCommand.limt=3"), "--ListCommand.limt", "--ListCommand.limit"),
    ],
)
def test_an_unknown_option_is_refused_with_the_nearest_one(app, server, args, typed, meant):
    before = job_ids(server)
    result = app(*args)
    assert result.code == 2
    line = one_error_line(result.err)
    assert line.startswith(f"jupyter recall {args[0]}: error: unknown option {typed}:"), line
    assert f"did you mean {meant}?" in line
    assert result.out == ""
    assert job_ids(server) == before  # the command did not run


def test_an_unknown_option_with_nothing_near_and_the_documented_long_forms(app):
    result = app("list", "--colour=red")
    assert result.code == 2
    assert "unknown option --colour (--help lists the options)" in one_error_line(result.err)
    # Options of the classes of the command stay accepted in their long form (docs/cli.md).
    assert app("list", "--RecallCommand.timeout=20", "--json").code == 0


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("list", "--limit", "abc"), "--limit: expected a whole number, got 'abc'"),
        (("runs", "--limit=1.5"), "--limit: expected a whole number, got '1.5'"),
        (("add", "in 1h", "x = 1", "--timeout", "abc"), "--timeout: expected a number, got 'abc'"),
        (("list", "--limit", "1", "--limit", "2"), "--limit: given 2 times; give it once"),
        (
            ("migrate", "--from=sqlite:///a", "--to=sqlite:///b", "--batch", "x"),
            "--batch: expected a whole number, got 'x'",
        ),
    ],
)
def test_a_value_of_the_wrong_type_names_its_option(app, args, expected):
    result = app(*args)
    assert result.code == 2
    assert one_error_line(result.err) == f"jupyter recall {args[0]}: error: {expected}"


@pytest.mark.parametrize("since", ["999999999d", "0001-01-01", "9999-12-31T23:59"])
def test_runs_since_out_of_the_calendar(cli, since):
    # West of UTC, the last minute of the calendar in local time is past it in UTC.
    result = cli("runs", "--since", since, TZ="America/New_York")
    assert result.code == 2
    line = one_error_line(result.err.split("\naccepted")[0])
    assert f"--since: out of the calendar's range (years 1 to 9999): {since!r}" in line


def test_runs_since_at_the_edge_of_the_calendar_still_works(app):
    assert app("runs", "--since", "0002-01-01", "--json").code == 0


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("list", "--timeout", "-1"), "--timeout: must be a number of seconds above 0, got -1"),
        (("list", "--timeout", "0"), "--timeout: must be a number of seconds above 0, got 0"),
        (
            ("add", "in 1h", "x = 1", "--RecallCommand.timeout=0"),
            "--RecallCommand.timeout: must be a number of seconds above 0, got 0",
        ),
    ],
)
def test_a_wait_of_zero_or_less_is_refused(app, args, expected):
    result = app(*args)
    assert result.code == 2
    assert one_error_line(result.err) == f"jupyter recall {args[0]}: error: {expected}"


def test_a_url_that_is_not_one_names_where_it_came_from(app, cli, tmp_path):
    result = app("list", "--url", "not a url")
    assert result.code == 2
    line = one_error_line(result.err)
    assert "--url: not the http(s) URL of a Jupyter server: 'not a url'" in line
    assert "http://HOST:PORT/" in line
    bad_port = app("list", "--url", "http://127.0.0.1:99999/")
    assert bad_port.code == 2
    assert "--url: Port out of range" in one_error_line(bad_port.err)
    from_env = cli("list", JUPYTER_RECALL_URL="ftp://example.org/")
    assert from_env.code == 2
    assert "$JUPYTER_RECALL_URL: not the http(s) URL" in one_error_line(from_env.err)
    # One from a config file is named as such, not as --url.
    config = tmp_path / "config"
    config.mkdir()
    (config / "jupyter_recall_cli_config.py").write_text('c.RecallCommand.url = "nowhere"\n')
    from_file = cli("list", JUPYTER_CONFIG_DIR=str(config))
    assert from_file.code == 2
    line = one_error_line(from_file.err)
    assert "error: RecallCommand.url in jupyter_recall_cli_config.py: not the http(s) URL" in line


def test_limits_and_statuses_say_what_the_command_line_accepts(app):
    negative = app("list", "--limit", "-5")
    assert negative.code == 2
    assert one_error_line(negative.err) == (
        "jupyter recall list: error: --limit: must be 0 (all) or a whole number above 0 "
        "(as many), got -5"
    )
    assert app("runs", "--limit", "-1").code == 2
    search = app("list", "--search", "x" * 300)
    assert search.code == 2
    line = one_error_line(search.err)
    assert line.startswith("jupyter recall list: error: --search: "), line
    status = app("approvals", "--status", "bogus")
    assert status.code == 2
    line = one_error_line(status.err)
    assert "--status: unknown status 'bogus'" in line
    assert "pending, approved, denied, expired, all" in line


def test_timeout_policy_range_and_message_agree(app):
    negative = app("add", "in 1h", "x = 1", "--timeout", "-1")
    zero = app("add", "in 1h", "x = 1", "--timeout", "0")
    assert (negative.code, zero.code) == (2, 2)
    assert "timeout: must be above 0 and at most 316,224,000, got -1" in negative.err
    assert "above 0" in zero.err
    assert "from 0" not in negative.err + zero.err


def test_on_missing_kernel_needs_a_notebook(app, server):
    before = job_ids(server)
    result = app("add", "in 3h", "x = 1", "--on-missing-kernel", "start")
    assert result.code == 2
    line = one_error_line(result.err)
    assert "--on-missing-kernel" in line
    assert "--notebook" in line
    assert job_ids(server) == before
    kept = app("add", "in 3h", "x = 1", "--notebook", "n.ipynb", "--on-missing-kernel", "start")
    assert kept.code == 0, kept.err


def test_code_on_stdin_must_be_utf8(server):
    done = subprocess.run(
        [JUPYTER, "recall", "add", "in 1h", "-"],
        input=b"print('caf\xe9')\n",
        capture_output=True,
        env=cli_env(server.runtime),
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    line = one_error_line(done.stderr.decode())
    assert "ACTION: standard input is not UTF-8 text (byte 0xe9 at offset 10)" in line
    assert "surrogate" not in line
    fine = subprocess.run(
        [JUPYTER, "recall", "add", "in 1h", "-", "--json"],
        input="print('café')\n".encode(),
        capture_output=True,
        env=cli_env(server.runtime),
        timeout=60,
        check=False,
    )
    assert fine.returncode == 0, fine.stderr
    assert b"caf\\u00e9" in fine.stdout or "café".encode() in fine.stdout


@pytest.mark.parametrize(
    ("option", "expected"),
    [
        ("--root=/nonexistent", "--root: '/nonexistent' is not a directory"),
        ("--gateway-url=not a url", "--gateway-url: not the http(s) URL of a kernel gateway"),
    ],
)
def test_the_scheduler_checks_its_places_before_starting(tmp_path, option, expected):
    store = tmp_path / "recall.sqlite"
    done = jupyter_recall("scheduler", f"--db-url=sqlite:///{store}", option, runtime=tmp_path)
    assert done.code == 2
    assert one_error_line(done.err).startswith(f"jupyter recall scheduler: error: {expected}")
    assert not store.exists()  # refused before the store was opened


def test_a_filter_too_long_for_a_url_names_its_option(app):
    # Sent as is, the server would drop the request line and the CLI would say it cannot reach it.
    result = app("list", "--search", "x" * 70_000)
    assert result.code == 2
    line = one_error_line(result.err)
    assert line.startswith("jupyter recall list: error: --search: makes the request's URL"), line
    # Just under the bound, the request reaches the server, which names the bound it keeps.
    reached = app("list", "--search", "x" * 55_000)
    assert reached.code == 2
    assert "--search: at most 200 characters" in one_error_line(reached.err)


@pytest.mark.parametrize(
    "args",
    [
        ("runs", "--since", "-5m", "--json"),
        ("list", "--search", "-1", "--json"),
        ("list", "--search", "--x", "--json"),
    ],
)
def test_a_value_starting_with_a_dash_follows_its_option(app, args):
    result = app(*args)
    assert result.code == 0, result.err
    assert "usage" not in result.err.lower()


@pytest.mark.parametrize(
    ("args", "option"),
    [(("list", "--search"), "--search"), (("runs", "--since", "--json"), "--since")],
)
def test_an_option_without_its_value_is_one_line(app, args, option):
    result = app(*args)
    assert result.code == 2
    assert one_error_line(result.err) == (
        f"jupyter recall {args[0]}: error: {option}: expected a value "
        f"(one starting with '-' is written {option}=-VALUE)"
    )


@pytest.mark.parametrize("value", ["1e309", "nan", "-inf"])
def test_a_number_that_is_not_finite_names_its_option(app, server, value):
    before = job_ids(server)
    result = app("add", "in 1h", "print(1)", "--timeout", value)
    assert result.code == 2
    assert one_error_line(result.err) == (
        f"jupyter recall add: error: --timeout: expected a finite number, got {value!r}"
    )
    assert job_ids(server) == before
    backoff = app("add", "in 1h", "x = 1", "--retries=1", f"--retry-backoff={value}")
    assert "--retry-backoff: expected a finite number" in one_error_line(backoff.err)
