"""``jupyter recall mcp``: serve the MCP tools and resources over stdio (the ``mcp`` extra)."""

from __future__ import annotations

from jupyter_recall.cli.base import EXIT_OK, RecallCommand
from jupyter_recall.core.errors import UsageError


class McpCommand(RecallCommand):
    name = "jupyter recall mcp"
    description = (
        "Serve jupyter_recall's MCP tools and resources on stdin/stdout, for an MCP client "
        "(Claude Desktop, Claude Code, VS Code, Cursor...), against the running server "
        "(found as the other subcommands find it, or --url/--token). Logs go to stderr."
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
        stdio.run(self.client)
        return EXIT_OK
