"""Process-wide settings that keep the engine's event loop on time under load.

Both are the process's, not the engine's: the server applies them once, at its start
(``RecallApp.gil_switch_interval`` and ``RecallApp.freeze_gc_at_start``), and the burst benchmark
applies the same to every side it measures. See ``docs/engine.md`` ("Timeliness in a busy
process").

- Firing passes run SQLite work in a thread. While that thread runs Python code, the event loop
  thread waits for the GIL up to the interpreter's switch interval (5 ms by default) before it
  can start a run that is due; 1 ms bounds that wait at 1 ms.
- A full garbage collection scans every tracked object and pauses the event loop meanwhile; a
  Jupyter server holds about 200,000 objects once its extensions are loaded, which makes about
  0.1 s per full collection. Those objects live as long as the server: frozen (``gc.freeze``),
  they are left out of every collection, and a full collection only scans what came later.
"""

from __future__ import annotations

import gc
import sys
from dataclasses import dataclass

from jupyter_recall.core.errors import ValidationError


@dataclass(frozen=True)
class ProcessSettings:
    """``switch_interval``: seconds, or 0 to keep the interpreter's; ``freeze_gc``: freeze once."""

    switch_interval: float = 0.001
    freeze_gc: bool = True

    def __post_init__(self) -> None:
        if not 0 <= self.switch_interval <= 1:
            raise ValidationError(
                "switch_interval",
                f"must be between 0 and 1 (seconds; 0 keeps the interpreter's), "
                f"got {self.switch_interval!r}",
            )


def apply(settings: ProcessSettings) -> None:
    """Apply ``settings`` to this process; the GC is frozen once (unless already frozen)."""
    if settings.switch_interval > 0:
        sys.setswitchinterval(settings.switch_interval)
    if settings.freeze_gc and gc.get_freeze_count() == 0:
        # Collect first, so garbage of the start-up is freed rather than kept forever.
        gc.collect()
        gc.freeze()
