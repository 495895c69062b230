"""What every client of a running server shares, in the kernel, the CLI and the MCP server:
HTTP, discovery and the event stream (``remote``), following a run's output (``follow``), jobs
and runs as text (``tables``), agent tool specifications (``toolspec``, ``tool_specs``), ids
(``ids``). It imports nothing from the kernel, the CLI, the MCP server, the server or the
stores."""
