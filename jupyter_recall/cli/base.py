"""What every ``jupyter recall`` subcommand shares: server options, --json, errors, exit codes."""

from __future__ import annotations

import json
import sys
from collections.abc import Generator
from typing import Any

from jupyter_core.application import JupyterApp, base_aliases, base_flags
from traitlets import Bool, Float, Unicode
from traitlets.config import Configurable

from jupyter_recall._version import __version__
from jupyter_recall.client.remote import Client
from jupyter_recall.command_line import EXIT_USAGE, StrictConfig
from jupyter_recall.core.errors import (
    NotFoundError,
    PassedWhilePaused,
    PendingRecallExists,
    RecallConnectionError,
    RecallError,
    UsageError,
    ValidationError,
)

EXIT_OK = 0
EXIT_FAILED = 1
"""Not found, a conflict, a run that did not succeed, any other error."""
# EXIT_USAGE (2, command_line.py): a bad command line, or input the server refused (the
# message names the field).
EXIT_NO_SERVER = 3
"""No server with jupyter_recall could be reached."""

ConfigFragment = dict[str, dict[str, object]]
"""What a flag sets: ``{"RecallCommand": {"json_output": True}}``."""
Flag = tuple[ConfigFragment, str]
"""A flag: what it sets, and its help."""

COMMON_ALIASES: dict[str, str] = {
    **base_aliases,
    "url": "RecallCommand.url",
    "token": "RecallCommand.token",
    "timeout": "RecallCommand.timeout",
}
_NOT_FOR_US = ("generate-config", "y", "show-config", "show-config-json")
"""JupyterApp flags that mean nothing to a client of the server (it writes no config)."""
COMMON_FLAGS: dict[str, Flag] = {
    **{name: flag for name, flag in base_flags.items() if name not in _NOT_FOR_US},
    "json": (
        {"RecallCommand": {"json_output": True}},
        "Print the server's JSON documents instead of tables (for scripts).",
    ),
}


def with_aliases(extra: dict[str, str]) -> dict[str, str]:
    """A subcommand's aliases: the common ones and its own."""
    return {**COMMON_ALIASES, **extra}


def with_flags(extra: dict[str, Flag]) -> dict[str, Flag]:
    """A subcommand's flags: the common ones and its own."""
    return {**COMMON_FLAGS, **extra}


class RecallCommand(StrictConfig, JupyterApp):
    """Base of the subcommands: finds the server, maps errors to one message and an exit code."""

    version = __version__
    aliases = COMMON_ALIASES
    flags = COMMON_FLAGS
    usage = ""
    """The positional arguments, shown in errors: ``ID``, ``WHEN ACTION``..."""

    url = Unicode(
        None,
        allow_none=True,
        config=True,
        help="URL of the Jupyter server (default: $JUPYTER_RECALL_URL, else the running server "
        "found in the Jupyter runtime directory).",
    )
    token = Unicode(
        None,
        allow_none=True,
        config=True,
        help="Token of the Jupyter server (default: $JUPYTER_RECALL_TOKEN, else the token of "
        "its runtime file).",
    )
    timeout = Float(30.0, config=True, help="Seconds to wait for each answer of the server.")
    json_output = Bool(False, config=True, help="Print JSON documents instead of tables.")

    _client: Client | None = None

    def _config_file_name_default(self) -> str:
        return "jupyter_recall_cli_config"

    def initialize(self, argv: Any = None) -> None:
        # A bad command line or config file is one line and exit status 2 (StrictConfig),
        # like the errors of run().
        try:
            super().initialize(argv)
        except RecallError as error:
            self.refuse(message_of(error))
            raise SystemExit(EXIT_USAGE) from None

    def setting_classes(self) -> list[type[Configurable]]:
        """Every subcommand's class: one config file serves them all (``c.ListCommand.limit``
        is not a typo when ``show`` runs)."""
        found: list[type[Configurable]] = [RecallCommand]
        for cls in found:
            found += [sub for sub in cls.__subclasses__() if sub not in found]
        return found

    def option_name(self, trait_name: str) -> str:
        """How the command line names a trait of RecallCommand: its alias, else the long form."""
        for key, target in self.aliases.items():
            if target == f"RecallCommand.{trait_name}":
                return f"--{key}"
        return f"--RecallCommand.{trait_name}"

    def _log_format_default(self) -> str:
        return "%(message)s"

    @property
    def client(self) -> Client:
        if self._client is None:
            from jupyter_recall.cli.connect import connect

            self._client = connect(
                self.url, self.token, timeout=self.timeout, url_source=self.url_source()
            )
        return self._client

    def url_source(self) -> str:
        """Where ``url`` was set, for the errors about it: the command line or a config file."""
        typed = any("url" in section for section in self.cli_config.values())
        return "--url" if typed else f"RecallCommand.url in {self.config_file_name}.py"

    def describe(self, error: RecallError) -> str:
        """The error's text for stderr; a job or run not found names the server asked when
        it was picked among several running ones (another may hold it); a second pending
        recall says how to cancel the first with this command line, a one-shot whose time
        passed while paused how to resume it catching up."""
        if isinstance(error, PendingRecallExists):
            error = error.hinted(f"jupyter recall cancel {error.recall_id}")
        if isinstance(error, PassedWhilePaused):
            error = error.hinted(f"jupyter recall resume --catch-up {error.job_id}")
        text = message_of(error)
        if isinstance(error, NotFoundError) and self._client is not None:
            text += self._which_server(self._client)
        return text

    def _which_server(self, client: Client) -> str:
        if not client.server.source.startswith("runtime file"):
            return ""  # given explicitly: the user knows which
        from jupyter_recall.client.remote import running_servers, runtime_dir

        count = len(running_servers(runtime_dir()))
        if count < 2:
            return ""
        return (
            f" (asked the server at {client.base}, found through {client.server.source}; "
            f"{count} Jupyter servers are running: --url asks another)"
        )

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        return self.client.request(method, path, **kwargs)

    def positional(self, minimum: int, maximum: int | None = None) -> list[str]:
        args = list(self.extra_args)
        most = minimum if maximum is None else maximum
        if len(args) < minimum or (most >= 0 and len(args) > most):
            raise UsageError(f"usage: {self.name} {self.usage}".rstrip())
        return args

    def emit_description(self) -> Generator[str, None, None]:
        yield f"Usage: {self.name} {self.usage} [options]".replace("  ", " ")
        yield ""
        yield from super().emit_description()

    def print_json(self, document: Any) -> None:
        print(json.dumps(document, indent=2))

    def run(self) -> int:
        """The command's work; its exit code."""
        raise NotImplementedError

    def start(self) -> None:
        code = self._run_reporting_errors()
        sys.stdout.flush()
        if code:
            raise SystemExit(code)

    def check_options(self) -> None:
        """The shared options' values, before any work."""
        if not self.timeout > 0:
            raise ValidationError(
                self.option_name("timeout"),
                f"must be a number of seconds above 0, got {self.timeout:g}",
            )

    def _run_reporting_errors(self) -> int:
        try:
            self.check_options()
            return self.run()
        except KeyboardInterrupt:
            return 130
        except RecallError as error:
            code = exit_code_of(error)
            self.refuse(self.describe(error))
            return code


def exit_code_of(error: RecallError) -> int:
    if isinstance(error, RecallConnectionError):
        return EXIT_NO_SERVER
    if isinstance(error, (ValidationError, UsageError)):
        return EXIT_USAGE
    return EXIT_FAILED


def message_of(error: RecallError) -> str:
    """The error's text, with the accepted values when the text does not list them yet."""
    text = str(error)
    accepted = getattr(error, "accepted", ())
    if isinstance(error, ValidationError) and accepted and accepted[0] not in text:
        text += "\naccepted: " + "; ".join(accepted)
    return text
