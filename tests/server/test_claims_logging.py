"""The server's look at runs of other engines (``server/claims.py``) says once that it fails
while the database is down, and once that it works again: not a traceback every second."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timezone
from typing import Any

import pytest

from jupyter_recall.core.clock import ManualClock
from jupyter_recall.core.errors import StoreError
from jupyter_recall.server.claims import take_awaiting_runs

pytestmark = pytest.mark.anyio


class DownForAWhile:
    """The two calls of the look, failing ``failures`` times (a database down), then not."""

    def __init__(self, failures: int, stopped: asyncio.Event) -> None:
        self.clock = ManualClock(datetime(2030, 1, 1, tzinfo=timezone.utc))
        self.failures = failures
        self.looks = 0
        self.stopped = stopped

    async def take_awaiting(self, hosts: Any, *, grace: float) -> int:
        self.looks += 1
        if self.looks > self.failures + 2:
            self.stopped.set()
        if self.looks <= self.failures:
            raise StoreError("cannot connect to PostgreSQL: connection refused")
        return 0

    async def relay_foreign_runs(self, since: datetime, seen: dict[str, str]) -> datetime:
        return since


async def test_a_failing_look_is_logged_once_then_its_recovery(caplog) -> None:
    stopped = asyncio.Event()
    scheduler = DownForAWhile(5, stopped)
    log = logging.getLogger("jupyter_recall.test_claims")
    with caplog.at_level(logging.DEBUG, logger=log.name):
        await take_awaiting_runs(
            scheduler,
            lambda: {},
            grace=0,
            interval=0.001,
            stopped=stopped,
            log=log,
        )
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1
    assert errors[0].exc_info is not None  # the first failure with its traceback
    debug = [r for r in caplog.records if r.levelno == logging.DEBUG]
    assert len(debug) == 4  # the repeats, quietly
    assert "connection refused" in debug[0].getMessage()
    (recovered,) = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert "works again" in recovered.getMessage()
