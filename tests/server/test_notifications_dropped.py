"""A session's notifications that a stream ended before sending go back to the buffer: they
were answered as delivered, and the kernel takes them when it connects again. A real SQLite
store, the server's own hub and notification service; no HTTP (the stream's queue is what the
handler reads)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from jupyter_recall.core.clock import SystemClock
from jupyter_recall.engine.notify import Notification
from jupyter_recall.server.notifications import NotificationService
from jupyter_recall.server.sse import QUEUE_LIMIT, EventHub
from jupyter_recall.store.urls import open_store
from jupyter_recall.store.watchers import BUFFER_LIMIT

OWNER = "someone"
SESSION = "work.ipynb"

pytestmark = pytest.mark.anyio


@pytest.fixture
async def service(tmp_path: Path) -> AsyncIterator[NotificationService]:
    store = open_store(f"sqlite:///{tmp_path / 'recall.sqlite'}")
    notifications = NotificationService(store, EventHub(None), SystemClock(), {})
    try:
        yield notifications
    finally:
        await notifications.aclose()
        store.close()


def note(n: int, session: str = SESSION) -> Notification:
    return Notification(
        id=f"n{n:05d}",
        owner=OWNER,
        message=f"message {n}",
        created_at=datetime.now(UTC),
        session=session,
    )


async def settled(service: NotificationService) -> list[str]:
    """The ids the session's kernel takes once the dropped ones are back in the buffer."""
    await service.aclose()
    return [document["id"] for document in await service.take(OWNER, SESSION)]


async def test_a_stream_too_far_behind_puts_its_sessions_notifications_back(service):
    stream = service.hub.open(OWNER, SESSION)
    other = service.hub.open(OWNER, "other.ipynb")
    for n in range(QUEUE_LIMIT):
        assert await service.to_session(note(n)) is True
    # The one that finds the queue full ends the stream: it and everything queued were lost.
    assert await service.to_session(note(QUEUE_LIMIT)) is True
    assert stream.get_nowait() is None
    taken = await settled(service)
    # The buffer keeps a session's newest BUFFER_LIMIT, in order, the last one included.
    assert taken == [f"n{n:05d}" for n in range(QUEUE_LIMIT + 1 - BUFFER_LIMIT, QUEUE_LIMIT + 1)]
    assert not service.hub.connected(OWNER, SESSION)
    # Another session's stream of the owner got (and dropped) the same: none of them was its.
    assert other.get_nowait() is None
    assert await service.take(OWNER, "other.ipynb") == []


async def test_a_stream_closed_with_notifications_queued_puts_them_back(service):
    stream = service.hub.open(OWNER, SESSION)
    for n in range(3):
        await service.to_session(note(n))
    await service.to_ui(note(99, session=SESSION))  # for JupyterLab: not the kernel's to keep
    # What the events handler does when its connection closes.
    service.hub.end(OWNER, stream)
    assert await settled(service) == ["n00000", "n00001", "n00002"]


async def test_one_the_handler_could_not_send_goes_back_after_the_stream_closed(service):
    stream = service.hub.open(OWNER, SESSION)
    await service.to_session(note(1))
    document = stream.get_nowait()
    assert document is not None
    service.hub.end(OWNER, stream)
    # The handler was writing it when the connection closed.
    service.hub.end(OWNER, stream, unsent=[document])
    assert await settled(service) == ["n00001"]


async def test_a_stream_without_a_session_buffers_nothing(service):
    stream = service.hub.open(OWNER)
    await service.to_ui(note(1))
    service.hub.end(OWNER, stream)
    await asyncio.sleep(0)
    assert await settled(service) == []
