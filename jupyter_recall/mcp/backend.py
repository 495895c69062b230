"""What the MCP tools call: the REST API of one server, as one caller.

``remote.Client`` is one (``jupyter recall mcp`` with the CLI's token); ``CallerClient`` is the
other: inside the Jupyter server, it forwards the credentials of the authenticated MCP request,
so that the REST handlers authenticate, authorize and scope the same user again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from jupyter_recall.remote import Client, ServerInfo

FORWARDED_HEADERS = ("Authorization", "Cookie", "X-XSRFToken")
"""What authenticates a request to jupyter_server: its token, or its login cookie and XSRF token."""


class Backend(Protocol):
    def request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        timeout: float | None = None,
    ) -> Any: ...


class CallerClient(Client):
    """A client that speaks with the credentials of one authenticated request."""

    def __init__(self, server: ServerInfo, credentials: Mapping[str, str]) -> None:
        super().__init__(server)
        self.credentials = {k: v for k, v in credentials.items() if k in FORWARDED_HEADERS}

    def headers(self) -> dict[str, str]:
        return {
            "Content-Type": "application/json",
            "Accept": "application/json",
            **self.credentials,
        }
