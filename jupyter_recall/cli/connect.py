"""Which server the command line talks to.

Explicit beats discovered: ``--url``/``--token``, then ``$JUPYTER_RECALL_URL`` and
``$JUPYTER_RECALL_TOKEN``, then every ``jpserver-*.json`` in the Jupyter runtime directory, most
recent first, keeping the first whose ``/api/recall/info`` answers (several servers may run, not
all with the extension).
"""

from __future__ import annotations

import dataclasses
import os
import urllib.parse
from collections.abc import Mapping
from pathlib import Path

from jupyter_recall.client.remote import (
    PROBE_TIMEOUT,
    TOKEN_VARIABLE,
    URL_VARIABLE,
    Client,
    ServerInfo,
    first_answering,
    running_servers,
    runtime_dir,
    token_for,
)
from jupyter_recall.core.errors import RecallConnectionError, ValidationError

EXPLICIT_PROBE_TIMEOUT = 10.0
"""An explicit URL may be a remote server: give it longer than a local candidate."""

HOW_TO_FIX = (
    "start one with `jupyter lab` or `jupyter server` (jupyter_recall enabled), or pass "
    f"--url and --token (or set ${URL_VARIABLE} and ${TOKEN_VARIABLE})"
)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def connect(
    url: str | None = None,
    token: str | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    timeout: float = 30.0,
    url_source: str = "--url",
) -> Client:
    """A client of a running server with jupyter_recall; RecallConnectionError (one line that
    says what was tried and how to fix it) when there is none."""
    env = os.environ if environ is None else environ
    token = token if token is not None else env.get(TOKEN_VARIABLE)
    directory = runtime_dir()
    servers = running_servers(directory) if directory.is_dir() else []
    explicit = url or env.get(URL_VARIABLE)
    if explicit:
        source = url_source if url else f"${URL_VARIABLE}"
        check_url(explicit, source)
        chosen = token if token is not None else token_for(explicit, servers)
        candidate = ServerInfo(explicit, chosen or "", source, root_dir_of(explicit, servers))
        client, tried = first_answering([candidate], timeout=min(timeout, EXPLICIT_PROBE_TIMEOUT))
        if client is None:
            raise RecallConnectionError(
                _one_line(
                    f"cannot use the Jupyter server at {explicit} ({source}): {tried[0][1]}; "
                    f"check its URL and token, or {HOW_TO_FIX}"
                )
            )
    else:
        if token is not None:
            servers = [dataclasses.replace(info, token=token) for info in servers]
        client, tried = first_answering(servers, timeout=PROBE_TIMEOUT)
        if client is None:
            raise RecallConnectionError(_one_line(_no_server_message(directory, tried)))
    client.timeout = timeout
    return client


def root_dir_of(url: str, servers: list[ServerInfo]) -> str | None:
    """The root directory the runtime file of the server at ``url`` records, if any (for the
    filesystem paths of notebooks)."""
    for info in servers:
        if token_for(url, [info]) is not None:
            return info.root_dir
    return None


def check_url(url: str, source: str) -> None:
    """A server URL urllib can open, or a ValidationError naming where it was given."""
    parts = urllib.parse.urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValidationError(
            source,
            f"not the http(s) URL of a Jupyter server: {url!r}",
            accepted=("http://HOST:PORT/", "https://HOST/BASE_URL/"),
        )
    try:
        _ = parts.port  # reading it checks it: "Port out of range 0-65535"
    except ValueError as exc:
        raise ValidationError(source, f"{exc} in {url!r}") from None


def _no_server_message(directory: Path, tried: list[tuple[ServerInfo, str]]) -> str:
    if tried:
        attempts = "; ".join(f"{info.url} ({info.source}): {why}" for info, why in tried)
        looked = f"tried {len(tried)} server(s) from {directory}: {attempts}"
    else:
        looked = f"no jpserver-*.json file of a running server in {directory}"
    return f"no running Jupyter server with jupyter_recall found ({looked}); {HOW_TO_FIX}"
