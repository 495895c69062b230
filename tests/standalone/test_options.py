"""RecallScheduler's options: bad values are refused naming the option and what is accepted."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from traitlets import TraitError

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.standalone.app import RecallScheduler
from tests.standalone.scheduler_process import run_scheduler_command


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("db_url", "mysql://x/y", r"RecallScheduler\.db_url"),
        ("default_timezone", "Mars/Olympus", r"RecallScheduler\.default_timezone"),
        ("max_concurrent_runs", 0, r"RecallScheduler\.max_concurrent_runs must be >= 1, got 0"),
        ("max_sleep", 0, r"RecallScheduler\.max_sleep must be a positive number"),
        ("live_kernel_grace", -1, r"RecallScheduler\.live_kernel_grace must be a positive"),
        ("notification_channels", {"ops": {"type": "pager"}}, r"RecallScheduler\.notification"),
        ("default_timeout", 0, r"RecallScheduler\.default_timeout must be above 0"),
        ("keep_runs", -1, r"RecallScheduler\.keep_runs: must be from 0"),
        ("keep_runs_for", "soon", r"RecallScheduler\.keep_runs_for: not a duration"),
        ("prune_interval", 0, r"RecallScheduler\.prune_interval must be a positive"),
        ("engine_id", " ", r"RecallScheduler\.engine_id must name this scheduler, got ' '"),
        ("approval_timeout", 0, r"RecallScheduler\.approval_timeout must be a positive"),
    ],
)
def test_a_bad_option_is_refused_naming_it(option, value, message):
    with pytest.raises(TraitError, match=message):
        RecallScheduler(**{option: value})


def test_the_default_timeout_is_none_unless_set():
    assert RecallScheduler().default_timeout is None
    assert RecallScheduler(default_timeout=90).default_timeout == 90.0


def test_without_a_store_the_command_says_how_to_give_one(tmp_path: Path):
    result = run_scheduler_command(tmp_path)
    assert refusal(result) == (
        "jupyter recall scheduler: error: --db-url: give the store: --db-url sqlite:///PATH or "
        "postgresql://..."
    )


def test_a_private_in_memory_store_is_refused(tmp_path: Path):
    result = run_scheduler_command(tmp_path, "--db-url=sqlite:///:memory:")
    line = refusal(result)
    assert line.startswith("jupyter recall scheduler: error: RecallScheduler.db_url: "), line
    assert "private, empty store" in line


def test_at_the_default_log_level_it_says_it_runs_and_on_which_store(tmp_path: Path):
    db = tmp_path / "recall.sqlite"
    jupyter = Path(sys.executable).parent / "jupyter"
    command = [str(jupyter), "recall", "scheduler", f"--db-url=sqlite://{db}", "--engine-id=e1"]
    env = {"PATH": str(jupyter.parent), "JUPYTER_PLATFORM_DIRS": "1", "HOME": str(tmp_path)}
    with subprocess.Popen(
        command, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=env
    ) as process:
        assert process.stderr is not None
        first = process.stderr.readline()
        process.send_signal(signal.SIGTERM)
        rest = process.stderr.read()
        assert process.wait(60) == 0
    assert first == (
        f"jupyter recall scheduler: running as engine 'e1', jobs in SQLiteStore('{db}') "
        "(SIGTERM or Ctrl-C stops it)\n"
    )
    assert rest == ""


def refusal(result: subprocess.CompletedProcess[str]) -> str:
    """The one line a refused command line writes on stderr, after checking it exited with 2."""
    assert result.returncode == 2, result.stderr[-2000:]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr[-2000:]
    return lines[0]


def test_a_config_file_that_does_not_exist_is_refused_naming_it(tmp_path: Path):
    missing = tmp_path / "nowhere" / "scheduler_config.py"
    db = tmp_path / "recall.sqlite"
    result = run_scheduler_command(tmp_path, f"--db-url=sqlite:///{db}", f"--config={missing}")
    line = refusal(result)
    assert "--config" in line
    assert str(missing) in line
    assert not db.exists(), "refused before the store was opened"


def test_a_config_file_jupyter_would_not_read_is_refused(tmp_path: Path):
    given = tmp_path / "scheduler_config.yaml"
    given.write_text("RecallScheduler: {}\n")
    db = tmp_path / "recall.sqlite"
    result = run_scheduler_command(tmp_path, f"--db-url=sqlite:///{db}", f"--config={given}")
    line = refusal(result)
    assert str(given) in line
    assert "(accepted: .py, .json)" in line
    assert not db.exists()


def test_an_extra_argument_is_refused_naming_it(tmp_path: Path):
    db = tmp_path / "recall.sqlite"
    result = run_scheduler_command(tmp_path, f"--db-url=sqlite:///{db}", "foo")
    line = refusal(result)
    assert "unexpected 'foo'" in line
    assert not db.exists()


def test_a_bad_log_level_is_one_line_naming_the_option_and_the_levels(tmp_path: Path):
    db = tmp_path / "recall.sqlite"
    result = run_scheduler_command(tmp_path, f"--db-url=sqlite:///{db}", "--log-level=bogus")
    line = refusal(result)
    assert "--log-level" in line
    assert "'bogus'" in line
    assert "DEBUG, INFO, WARN, ERROR, CRITICAL" in line
    assert not db.exists()


@pytest.mark.parametrize(("given", "level"), [("DEBUG", 10), ("ERROR", 40), ("10", 10), ("0", 0)])
def test_a_log_level_is_a_name_or_a_number(given: str, level: int):
    app = RecallScheduler()
    app.parse_command_line([f"--log-level={given}"])
    assert app.log_level == level


def test_a_bad_log_level_in_process_is_a_validation_error_naming_the_option():
    with pytest.raises(ValidationError, match=r"--log-level: not a log level: 'verbose'"):
        RecallScheduler().parse_command_line(["--log-level=verbose"])


@pytest.mark.parametrize(
    ("option", "meant"),
    [
        ("--dburl=sqlite:///elsewhere.sqlite", "--db-url"),
        ("--RecallScheduler.max_slep=5", "--RecallScheduler.max_sleep"),
    ],
)
def test_an_unknown_option_is_refused_with_the_nearest_one(tmp_path: Path, option, meant):
    # Ignored with a warning, a mistyped --db-url would start on the other store.
    db = tmp_path / "recall.sqlite"
    result = run_scheduler_command(tmp_path, f"--db-url=sqlite:///{db}", option)
    line = refusal(result)
    assert f"unknown option {option.split('=')[0]}" in line
    assert f"did you mean {meant}?" in line
    assert not db.exists()


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (
            ("--db-url=sqlite:///unused.sqlite", "--RecallScheduler.max_sleep=0"),
            "RecallScheduler.max_sleep must be a positive",
        ),
        (("--db-url=mysql://x/y",), "RecallScheduler.db_url"),
    ],
)
def test_a_value_an_option_refuses_is_one_line_naming_it(tmp_path: Path, options, named):
    result = run_scheduler_command(tmp_path, *options)
    line = refusal(result)
    assert named in line
    assert "Bad config" not in line
    assert not (tmp_path / "unused.sqlite").exists()


def test_a_bad_value_in_a_config_file_is_one_line_naming_it(tmp_path: Path):
    config = tmp_path / "scheduler_config.py"
    config.write_text("c.RecallScheduler.max_concurrent_runs = 0\n")
    db = tmp_path / "recall.sqlite"
    result = run_scheduler_command(tmp_path, f"--db-url=sqlite:///{db}", f"--config={config}")
    assert "RecallScheduler.max_concurrent_runs must be >= 1, got 0" in refusal(result)
    assert not db.exists()


def test_a_config_file_that_fails_is_one_line_naming_it(tmp_path: Path):
    config = tmp_path / "scheduler_config.py"
    config.write_text("c.RecallScheduler.max_sleep = (\n")
    db = tmp_path / "recall.sqlite"
    result = run_scheduler_command(tmp_path, f"--db-url=sqlite:///{db}", f"--config={config}")
    line = refusal(result)
    assert "a config file failed: SyntaxError" in line
    assert not db.exists()


def test_a_misspelt_setting_in_a_config_file_is_refused_with_the_nearest_one(tmp_path: Path):
    # Only warned about, the scheduler would start with its default for the setting meant.
    config = tmp_path / "scheduler_config.py"
    config.write_text("c.RecallScheduler.max_slep = 5\nc.RecallApp.whatever = 1\n")
    db = tmp_path / "recall.sqlite"
    result = run_scheduler_command(tmp_path, f"--db-url=sqlite:///{db}", f"--config={config}")
    line = refusal(result)
    assert line.startswith("jupyter recall scheduler: error: RecallScheduler.max_slep in "), line
    assert "is not a setting: did you mean RecallScheduler.max_sleep?" in line
    assert not db.exists()


def test_postgresql_without_its_extra_is_one_line_not_a_traceback(tmp_path: Path):
    # An install without the postgres extra: psycopg cannot be imported.
    hidden = tmp_path / "no_psycopg" / "psycopg"
    hidden.mkdir(parents=True)
    (hidden / "__init__.py").write_text("raise ImportError('No module named psycopg')\n")
    result = run_scheduler_command(
        tmp_path,
        "--db-url=postgresql://recall@db/recall",
        env={"PYTHONPATH": str(hidden.parent)},
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert "RecallScheduler.db_url: PostgreSQL needs the postgres extra" in result.stderr


def test_generate_config_is_refused_not_run_without_the_config(tmp_path: Path):
    result = run_scheduler_command(
        tmp_path, "--generate-config", f"--db-url=sqlite:///{tmp_path / 'jobs.sqlite'}"
    )
    assert result.returncode == 2, result.stderr
    assert "running as engine" not in result.stderr
    assert "generate-config" in result.stderr
    assert not (tmp_path / "jobs.sqlite").exists()
