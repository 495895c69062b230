"""POST /api/recall/parse changes nothing: it is authorized as a read of ``recall``."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from jupyter_server.auth import Authorizer
from traitlets.config import Config

from tests.server.rest import call


class ReadOnlyRecall(Authorizer):
    """May read ``recall`` (and anything else), may not write it; records what it was asked."""

    asked: ClassVar[list[tuple[str, str, str]]] = []

    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        self.asked.append((handler.request.method, action, resource))
        return not (resource == "recall" and action != "read")


@pytest.fixture
def jp_server_config(jp_server_config: Config) -> Config:
    jp_server_config["ServerApp"]["authorizer_class"] = ReadOnlyRecall
    return jp_server_config


async def test_a_read_only_user_may_parse_but_not_create(jp_fetch):
    ReadOnlyRecall.asked.clear()
    parsed = await call(jp_fetch, "POST", "api/recall/parse", {"when": "every day at 09:00"})
    assert parsed["kind"] == "cron"
    assert ("POST", "read", "recall") in ReadOnlyRecall.asked
    assert ("POST", "write", "recall") not in ReadOnlyRecall.asked
    body = {"when": "in 1h", "action": {"type": "notification", "message": "hi"}}
    await call(jp_fetch, "POST", "api/recall/jobs", body, expect=403)
    assert ("POST", "write", "recall") in ReadOnlyRecall.asked
    assert (await call(jp_fetch, "GET", "api/recall/jobs"))["jobs"] == []
