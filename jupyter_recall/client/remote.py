"""Talking to a running Jupyter server's ``/api/recall`` from another process.

Shared by the kernel side (``kernel/connection/client.py``, which adds finding the server that
owns the kernel) and the ``jupyter recall`` command line (which looks for any running server). Plain
synchronous HTTP (urllib) with timeouts: the server is another process, so a blocking call cannot
deadlock it. Only the standard library is imported here, so that importing it stays cheap.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jupyter_recall.client.documents import InfoDocument, JobDocument, RunDocument
from jupyter_recall.client.ids import not_reserved
from jupyter_recall.client.json_values import check_json
from jupyter_recall.core.errors import (
    ConflictError,
    NotFoundError,
    ParseError,
    PassedWhilePaused,
    PendingRecallExists,
    PermissionDeniedError,
    RecallConnectionError,
    RecallError,
    UnknownServerTool,
    ValidationError,
)
from jupyter_recall.core.text import check_unicode

URL_VARIABLE = "JUPYTER_RECALL_URL"
TOKEN_VARIABLE = "JUPYTER_RECALL_TOKEN"

DEFAULT_TIMEOUT = 30.0
EVERY_PAGE = 1_000
"""The page size of ``Client.every`` (listings answer 100 items a page unless asked)."""
PROBE_TIMEOUT = 2.0
"""Seconds to wait for a candidate server while looking for ours (it is on this machine)."""


@dataclass(frozen=True)
class ServerInfo:
    """Where the server is and how to authenticate; ``source`` says how it was found."""

    url: str
    token: str
    source: str
    root_dir: str | None = None


# --- runtime files ----------------------------------------------------------------------------


def runtime_dir() -> Path:
    from jupyter_core.paths import jupyter_runtime_dir

    return Path(jupyter_runtime_dir())


def read_server_file(path: Path) -> ServerInfo | None:
    """The server described by a ``jpserver-<pid>.json`` file; None if unreadable."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("url"), str):
        return None
    return ServerInfo(
        url=data["url"],
        token=str(data.get("token") or ""),
        source=f"runtime file {path}",
        root_dir=data.get("root_dir"),
    )


def server_files(directory: Path) -> Iterator[Path]:
    return iter(sorted(directory.glob("jpserver-*.json")))


def _process_is_gone(path: Path) -> bool:
    """A runtime file left behind by a server that died without removing it."""
    try:
        pid = int(json.loads(path.read_text()).get("pid"))
    except (OSError, ValueError, TypeError, AttributeError):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # Alive, but someone else's process.
    return False


def running_servers(directory: Path) -> list[ServerInfo]:
    """The servers described in a runtime directory, most recently started first; files of
    processes that are gone are left out."""

    def started(path: Path) -> float:
        try:
            return path.stat().st_mtime
        except OSError:
            return 0.0

    found = []
    for path in sorted(server_files(directory), key=started, reverse=True):
        info = None if _process_is_gone(path) else read_server_file(path)
        if info is not None:
            found.append(info)
    return found


def _same_server(a: str, b: str) -> bool:
    def key(url: str) -> tuple[str, str, str]:
        parts = urllib.parse.urlsplit(url)
        host = "127.0.0.1" if parts.hostname in ("localhost", "::1") else (parts.hostname or "")
        return host, str(parts.port or ""), parts.path.rstrip("/")

    return key(a) == key(b)


def token_for(url: str, candidates: Iterable[ServerInfo]) -> str | None:
    """The token a runtime file records for the server at ``url``, if any."""
    for info in candidates:
        if _same_server(info.url, url):
            return info.token
    return None


def first_answering(
    candidates: Iterable[ServerInfo], *, timeout: float = PROBE_TIMEOUT
) -> tuple[Client | None, list[tuple[ServerInfo, str]]]:
    """The client of the first candidate whose ``/api/recall/info`` answers as jupyter_recall,
    and the candidates that did not, with why (``reason`` of the error, or its text)."""
    tried: list[tuple[ServerInfo, str]] = []
    for info in candidates:
        client = Client(info, timeout=timeout)
        try:
            client.info()
        except RecallError as error:
            tried.append((info, str(getattr(error, "reason", None) or error)))
            continue
        return client, tried
    return None, tried


# --- HTTP -------------------------------------------------------------------------------------


def _rebuild(cls: type[RecallError], server_message: str, **attributes: Any) -> RecallError:
    """An error of ``cls`` whose text is the server's message, exactly."""
    error = cls.__new__(cls)
    Exception.__init__(error, server_message)
    for name, value in attributes.items():
        setattr(error, name, value)
    return error


def _permission_refusal(message: str, permission: Mapping[str, Any]) -> RecallError:
    """A job refused a jupyter_server permission (docs/server.md): the token is fine."""
    return _rebuild(
        PermissionDeniedError,
        message,
        action=str(permission.get("action")),
        resource=str(permission.get("resource")),
        reason=message,
    )


_CONFLICTS: dict[str, tuple[type[RecallError], str, tuple[str, ...]]] = {
    "PendingRecallExists": (PendingRecallExists, "pending_recall", ("session", "recall_id")),
    "PassedWhilePaused": (PassedWhilePaused, "passed_while_paused", ("job_id", "at")),
}
"""409 reasons rebuilt as their subclass, whose fields each surface words its way out from:
the class, the body's object holding the fields, and the fields (strings)."""


def _conflict(message: str, reason: Any, body: Mapping[str, Any]) -> RecallError:
    """A 409: one of ``_CONFLICTS`` when the body holds its fields, else a ``ConflictError``."""
    known = _CONFLICTS.get(reason) if isinstance(reason, str) else None
    if known is None:
        return ConflictError(message)
    cls, key, names = known
    found = body.get(key)
    values = {name: found.get(name) for name in names} if isinstance(found, dict) else {}
    if not values or not all(isinstance(value, str) for value in values.values()):
        return ConflictError(message)
    return _rebuild(cls, message, **values, hint="")


def error_from_response(status: int, body: Any, *, url: str) -> RecallError:
    """The domain error the server described in its JSON error body."""
    if not isinstance(body, dict):
        return RecallError(f"HTTP {status} from {url}: {body!r}"[:2000])
    message = str(body.get("message") or f"HTTP {status}")
    reason = body.get("reason")
    field = str(body.get("field") or "")
    accepted = tuple(str(item) for item in body.get("accepted") or ())
    if reason == "ParseError" or (status == 400 and field == "when" and "cannot parse" in message):
        return _rebuild(
            ParseError,
            message,
            field=field or "when",
            accepted=accepted,
            message=message,
            text="",
            reason=message,
        )
    tool = body.get("unknown_tool")
    if status == 400 and reason == "UnknownServerTool" and isinstance(tool, str):
        return _rebuild(
            UnknownServerTool,
            message,
            field=field,
            accepted=accepted,
            message=message,
            tool=tool,
            hint="",
        )
    if status == 400:
        return _rebuild(ValidationError, message, field=field, accepted=accepted, message=message)
    if status == 404:
        return _rebuild(NotFoundError, message, what="", ident="")
    if status == 409:
        return _conflict(message, reason, body)
    if status == 403 and isinstance(body.get("permission"), dict):
        return _permission_refusal(message, body["permission"])
    if status == 403:
        return RecallConnectionError(
            f"the server at {url} refused our credentials ({message}); check "
            f"${TOKEN_VARIABLE} or the server's runtime file",
            reason=f"it refused the token ({message})",
        )
    return RecallError(f"HTTP {status} from {url}: {message}")


def api_path(*segments: str) -> str:
    """``/api/recall/`` followed by ``segments``, each escaped as one path segment: an id
    holding ``/``, ``?``, a space or ``..`` names that id, never another route or a query.
    The segment after a collection is an id: a route word of the server there (``counts``
    after ``jobs``) is not found, without a request (``ids.RESERVED``); those routes are
    written as literal paths."""
    if len(segments) > 1:
        not_reserved(segments[0], segments[1])
    escaped = []
    for segment in segments:
        if not segment:
            raise ValidationError("ID", "is empty")
        text = urllib.parse.quote(segment, safe="")
        # quote() keeps dots, and a segment of dots alone is resolved by URL parsers.
        escaped.append(text.replace(".", "%2E") if text.strip(".") == "" else text)
    return "/api/recall/" + "/".join(escaped)


MAX_URL = 60_000
"""Characters of a request's URL at most: the server (tornado) drops a request whose request
line and headers pass 64 KiB without answering, which would read as "cannot reach the server";
the headers we send take a few hundred bytes."""


def _too_long(url: str, query: Mapping[str, Any]) -> ValidationError:
    """The error naming what made ``url`` too long: the longest query value, else the path."""
    sizes = {key: len(urllib.parse.quote_plus(str(value))) for key, value in query.items()}
    name = max(sizes, key=sizes.__getitem__) if sizes else "path"
    return ValidationError(
        name,
        f"makes the request's URL {len(url):,} characters long; at most {MAX_URL:,} are sent",
    )


def json_bytes(body: Any) -> bytes:
    """``body`` as UTF-8 JSON: a non-ASCII character takes its 2 to 4 bytes, not a 6- or 12-byte
    escape, against the server's body limit. A lone surrogate, which UTF-8 cannot hold, is sent
    escaped, for the server to refuse naming its field. A value that is no JSON (bytes, a set,
    an object) is a ``ValidationError`` naming where it is in the body (``options.x``)."""
    try:
        return json.dumps(body, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        return json.dumps(body).encode()
    except (TypeError, ValueError):
        for field, value in body.items() if isinstance(body, dict) else [("body", body)]:
            check_json(value, str(field))
        raise


class Client:
    """Synchronous JSON calls to one server's ``/api/recall`` (and ``/api/sessions``)."""

    def __init__(self, server: ServerInfo, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.server = server
        self.timeout = timeout
        self.base = server.url if server.url.endswith("/") else server.url + "/"
        self._checked = False
        self._info: InfoDocument | None = None

    def url(self, path: str, query: Mapping[str, Any] | None = None) -> str:
        # Appended, not urljoin'ed: a "." or ".." segment would climb out of the API (and a
        # full URL would leave the server, with our token).
        if any(segment in (".", "..") for segment in path.split("/")):
            raise ValidationError("path", f"{path!r} has a '.' or '..' segment")
        url = self.base + path.lstrip("/")
        pairs = {k: v for k, v in (query or {}).items() if v is not None}
        for key, value in pairs.items():
            if isinstance(value, str):
                check_unicode(value, key)  # urlencode would fail on a lone surrogate
        full = url + ("?" + urllib.parse.urlencode(pairs) if pairs else "")
        if len(full) > MAX_URL:
            raise _too_long(full, pairs)
        return full

    def headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.server.token:
            headers["Authorization"] = f"token {self.server.token}"
        return headers

    def open(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        timeout: float | None = None,
    ) -> Any:
        """Send a request; the response object (a context manager) on success."""
        data = json_bytes(body) if body is not None else None
        if data is None and method in ("POST", "PATCH", "PUT"):
            data = b"{}"
        url = self.url(path, query)
        try:
            request = urllib.request.Request(url, data=data, method=method, headers=self.headers())
            return urllib.request.urlopen(request, timeout=timeout or self.timeout)
        except urllib.error.HTTPError as error:
            raise self._http_error(error, url) from None
        # ValueError: a URL urllib cannot open ("unknown url type", http.client.InvalidURL).
        except (urllib.error.URLError, OSError, ValueError) as error:
            reason = getattr(error, "reason", error)
            raise RecallConnectionError(
                f"cannot reach the Jupyter server at {self.base} (found through "
                f"{self.server.source}): {reason}",
                reason=str(reason),
            ) from None

    def _http_error(self, error: urllib.error.HTTPError, url: str) -> RecallError:
        with error:  # it holds the response, and its socket, until closed
            raw = error.read().decode("utf-8", "replace")
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = raw
        if error.code == 404 and path_of(url).startswith("/api/recall") and not _is_ours(body):
            return RecallConnectionError(
                f"the Jupyter server at {self.base} does not have the jupyter_recall extension "
                "(enable it: jupyter server extension enable jupyter_recall, then restart it)",
                reason="it does not have the jupyter_recall extension",
            )
        return error_from_response(error.code, body, url=url)

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        timeout: float | None = None,
    ) -> Any:
        if not self._checked and path.startswith("/api/recall/") and path != "/api/recall/info":
            self.info()
        with self.open(method, path, query=query, body=body, timeout=timeout) as response:
            raw = response.read()
            kind = response.headers.get("Content-Type") or "no Content-Type"
        try:
            return json.loads(raw.decode()) if raw else None
        except ValueError:
            # A login page or a proxy's answer: a server, but not one we can talk to.
            why = f"it does not answer as jupyter_recall ({path} answered {kind}, not JSON)"
            raise RecallConnectionError(
                f"the server at {self.base} (found through {self.server.source}): {why}; "
                "check the URL (with the server's base URL) and the token",
                reason=why,
            ) from None

    def pages(
        self, path: str, key: str, *, query: Mapping[str, Any] | None = None
    ) -> Iterator[list[Any]]:
        """Each page of a listing (``/api/recall/jobs``, ``/runs``, ``/jobs/{id}/runs``): the
        items under ``key`` as decoded (``every_job``/``every_run`` type them), following
        ``next_cursor`` until the last page. ``query`` holds
        the filters, sort and ``limit`` (the page size), the same for every page."""
        for items, _ in self.listing(path, key, query=query):
            yield items

    def listing(
        self, path: str, key: str, *, query: Mapping[str, Any] | None = None
    ) -> Iterator[tuple[list[Any], bool]]:
        """``pages``, each with whether the server has more after it (its ``next_cursor``)."""
        cursor: str | None = None
        while True:
            answer = self.request("GET", path, query={**(query or {}), "cursor": cursor})
            cursor = answer.get("next_cursor")
            yield list(answer[key]), cursor is not None
            if cursor is None:
                return

    def every(self, path: str, key: str, *, query: Mapping[str, Any] | None = None) -> list[Any]:
        """Every item of a listing, read in pages of ``EVERY_PAGE``."""
        query = {"limit": str(EVERY_PAGE), **(query or {})}
        return [item for page in self.pages(path, key, query=query) for item in page]

    def every_job(
        self, path: str = "/api/recall/jobs", *, query: Mapping[str, Any] | None = None
    ) -> list[JobDocument]:
        """Every job of a job listing."""
        jobs: list[JobDocument] = self.every(path, "jobs", query=query)
        return jobs

    def every_run(
        self, path: str = "/api/recall/runs", *, query: Mapping[str, Any] | None = None
    ) -> list[RunDocument]:
        """Every run of a run listing (``/api/recall/runs``, ``/jobs/{id}/runs``)."""
        runs: list[RunDocument] = self.every(path, "runs", query=query)
        return runs

    def info(self) -> InfoDocument:
        """``/api/recall/info``; tells "no server" from "a server without the extension"."""
        if self._info is None:
            info: InfoDocument | None = self.request(
                "GET", "/api/recall/info", timeout=min(self.timeout, 10.0)
            )
            if not isinstance(info, dict) or info.get("name") != "jupyter_recall":
                raise RecallConnectionError(
                    f"{self.base} answered /api/recall/info with something else than "
                    f"jupyter_recall: {info!r}"[:500]
                )
            self._info = info
            self._checked = True
            return info
        return self._info

    def session_path(self, kernel_id: str) -> str | None:
        """The notebook path of the server session whose kernel is ``kernel_id``."""
        sessions = self.request("GET", "/api/sessions", timeout=min(self.timeout, 10.0))
        for session in sessions if isinstance(sessions, list) else []:
            if (session.get("kernel") or {}).get("id") == kernel_id:
                path = session.get("path")
                return str(path) if path else None
        return None


class EventStream:
    """An open ``text/event-stream`` response; ``close()`` from another thread ends a read."""

    def __init__(self, connection: http.client.HTTPConnection, response: Any) -> None:
        self._connection = connection
        self._sock = connection.sock
        self.response = response

    def lines(self) -> Iterator[str]:
        for raw in self.response:
            yield raw.decode("utf-8", "replace").rstrip("\r\n")

    def set_timeout(self, seconds: float) -> None:
        """Bound each further read by ``seconds`` (the first ones may have waited less)."""
        if self._sock is not None:
            self._sock.settimeout(seconds)

    def close(self) -> None:
        # Shutting the socket down wakes a thread blocked reading it; close() alone does not.
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(Exception):
            self.response.close()
        self._connection.close()


def open_event_stream(client: Client, path: str, *, timeout: float) -> EventStream:
    """GET ``path`` as Server-Sent Events; ``timeout`` bounds each read (heartbeats keep it
    alive)."""
    url = client.url(path)
    parts = urllib.parse.urlsplit(url)
    connection: http.client.HTTPConnection
    if parts.scheme == "https":
        connection = http.client.HTTPSConnection(parts.netloc, timeout=timeout)
    else:
        connection = http.client.HTTPConnection(parts.netloc, timeout=timeout)
    headers = {**client.headers(), "Accept": "text/event-stream"}
    target = parts.path + ("?" + parts.query if parts.query else "")
    try:
        connection.request("GET", target, headers=headers)
        stream = EventStream(connection, None)
        response = connection.getresponse()
    except OSError as error:
        connection.close()
        raise RecallConnectionError(f"cannot open the event stream {url}: {error}") from None
    stream.response = response
    if response.status != 200:
        raw = response.read().decode("utf-8", "replace")
        connection.close()
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = raw
        raise error_from_response(response.status, body, url=url)
    return stream


def path_of(url: str) -> str:
    return urllib.parse.urlsplit(url).path


def _is_ours(body: Any) -> bool:
    """Our handlers answer 404 with a ``NotFoundError`` body; a missing route does not."""
    return isinstance(body, dict) and body.get("reason") == "NotFoundError"


# --- Server-Sent Events -----------------------------------------------------------------------


def parse_sse(lines: Iterable[str]) -> Iterator[tuple[str, str]]:
    """``(event, data)`` for each event of a text/event-stream; comments are skipped."""
    event, data = "message", list[str]()
    for line in lines:
        if not line:
            if data:
                yield event, "\n".join(data)
            event, data = "message", list[str]()
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
