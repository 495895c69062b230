"""Jobs as plain text, shared by the magics' tables and the ``jupyter recall`` command (which
must not import the kernel side): one line of a value, a target in words, an aligned table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def clip(text: object, width: int) -> str:
    """One line of at most ``width`` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def job_status(job: Mapping[str, Any]) -> str:
    """A job document's status, saying when the server paused it after its failures."""
    status = str(job.get("status"))
    return f"{status} (failures)" if status == "paused" and job.get("paused_reason") else status


def describe_target(target: Any) -> str:
    if not isinstance(target, Mapping):
        return "-"
    kind = target.get("type")
    if kind == "kernel":
        return f"kernel {target.get('path') or target.get('kernel_id')}"
    if kind == "headless":
        return f"headless {target.get('kernel_name', 'python3')}"
    return str(kind)


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in rows
    ]
    top = "  ".join(cell.ljust(width) for cell, width in zip(header, widths, strict=True))
    rule = "  ".join("-" * width for width in widths)
    return "\n".join(line.rstrip() for line in [top, rule, *lines])
