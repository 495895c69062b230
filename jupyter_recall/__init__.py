"""jupyter_recall: make code and agents in Jupyter kernels act later and in the background."""

from jupyter_recall._version import __version__
from jupyter_recall.core.errors import (
    ConflictError,
    NotFoundError,
    ParseError,
    RecallError,
    ValidationError,
)

__all__ = [
    "ConflictError",
    "NotFoundError",
    "ParseError",
    "RecallError",
    "ValidationError",
    "__version__",
]
