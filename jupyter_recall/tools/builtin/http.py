"""``http.get|post|download`` with the standard library (urllib, in a worker thread).

Results carry ``status_code``, ``headers`` and ``text`` (plus ``json`` when the body is JSON);
a 4xx/5xx answer is a failure that still carries them. Bodies are kept up to the output limit.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from email.message import Message
from pathlib import Path
from typing import Any, NotRequired, TypedDict

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.tools.registry import (
    ToolContext,
    ToolResult,
    builtin,
    check_seconds,
    failed,
    ok,
)

DEFAULT_TIMEOUT = 30.0
MAX_TIMEOUT = 3600.0
DOWNLOAD_LIMIT = 1 << 30
"""Bytes a download may write (1 GiB) unless ``max_bytes`` says otherwise."""
CHUNK = 1 << 16
SCHEMES = ("http", "https")


@dataclass
class Response:
    url: str
    status_code: int
    reason: str
    headers: dict[str, str]
    body: bytes
    size: int
    truncated: bool
    charset: str | None


def _check_url(url: object) -> str:
    if not isinstance(url, str):
        raise ValidationError("url", f"must be a string, got {url!r}")
    scheme = urllib.parse.urlsplit(url).scheme
    if scheme not in SCHEMES:
        raise ValidationError("url", f"unsupported scheme in {url!r}", accepted=SCHEMES)
    return url


def _check_timeout(value: object) -> float:
    return check_seconds(value, "timeout", MAX_TIMEOUT)


def _check_headers(headers: object) -> dict[str, str]:
    if headers is None:
        return {}
    if not isinstance(headers, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in headers.items()
    ):
        raise ValidationError("headers", f"must be an object of strings, got {headers!r}")
    return dict(headers)


def _with_query(url: str, params: object) -> str:
    if params is None:
        return url
    if not isinstance(params, Mapping):
        raise ValidationError("params", f"must be an object, got {params!r}")
    query = urllib.parse.urlencode({k: str(v) for k, v in params.items()})
    return f"{url}{'&' if '?' in url else '?'}{query}"


def _read(handle: Any, limit: int) -> tuple[bytes, int, bool]:
    body = handle.read(limit + 1)
    truncated = len(body) > limit
    size = len(body)
    if truncated:
        # Drain (bounded by the timeout) only to report the full size.
        while chunk := handle.read(CHUNK):
            size += len(chunk)
        body = body[:limit]
    return body, size, truncated


def _exchange(request: urllib.request.Request, timeout: float, limit: int) -> Response:
    try:
        handle = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as error:
        handle = error
    with handle:
        body, size, truncated = _read(handle, limit)
        message: Message = handle.headers
        return Response(
            url=handle.geturl(),
            status_code=handle.status,
            reason=str(handle.reason or ""),
            headers=dict(message.items()),
            body=body,
            size=size,
            truncated=truncated,
            charset=message.get_content_charset(),
        )


class HttpData(TypedDict):
    """What ``http.*`` answer: the response, its text, and its JSON when it is some."""

    url: str
    status_code: int
    headers: dict[str, str]
    text: str
    truncated: bool
    json: NotRequired[Any]


def _data(response: Response) -> HttpData:
    text = response.body.decode(response.charset or "utf-8", errors="replace")
    if response.truncated:
        text += f"\n[truncated: {len(response.body)} of {response.size} bytes shown]"
    data: HttpData = {
        "url": response.url,
        "status_code": response.status_code,
        "headers": response.headers,
        "text": text,
        "truncated": response.truncated,
    }
    if "json" in response.headers.get("Content-Type", "") and not response.truncated:
        try:
            data["json"] = json.loads(text)
        except ValueError:
            data["json"] = None
    return data


async def _request(
    context: ToolContext, tool: str, request: urllib.request.Request, timeout: float
) -> ToolResult:
    try:
        response = await context.run_blocking(_exchange, request, timeout, context.output_limit)
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", None) or error
        return failed(f"{tool}: {request.full_url} failed: {reason}")
    data = _data(response)
    if response.status_code >= 400:
        return failed(
            f"{tool}: HTTP {response.status_code} {response.reason} from {request.full_url}",
            data,
        )
    return ok(data)


QueryValue = str | int | float | bool
"""A value of ``http.get``'s ``params``: sent as its text in the URL's query."""


@builtin("http.get", "GET a URL: url, params=None, headers=None, timeout=30.")
async def get(
    context: ToolContext,
    url: str,
    *,
    params: dict[str, QueryValue] | None = None,
    headers: dict[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> ToolResult:
    request = urllib.request.Request(
        _with_query(_check_url(url), params), headers=_check_headers(headers), method="GET"
    )
    return await _request(context, "http.get", request, _check_timeout(timeout))


def _body(json_body: object, data: object, headers: dict[str, str]) -> bytes:
    if json_body is not None and data is not None:
        raise ValidationError("json", "give either json or data, not both")
    if json_body is not None:
        headers.setdefault("Content-Type", "application/json")
        return json.dumps(json_body).encode()
    if data is None:
        return b""
    if isinstance(data, str):
        return data.encode()
    if isinstance(data, Mapping):
        headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
        return urllib.parse.urlencode({k: str(v) for k, v in data.items()}).encode()
    raise ValidationError("data", f"must be a string or an object (form fields), got {data!r}")


@builtin(
    "http.post",
    "POST to a URL: url, json=None (a JSON body) or data=None (text or form fields), "
    "headers=None, timeout=30.",
)
async def post(
    context: ToolContext,
    url: str,
    *,
    json: Any = None,  # the name agents use for a JSON body
    data: Any = None,
    headers: dict[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> ToolResult:
    all_headers = _check_headers(headers)
    body = _body(json, data, all_headers)
    request = urllib.request.Request(_check_url(url), data=body, headers=all_headers, method="POST")
    return await _request(context, "http.post", request, _check_timeout(timeout))


def _save(
    request: urllib.request.Request, timeout: float, target: Path, max_bytes: int
) -> tuple[int, int, dict[str, str], str]:
    partial = target.with_name(target.name + ".part")
    target.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with urllib.request.urlopen(request, timeout=timeout) as handle, partial.open("wb") as out:
        while chunk := handle.read(CHUNK):
            written += len(chunk)
            if written > max_bytes:
                out.close()
                partial.unlink()
                raise ValidationError("max_bytes", f"the download exceeds {max_bytes} bytes")
            out.write(chunk)
        status, headers, url = handle.status, dict(handle.headers.items()), handle.geturl()
    partial.replace(target)
    return written, status, headers, url


@builtin(
    "http.download",
    "Download a URL to a file under the root: url, path, headers=None, timeout=300, "
    "max_bytes=1 GiB.",
)
async def download(
    context: ToolContext,
    url: str,
    path: str,
    *,
    headers: dict[str, str] | None = None,
    timeout: float = 300.0,
    max_bytes: int = DOWNLOAD_LIMIT,
) -> ToolResult:
    target = context.resolve(path)
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
        raise ValidationError("max_bytes", f"must be an integer >= 1, got {max_bytes!r}")
    request = urllib.request.Request(_check_url(url), headers=_check_headers(headers), method="GET")
    started = time.monotonic()
    try:
        written, status, response_headers, final_url = await context.run_blocking(
            _save, request, _check_timeout(timeout), target, max_bytes
        )
    except urllib.error.HTTPError as error:
        error.close()  # it holds the response, and its socket, until closed
        return failed(f"http.download: HTTP {error.code} {error.reason} from {url}")
    except (urllib.error.URLError, OSError) as error:
        return failed(f"http.download: {url} failed: {getattr(error, 'reason', None) or error}")
    return ok(
        {
            "url": final_url,
            "path": str(Path(target).relative_to(context.root)).replace("\\", "/"),
            "bytes": written,
            "status_code": status,
            "headers": response_headers,
            "elapsed": round(time.monotonic() - started, 3),
        }
    )


TOOLS = (get, post, download)
