"""A trigger that fires at one instant."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from jupyter_recall.core.triggers.base import OnceJSON

UTC = timezone.utc


@dataclass(frozen=True, slots=True)
class OnceTrigger:
    """Fires once, at ``at`` (aware UTC)."""

    at: datetime

    def next_after(self, after: datetime) -> datetime | None:
        return self.at if self.at > after else None

    def to_dict(self) -> OnceJSON:
        return {"type": "once", "at": self.at.isoformat()}

    @classmethod
    def from_dict(cls, data: OnceJSON) -> OnceTrigger:
        return cls(datetime.fromisoformat(data["at"]).astimezone(UTC))
