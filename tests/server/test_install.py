"""Installing the package enables the server extension: `jupyter server extension list`."""

from __future__ import annotations

import re
import subprocess
import sys


def test_extension_is_enabled_and_ok_after_install():
    listing = subprocess.run(
        [sys.executable, "-m", "jupyter_server.extension.serverextension", "list"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    text = re.sub(r"\x1b\[[0-9;]*m", "", listing.stdout + listing.stderr)
    assert re.search(r"jupyter_recall\s+enabled", text), text
    assert re.search(r"jupyter_recall [\d.]+\s+OK", text), text


def test_importing_the_package_does_not_import_jupyter_server():
    probe = "import sys, jupyter_recall; print('jupyter_server' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip() == "False"
