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


def test_every_route_the_server_serves_is_in_the_route_table_of_rest_md():
    # The table had drifted: prune, the approvals, the owners and MCP were missing from it.
    from jupyter_recall.mcp.http import McpEndpoint, mcp_routes
    from jupyter_recall.server.handlers import UnknownRouteHandler, route_table

    served = [*route_table(), *mcp_routes(McpEndpoint())]
    missing = []
    for pattern, handler, *_ in served:
        if handler is UnknownRouteHandler:
            continue
        path = re.sub(r"\(\?P<plugin_owner>[^)]*\)", "{owner}", pattern)
        path = re.sub(r"\(\?P<action>([^)]*)\)", r"(\1)", path)
        path = re.sub(r"\(\?P<\w+>[^)]*\)", "{id}", path)
        actions = re.search(r"\(([a-z|]+)\)", path)
        paths = (
            [path.replace(actions.group(0), action) for action in actions.group(1).split("|")]
            if actions
            else [path]
        )
        # The path ends there: a backtick, its query (`?limit=`) or an optional part (`[?...]`).
        missing += [each for each in paths if not re.search(rf"{re.escape(each)}[`?\[]", REST)]
    assert not missing
