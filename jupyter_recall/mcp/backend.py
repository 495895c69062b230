"""What the MCP tools call: the REST API of one server, as one caller.

``remote.Client`` is one (``jupyter recall mcp`` with the CLI's token); ``CallerClient`` is the
other: inside the Jupyter server, it forwards the headers of the authenticated MCP request, so
that the REST handlers authenticate, authorize and scope the same user again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from jupyter_recall.client.remote import Client, ServerInfo

NOT_FORWARDED = frozenset(
    {
        *("content-length", "content-type", "accept", "accept-encoding", "connection"),
        *("transfer-encoding", "keep-alive", "upgrade", "te", "trailer", "proxy-authorization"),
    }
)
"""Headers of the transport, not of the caller. The rest goes along: the token, the login cookie,
its XSRF token, the Host and Origin checked with them, and whatever else the server's
IdentityProvider reads to know who it is."""


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
        self.credentials = {
            key: value
            for key, value in credentials.items()
            if key.lower() not in NOT_FORWARDED and not key.lower().startswith("mcp-")
        }

    def headers(self) -> dict[str, str]:
        return {
            "Content-Type": "application/json",
            "Accept": "application/json",
            **self.credentials,
        }
