"""A real `jupyter server` with the extension on a throwaway root and SQLite file, for the
benchmarks that measure it over HTTP (rest.py, listing.py)."""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.server.live_server import TOKEN, LiveServer

HEADERS = {"Authorization": f"token {TOKEN}", "Content-Type": "application/json"}
"""What every request of a benchmark carries (authenticated, as a client is)."""


@contextmanager
def live_server() -> Iterator[LiveServer]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "root"
        root.mkdir()
        server = LiveServer(root, Path(tmp) / "recall.sqlite").start()
        try:
            yield server
        finally:
            server.stop()
