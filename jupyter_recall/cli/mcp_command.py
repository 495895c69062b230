"""``jupyter recall mcp``: serve the MCP tools and resources over stdio (the ``mcp`` extra)."""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial

from jupyter_recall.cli.base import EXIT_OK, RecallCommand
from jupyter_recall.client.remote import URL_VARIABLE, Client
from jupyter_recall.core.errors import UsageError


class McpCommand(RecallCommand):
    name = "jupyter recall mcp"
    description = (
        "Serve jupyter_recall's MCP tools and resources on stdin/stdout, for an MCP client "
        "(Claude Desktop, Claude Code, VS Code, Cursor...), against the running server "
        "(found as the other subcommands find it, or --url/--token). Without --url, a server "
        "that restarts (a new token, another port) is found again. Logs go to stderr."
    )

    def run(self) -> int:
        self.positional(0, 0)
        try:
            from jupyter_recall.mcp import stdio
        except ImportError as error:
            raise UsageError(
                f"the MCP server needs the mcp extra: pip install 'jupyter_recall[mcp]' ({error})"
            ) from None
        # Found before serving: a missing server is one clear error, not a broken MCP session.
        self.client.info()
        stdio.run(stdio.StdioClient(self.client, self._finder()))
        return EXIT_OK

    def _finder(self) -> Callable[[], Client] | None:
        """How to find the server again after it restarted: as at start, unless its address
        was given (then it is the user's to change)."""
        if self.url or os.environ.get(URL_VARIABLE):
            return None
        from jupyter_recall.cli.connect import connect

        return partial(connect, None, self.token, timeout=self.timeout)
