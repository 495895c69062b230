"""The trigger interface shared by every schedule kind."""

from __future__ import annotations

from datetime import datetime
from typing import Literal, Protocol, TypedDict


class OnceJSON(TypedDict):
    type: Literal["once"]
    at: str


class IntervalJSON(TypedDict):
    type: Literal["interval"]
    anchor: str
    seconds: int


class CronJSON(TypedDict):
    type: Literal["cron"]
    expression: str
    tz: str


class WeeksJSON(TypedDict):
    type: Literal["weeks"]
    weeks: int
    days: list[int]
    hour: int
    minute: int
    start: str
    tz: str


class AfterJSON(TypedDict):
    type: Literal["after"]
    job: str
    on: str


TriggerJSON = OnceJSON | IntervalJSON | CronJSON | WeeksJSON | AfterJSON
"""What each trigger's ``to_dict`` writes (the ``trigger`` of a stored schedule)."""


class Trigger(Protocol):
    """When something fires, as a pure function of an explicit instant."""

    def next_after(self, after: datetime) -> datetime | None:
        """The earliest fire time strictly after ``after`` (aware UTC), or None if none remain."""
        ...

    def to_dict(self) -> TriggerJSON:
        """A JSON-serialisable description from which the trigger can be rebuilt."""
        ...
