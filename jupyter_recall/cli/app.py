"""``jupyter recall``: the root application, dispatching to its subcommands.

``jupyter recall ...`` runs the ``jupyter-recall`` script (jupyter_core looks for
``jupyter-<name>`` on PATH); like ``jupyter server extension``, the root app only dispatches.
"""

from __future__ import annotations

import difflib
import os
import sys
import urllib.parse
from pathlib import Path

from jupyter_core.application import JupyterApp

from jupyter_recall._version import __version__
from jupyter_recall.cli import commands
from jupyter_recall.cli.approvals import ApprovalsCommand, ApproveCommand, DenyCommand
from jupyter_recall.cli.base import EXIT_FAILED
from jupyter_recall.cli.mcp_command import McpCommand
from jupyter_recall.cli.prune import PruneCommand
from jupyter_recall.cli.transfer import ExportCommand, ImportCommand, MigrateCommand
from jupyter_recall.command_line import EXIT_USAGE
from jupyter_recall.core.errors import ValidationError
from jupyter_recall.standalone.app import RecallScheduler


class SchedulerCommand(RecallScheduler):
    """``jupyter recall scheduler``: the standalone scheduler, its places checked before it
    starts. The managers it builds refuse a bad root or gateway URL with a TraitError deep in
    their start, a traceback after the store was opened; here it is one line, exit status 2.
    Its options stay ``RecallScheduler``'s (config sections apply to subclasses)."""

    def start(self) -> None:
        try:
            check_places(self.root_dir, self.gateway_url)
        except ValidationError as error:
            self.refuse(str(error))
            raise SystemExit(EXIT_USAGE) from None
        super().start()


def check_places(root_dir: str, gateway_url: str) -> None:
    """``--root`` an existing directory, ``--gateway-url`` an http(s) URL with a host."""
    if root_dir and not Path(root_dir).is_dir():
        raise ValidationError("--root", f"{root_dir!r} is not a directory")
    parts = urllib.parse.urlsplit(gateway_url)
    if gateway_url and (parts.scheme not in ("http", "https") or not parts.hostname):
        raise ValidationError(
            "--gateway-url",
            f"not the http(s) URL of a kernel gateway: {gateway_url!r}",
            accepted=("http://HOST:PORT", "https://HOST/BASE_URL"),
        )


SUBCOMMANDS: dict[str, tuple[type[JupyterApp], str]] = {
    "list": (commands.ListCommand, "List your jobs (--status, --kind, --path, --all)."),
    "show": (commands.ShowCommand, "Show one job and its recent runs."),
    "add": (commands.AddCommand, "Add a job: WHEN ACTION (code), or WHEN --notify MESSAGE."),
    "cancel": (commands.CancelCommand, "Stop jobs for good (they stay, with their history)."),
    "pause": (commands.PauseCommand, "Stop jobs from firing until resumed."),
    "resume": (commands.ResumeCommand, "Let paused jobs fire again."),
    "skip": (commands.SkipCommand, "Skip the next occurrence of recurring jobs."),
    "trigger": (commands.TriggerCommand, "Run jobs once now."),
    "delete": (commands.DeleteCommand, "Delete jobs and their runs for good (asks; --yes)."),
    "stop": (commands.StopCommand, "Stop running runs (they end cancelled)."),
    "runs": (commands.RunsCommand, "List your runs (--since, --job, --status)."),
    "logs": (commands.LogsCommand, "Print a run's output (--follow to stream it)."),
    "parse": (commands.ParseCommand, "Check a time expression and preview its fire times."),
    "prune": (PruneCommand, "Delete runs past their jobs' retention now (--dry-run counts)."),
    "approvals": (ApprovalsCommand, "List approval requests (--status; default pending)."),
    "approve": (ApproveCommand, "Approve waiting tool calls: ID [ID ...] [--note TEXT]."),
    "deny": (DenyCommand, "Deny waiting tool calls: ID [ID ...] [--note TEXT]."),
    "mcp": (McpCommand, "Serve the MCP tools and resources over stdio (the mcp extra)."),
    "migrate": (MigrateCommand, "Copy a whole store into another: --from URL --to URL."),
    "export": (ExportCommand, "Write a whole store as JSON lines: --from URL [FILE]."),
    "import": (ImportCommand, "Load an export into a store: FILE --to URL [--force]."),
    "scheduler": (
        SchedulerCommand,
        "Fire and execute jobs with no Jupyter server (--db-url; see docs/deploy.md).",
    ),
}


def subcommand_table() -> dict[str, tuple[type[JupyterApp], str]]:
    return dict(SUBCOMMANDS)


EXAMPLES = """
jupyter recall list --all
jupyter recall add "every day at 09:00" "print('good morning')" --name morning
jupyter recall parse "every weekday at 08:30" --tz Europe/Paris
jupyter recall logs RUN_ID --follow
jupyter recall list --json --url http://127.0.0.1:8888/ --token TOKEN
"""


class JupyterRecallApp(JupyterApp):
    """Jobs and runs of the jupyter_recall extension of a running Jupyter server."""

    name = "jupyter recall"
    description = (
        "Manage the scheduled jobs of a running Jupyter server with jupyter_recall: list, "
        "add, pause, trigger them, read their runs' output. Options go after the subcommand."
    )
    version = __version__
    examples = EXAMPLES
    subcommands = subcommand_table()

    def _config_file_name_default(self) -> str:
        return "jupyter_recall_cli_config"

    def start(self) -> None:
        super().start()
        # Only reached without a known subcommand: JupyterApp.start runs one and stops.
        print(f"{self.name}: {missing_subcommand(self.extra_args)}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def missing_subcommand(words: list[str]) -> str:
    """What to say when no known subcommand was given: the nearest one to an unknown word."""
    names = ", ".join(SUBCOMMANDS)
    if not words:
        return f"give a subcommand: {names} (--help for more)"
    close = difflib.get_close_matches(words[0], SUBCOMMANDS, n=1, cutoff=0.5)
    hint = f"did you mean '{close[0]}'? " if close else ""
    return f"unknown subcommand {words[0]!r}: {hint}the subcommands are {names}"


def main(argv: list[str] | None = None) -> None:
    """The ``jupyter-recall`` console script."""
    try:
        JupyterRecallApp.launch_instance(argv)
    except BrokenPipeError:
        # The reader went away (`jupyter recall runs | head`): stop quietly, like other tools;
        # stdout goes to devnull so that flushing it at exit does not raise again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise SystemExit(EXIT_FAILED) from None


def clear_instances() -> None:
    """Forget the singleton apps, so that ``main`` can run again in the same process (tests)."""
    JupyterRecallApp.clear_instance()
    for command, _ in SUBCOMMANDS.values():
        command.clear_instance()
