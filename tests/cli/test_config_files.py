"""The command's config file (``jupyter_recall_cli_config.py``, or ``--config FILE``) is read
as strictly as its command line: a file that fails, one that is not there, or a misspelt
setting stops the command with one line (exit status 2) before it does anything, rather than
a traceback and a run without the file's settings (a job created on the wrong server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_bad_input import job_ids, one_error_line


def config_dir(tmp_path: Path, text: str) -> str:
    directory = tmp_path / "config"
    directory.mkdir()
    (directory / "jupyter_recall_cli_config.py").write_text(text)
    return str(directory)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("c.RecallCommand.url = (\n", "a config file failed: SyntaxError"),
        (
            'c.RecallCommand.urll = "http://elsewhere:8888/"\n',
            "jupyter_recall_cli_config.py is not a setting: did you mean RecallCommand.url?",
        ),
        ("c.AddCommand.job_nam = 'x'\n", "AddCommand.job_nam in "),
    ],
)
def test_a_bad_config_file_stops_the_command(cli, server, tmp_path, text, expected):
    before = job_ids(server)
    done = cli("add", "in 1h", "print(1)", JUPYTER_CONFIG_DIR=config_dir(tmp_path, text))
    assert done.code == 2, done.err
    line = one_error_line(done.err)
    assert line.startswith("jupyter recall add: error: "), line
    assert expected in line
    assert done.out == ""
    assert job_ids(server) == before


def test_a_setting_of_another_subcommand_is_not_a_typo(cli, tmp_path):
    directory = config_dir(tmp_path, "c.ListCommand.limit = 5\nc.AddCommand.tz = 'UTC'\n")
    done = cli("runs", "--json", JUPYTER_CONFIG_DIR=directory)
    assert done.code == 0, done.err


def test_a_config_file_that_is_not_there_is_refused(app, tmp_path):
    missing = tmp_path / "nowhere.py"
    done = app("list", f"--config={missing}")
    assert done.code == 2
    assert one_error_line(done.err) == (
        f"jupyter recall list: error: --config: no such file: {str(missing)!r}"
    )
    given = tmp_path / "recall.py"
    given.write_text("c.ListCommand.limit = 1\n")
    assert app("list", f"--config={given}", "--json").code == 0
