"""Changes to jobs made through other store objects: how an engine learns at once of a job
created or changed on another server, instead of at its next pass.

A store that can tell (PostgreSQL, through LISTEN/NOTIFY) is a ``ChangeFeed``: a committed
write that gives jobs a fire instant calls every listener with the earliest such instant, in a
thread of the store's, on every server sharing the database (its own included). A store that
cannot (SQLite) is not one; engines sharing its file see each other's jobs at their next pass,
at most ``Scheduler.max_sleep`` later.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Protocol, runtime_checkable

ChangeListener = Callable[[datetime | None], None]
"""Called with the earliest fire instant of the jobs changed, or None when it cannot be known
(changes may have been missed while the feed was cut): then every job must be looked at."""


@runtime_checkable
class ChangeFeed(Protocol):
    def listen_for_changes(self, listener: ChangeListener) -> Callable[[], None]:
        """Call ``listener`` for each change committed by any store object on this database,
        from a thread of the store's; returns the function that stops it."""
        ...
