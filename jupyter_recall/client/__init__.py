"""What every client of a running server shares, in the kernel, the CLI and the MCP server:
jobs and runs as text (``tables``), agent tool specifications (``toolspec``). Imports ``core``
only."""
