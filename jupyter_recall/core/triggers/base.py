"""The trigger interface shared by every schedule kind."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol


class Trigger(Protocol):
    """When something fires, as a pure function of an explicit instant."""

    def next_after(self, after: datetime) -> datetime | None:
        """The earliest fire time strictly after ``after`` (aware UTC), or None if none remain."""
        ...

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable description from which the trigger can be rebuilt."""
        ...
