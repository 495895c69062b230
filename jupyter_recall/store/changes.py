"""Changes to jobs made through other store objects: how an engine learns at once of a job
created or changed on another server, instead of at its next pass.

A store that can tell (PostgreSQL, through LISTEN/NOTIFY) is a ``ChangeFeed``: a committed
write that gives jobs a fire instant calls every listener with the earliest such instant, in a
thread of the store's, on every server sharing the database (its own included). A store that
cannot (SQLite) is not one; engines sharing its file see each other's jobs at their next pass,
at most ``Scheduler.max_sleep`` later.

A store that can also carry messages between servers is an ``EventFeed`` (below).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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


EventListener = Callable[[str], None]
"""Called with each payload published on the database by any store object (its own
included), from a thread of the store's."""


@runtime_checkable
class EventFeed(Protocol):
    """A store that carries short messages between the servers sharing it (PostgreSQL:
    NOTIFY on ``recall_events``): how the events of one server's engine reach the live views
    of the others (``engine/event_relay.py``). Delivery is at most once, and only to the
    store objects listening at the time; nothing is kept."""

    payload_limit: int
    """The most bytes (UTF-8) one payload may hold."""

    def publish_events(self, payloads: Sequence[str]) -> None:
        """Send ``payloads``, in order, to every listening store object; may raise
        StoreError (the database is unreachable): then nothing was sent."""
        ...

    def listen_for_events(self, listener: EventListener) -> Callable[[], None]:
        """Call ``listener`` with each payload published, from a thread of the store's;
        returns the function that stops it."""
        ...
