"""A progress bar on stderr for long copies (``migrate``, ``export``, ``import``), no dependency.

On a terminal, one line redrawn in place; otherwise (a log, a pipe) a line at each tenth of
the way, so that a log shows the copy advancing without thousands of lines; nothing when quiet.
"""

from __future__ import annotations

from typing import TextIO

WIDTH = 30
STEPS = 10


class ProgressBar:
    """Counts rows handled out of ``total`` (0 when unknown: counts only)."""

    def __init__(self, label: str, total: int, stream: TextIO, *, quiet: bool) -> None:
        self.label = label
        self.total = total
        self.stream = stream
        self.quiet = quiet
        self.tty = stream.isatty()
        self.done = 0
        self._step = 0

    def __call__(self, table: str, count: int) -> None:
        self.done += count
        if self.quiet:
            return
        if self.tty:
            self.stream.write(f"\r{self._text(table)}")
            self.stream.flush()
            return
        step = self.done * STEPS // self.total if self.total else 0
        if step > self._step:
            self._step = step
            self.stream.write(f"{self._text(table)}\n")

    def _text(self, table: str) -> str:
        if not self.total:
            return f"{self.label}: {self.done} rows ({table})"
        filled = min(WIDTH, self.done * WIDTH // self.total)
        bar = "#" * filled + "." * (WIDTH - filled)
        return f"{self.label} [{bar}] {self.done}/{self.total} rows ({table})"

    def finish(self) -> None:
        if self.tty and not self.quiet and self.done:
            self.stream.write("\n")
