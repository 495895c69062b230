"""The records of watchers and of notifications held for absent sessions, and their limits.

A watcher is a job of kind ``watcher`` (its configuration is in the job's ``options``); what
changes at every check is stored off the job row, so that a check never rewrites the job nor
sends a ``job.updated`` event: its escalation state and counters (``WatcherRecord``) and the
ring buffer of its last ``RING_SIZE`` results (``CheckRecord``). Both go with the job.

The notification buffer holds notifications for notebook sessions whose kernel was not
listening: at most ``BUFFER_LIMIT`` per session (the oldest go first), each for
``BUFFER_TTL``; the kernel takes them when it connects again.

The protocols that store them are ``WatcherStore`` and ``NotificationBuffer`` in ``base.py``;
the SQLite tables are in ``sqlite_watchers.py`` (migration 2).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypedDict

from jupyter_recall.core.escalation import CheckResultJSON, WatchStateJSON

RING_SIZE = 100
BUFFER_LIMIT = 100
BUFFER_TTL = timedelta(hours=24)
RESULT_LIMIT = 20_000
"""Characters of a result's JSON kept in the ring buffer; a longer one is kept as clipped text."""


def json_text(value: Any) -> str:
    """How states, results and notifications are stored: JSON, keys sorted, anything else
    (an instant...) as its ``str``."""
    return json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)


def bounded_result(result: CheckResultJSON) -> CheckResultJSON:
    """The result as stored: as is, or its JSON text clipped with ``"clipped": true``."""
    text = json_text(result)
    if len(text) <= RESULT_LIMIT:
        return result.copy()
    if result.get("success"):
        return {"success": True, "data": text[:RESULT_LIMIT], "clipped": True}
    return {"success": False, "error": text[:RESULT_LIMIT], "clipped": True}


@dataclass(frozen=True, slots=True)
class WatcherRecord:
    job_id: str
    owner: str
    state: WatchStateJSON
    checks: int
    notifications: int
    last_check_at: datetime | None
    last_notified_at: datetime | None


class CheckJSON(TypedDict):
    """A check as answered (``WatcherCheck`` in ``openapi.yaml``)."""

    check: int
    checked_at: str
    success: bool
    result: CheckResultJSON
    notified: bool
    reason: str
    run_id: str | None


@dataclass(frozen=True, slots=True)
class CheckRecord:
    """One check in a watcher's history."""

    check: int
    checked_at: datetime
    success: bool
    result: CheckResultJSON
    notified: bool
    reason: str
    run_id: str | None = None

    def to_json(self) -> CheckJSON:
        return {
            "check": self.check,
            "checked_at": self.checked_at.isoformat(),
            "success": self.success,
            "result": self.result,
            "notified": self.notified,
            "reason": self.reason,
            "run_id": self.run_id,
        }


PendingCheck = tuple[str, str, WatchStateJSON, CheckRecord]
"""A check to save: the watcher's job id, its owner, its new state, and the check."""
