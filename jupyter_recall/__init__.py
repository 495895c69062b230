"""jupyter_recall: make code and agents in Jupyter kernels act later and in the background."""

from __future__ import annotations

from typing import Any

from jupyter_recall._version import __version__
from jupyter_recall.core.errors import (
    ConflictError,
    NotFoundError,
    ParseError,
    RecallError,
    ValidationError,
)
from jupyter_recall.core.when import ScheduleSpec, parse_when

__all__ = [
    "ConflictError",
    "NotFoundError",
    "ParseError",
    "RecallError",
    "ScheduleSpec",
    "ValidationError",
    "__version__",
    "parse_when",
]


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    # Imported lazily: `import jupyter_recall` in a kernel must not import jupyter_server.
    from jupyter_recall.server.app import RecallApp

    return [{"module": "jupyter_recall.server.app", "app": RecallApp}]
