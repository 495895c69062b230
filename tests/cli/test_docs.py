"""docs/cli.md and docs/rest.md say what the code does: checked against the code itself."""

from __future__ import annotations

import re
from pathlib import Path

import jupyter_recall
from jupyter_recall.cli.app import SUBCOMMANDS, missing_subcommand
from jupyter_recall.core.limits import SCHEDULE_KINDS

ROOT = Path(jupyter_recall.__file__).parents[1]
CLI = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
REST = (ROOT / "docs" / "rest.md").read_text(encoding="utf-8")


def test_the_mistyped_subcommand_example_is_what_the_command_says():
    assert f"jupyter recall: {missing_subcommand(['lst'])}\n" in CLI


def test_the_json_option_is_where_the_doc_says():
    without = {"migrate", "export", "import", "scheduler"}
    for name, (command, _) in SUBCOMMANDS.items():
        assert ("json" in command.flags) == (name not in without), name
    claim = re.search(r"Every subcommand that talks to a server takes `--json`[^:]*:", CLI)
    assert claim is not None
    for name in without:
        assert f"`{name}`" in claim.group(0)


def test_the_code_section_names_files_that_exist():
    code = CLI[CLI.index("## Code") :]
    for path in re.findall(r"`(jupyter_recall/[\w/]+\.py)`", code):
        assert (ROOT / path).is_file(), path
    for name in re.findall(r"`(\w+\.py)`", code.split("The HTTP client")[0]):
        assert (ROOT / "jupyter_recall" / "cli" / name).is_file(), name


def test_rest_lists_every_schedule_kind():
    row = next(line for line in REST.splitlines() if line.startswith("| `?schedule_kind=`"))
    assert re.findall(r"`(\w+)`", row.split("|")[2]) == list(SCHEDULE_KINDS)
