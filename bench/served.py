"""A real `jupyter server` with the extension on a throwaway root and SQLite file, for the
benchmarks that measure it over HTTP (rest.py, listing.py)."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from floor_route import DB_ENV

from tests.server.live_server import TOKEN, LiveServer

BENCH = Path(__file__).resolve().parent

HEADERS = {"Authorization": f"token {TOKEN}", "Content-Type": "application/json"}
"""What every request of a benchmark carries (authenticated, as a client is)."""


@contextmanager
def live_server(*, floor: bool = False) -> Iterator[LiveServer]:
    """``floor``: with bench/floor_route.py's route too, on a SQLite file of its own."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "root"
        root.mkdir()
        env, args = {}, ()
        if floor:
            path = os.pathsep.join(filter(None, (str(BENCH), os.environ.get("PYTHONPATH"))))
            env = {"PYTHONPATH": path, DB_ENV: str(Path(tmp) / "floor.sqlite")}
            args = ("--ServerApp.jpserver_extensions=floor_route=True",)
        server = LiveServer(root, Path(tmp) / "recall.sqlite", env=env, args=args).start()
        try:
            yield server
        finally:
            server.stop()
