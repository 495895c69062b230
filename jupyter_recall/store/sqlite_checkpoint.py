"""Checkpoints of a SQLite file's write-ahead log, off the path of the writes.

In WAL mode SQLite copies the log back into the database file at a checkpoint, which syncs the
file to disk. Left to SQLite (``wal_autocheckpoint``), the commit that crosses the threshold
runs it: one write in about a hundred waits 5-50 ms, and the mean cost of a commit is six
times its median (measured on a job insert: 32 µs median, 238 µs mean). A ``Checkpointer``
runs passive checkpoints from a thread and connection of its own instead (a passive checkpoint
never blocks writers or readers, and ``sqlite3`` releases the GIL while it runs), so commits
only append to the log; SQLite's own threshold stays as a backstop, set high.
"""

from __future__ import annotations

import logging
import sqlite3
import threading

CHECKPOINT_INTERVAL = 0.5
"""Seconds between two passive checkpoints (an idle log costs a look at its header)."""
BACKSTOP_PAGES = 20_000
"""``wal_autocheckpoint`` of the writing connection: a commit checkpoints only if the log
grew this far (80 MB of 4 KB pages) without the checkpointer."""

log = logging.getLogger(__name__)


class Checkpointer:
    """A daemon thread checkpointing ``path``'s log every ``interval`` seconds until closed."""

    def __init__(self, path: str, *, busy_timeout: float, interval: float = CHECKPOINT_INTERVAL):
        self._conn = sqlite3.connect(path, timeout=busy_timeout, check_same_thread=False)
        self._interval = interval
        self._closing = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name="recall-sqlite-checkpoint", daemon=True
        )
        self._thread.start()

    def _run(self) -> None:
        while not self._closing.wait(self._interval):
            try:
                self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
            except sqlite3.Error as exc:  # the next round tries again; commits still append
                log.debug("passive checkpoint of the SQLite log failed: %s", exc)

    def close(self) -> None:
        self._closing.set()
        self._thread.join()
        self._conn.close()
