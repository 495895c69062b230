"""An IdentityProvider for the server of test_owners.py: the token authenticates, the
``X-Test-User`` header names who (as JupyterHub tells users apart), so rows are scoped by user."""

from __future__ import annotations

from typing import Any

from jupyter_server.auth.identity import IdentityProvider, User
from jupyter_server.utils import ensure_async


class HeaderUsers(IdentityProvider):
    async def get_user(self, handler: Any) -> User | None:
        if await ensure_async(super().get_user(handler)) is None:
            return None
        return User(username=handler.request.headers.get("X-Test-User", "alice"))
