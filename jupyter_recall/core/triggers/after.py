"""The trigger of a dependency: it never fires by time (the engine fires the job when its
upstream job's run ends, ``core/dependency.py``); it carries the ``After`` it stands for."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from jupyter_recall.core.dependency import After, AfterOn
from jupyter_recall.core.triggers.base import AfterJSON


@dataclass(frozen=True, slots=True)
class AfterTrigger:
    after: After

    def next_after(self, after: datetime) -> datetime | None:
        return None

    def to_dict(self) -> AfterJSON:
        return {"type": "after", "job": self.after.job, "on": self.after.on.value}

    @classmethod
    def from_dict(cls, data: AfterJSON) -> AfterTrigger:
        return cls(After(data["job"], AfterOn.parse(data["on"], "schedule.trigger.on")))
