"""Start and stop of the extension when something fails: the server neither hangs nor lies."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from jupyter_recall.core.errors import StoreError
from jupyter_recall.server.app import RecallApp
from jupyter_recall.store.base import JobFilter
from jupyter_recall.store.sqlite import SQLiteStore


def recall_app(serverapp: Any) -> RecallApp:
    (app,) = serverapp.extension_manager.extension_apps["jupyter_recall"]
    assert isinstance(app, RecallApp)
    return app


async def test_a_failing_step_of_stop_is_logged_and_the_others_still_run(
    jp_serverapp, monkeypatch, caplog
):
    app = recall_app(jp_serverapp)

    async def failing() -> None:
        raise OSError("the channel's socket is gone")

    monkeypatch.setattr(app.notifications, "aclose", failing)
    with caplog.at_level(logging.ERROR):
        await app.stop_extension()  # returns: jupyter_server's shutdown goes on
    assert ".failing failed while stopping" in caplog.text
    assert "the channel's socket is gone" in caplog.text
    # The steps after the failing one ran: the store is closed.
    with pytest.raises(Exception, match="closed"):
        app._store.list_jobs(owner="anyone", where=JobFilter())


async def test_a_step_of_stop_that_hangs_is_given_up_on_naming_it_and_the_others_run(
    jp_serverapp, monkeypatch, caplog
):
    app = recall_app(jp_serverapp)
    monkeypatch.setattr("jupyter_recall.server.app.STOP_STEP_TIMEOUT", 0.5)

    async def hanging() -> None:
        await asyncio.Event().wait()

    monkeypatch.setattr(app.notifications, "aclose", hanging)
    with caplog.at_level(logging.INFO):
        await asyncio.wait_for(app.stop_extension(), 30)
    assert ".hanging did not end in 0.5 s while stopping; going on" in caplog.text
    # Where it waited, followed down the awaits of the step's task.
    assert "<locals>.hanging (" in caplog.text
    assert "-> Event.wait (" in caplog.text
    assert "jupyter_recall: stopped" in caplog.text
    with pytest.raises(Exception, match="closed"):
        app._store.list_jobs(owner="anyone", where=JobFilter())


class LockedStore(SQLiteStore):
    """A database another process keeps locked: the scheduler cannot take its lease."""

    def renew_lease(self, engine_id: str, **kwargs: Any) -> None:
        raise StoreError("database is locked")


@pytest.fixture
def locked_database(monkeypatch):
    monkeypatch.setattr("jupyter_recall.store.sqlite.SQLiteStore", LockedStore)


@pytest.mark.usefixtures("locked_database")
async def test_a_scheduler_that_cannot_start_makes_the_api_answer_503_naming_why(
    jp_serverapp, jp_fetch
):
    # The server started (this fixture returned) instead of waiting for the scheduler forever.
    assert recall_app(jp_serverapp).failure is not None
    response = await jp_fetch("api", "recall", "jobs", raise_error=False)
    assert response.code == 503
    message = json.loads(response.body)["message"]
    assert "jupyter_recall is not running" in message
    assert "database is locked" in message
