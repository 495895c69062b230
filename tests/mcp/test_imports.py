"""The MCP server shares the kernel's tool specifications, but runs where no kernel is: importing
it must not import IPython or ipykernel (a `jupyter recall mcp` beside an IDE has neither)."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
import jupyter_recall.mcp.stdio, jupyter_recall.mcp.http
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("IPython", "ipykernel", "ipywidgets"))
print(",".join(loaded))
"""


def test_the_mcp_server_imports_no_kernel_machinery() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == ""
