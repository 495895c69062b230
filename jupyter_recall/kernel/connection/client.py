"""Finding the Jupyter server that owns this kernel, and talking to its REST API.

The HTTP client, errors and event stream are shared with the command line
(``client/remote.py``); what is kernel-specific lives here: the server is the one whose
``jpserver-<pid>.json`` belongs to an ancestor of this process, and the kernel's identity (kernel
id, notebook path) comes from its connection file and the server's sessions. Only the standard
library is imported here, so that ``import jupyter_recall`` stays cheap.
"""

from __future__ import annotations

import os
import re
import socket
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from jupyter_recall.client.documents import TargetDocument
from jupyter_recall.client.remote import (
    DEFAULT_TIMEOUT,
    PROBE_TIMEOUT,
    TOKEN_VARIABLE,
    URL_VARIABLE,
    Client,
    EventStream,
    ServerInfo,
    error_from_response,
    first_answering,
    open_event_stream,
    path_of,
    read_server_file,
    running_servers,
    runtime_dir,
    server_files,
)
from jupyter_recall.core.errors import NotFoundError, RecallConnectionError

__all__ = [
    "DEFAULT_TIMEOUT",
    "MAX_ANCESTORS",
    "PROBE_TIMEOUT",
    "SESSION_NAME_VARIABLE",
    "TOKEN_VARIABLE",
    "URL_VARIABLE",
    "Client",
    "EventStream",
    "Identity",
    "RecallConnectionError",
    "ServerInfo",
    "ancestor_pids",
    "api_path_from_session_name",
    "discover_server",
    "error_from_response",
    "forget_identity",
    "get_client",
    "identity",
    "kernel_id_from_connection_file",
    "open_event_stream",
    "own_kernel_id",
    "path_of",
    "read_server_file",
    "require_server_kernel",
    "running_server",
    "runtime_dir",
    "server_files",
    "set_client",
]

SESSION_NAME_VARIABLE = "JPY_SESSION_NAME"
"""Set by jupyter_server in a notebook kernel's environment: the notebook path (or OS path)."""

MAX_ANCESTORS = 12
"""Processes walked up from the kernel looking for the server (nannies and wrappers between)."""

_CONNECTION_FILE = re.compile(r"kernel-(?P<id>.+)\.json$")


@dataclass(frozen=True)
class Identity:
    """Who this kernel is for the server: its kernel id and the notebook it belongs to."""

    kernel_id: str | None
    path: str | None
    external: bool = False
    """A process the server did not start (a kernel of nbconvert, nbclient, papermill or a
    console, a script): the server cannot run anything in it, so nothing may target it."""

    @property
    def session(self) -> str | None:
        """The session key of recalls: the notebook path, else the kernel id (as the server);
        a process the server did not start and that has no kernel id is its own session."""
        if self.path or self.kernel_id or not self.external:
            return self.path or self.kernel_id
        return f"process-{socket.gethostname()}-{os.getpid()}"

    def target(self) -> TargetDocument | None:
        if self.external:
            return None
        if self.path:
            return {"type": "kernel", "path": self.path}
        if self.kernel_id:
            return {"type": "kernel", "kernel_id": self.kernel_id}
        return None


# --- discovery --------------------------------------------------------------------------------


def _parent_pid(pid: int) -> int | None:
    if pid == os.getpid():
        return os.getppid()
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: read after the last ')'.
    fields = stat.rsplit(")", 1)[-1].split()
    try:
        return int(fields[1])
    except (IndexError, ValueError):
        return None


def ancestor_pids(pid: int | None = None, limit: int = MAX_ANCESTORS) -> list[int]:
    """The parent, grandparent, ... of ``pid`` (this process by default), nearest first. PID 1
    among them: in a container whose command is ``jupyter lab``, the server is PID 1."""
    found: list[int] = []
    current = _parent_pid(pid if pid is not None else os.getpid())
    while current and len(found) < limit and current not in found:
        found.append(current)
        current = _parent_pid(current)
    return found


def discover_server(
    environ: Mapping[str, str] | None = None,
    *,
    runtime: Path | None = None,
    pid: int | None = None,
) -> ServerInfo:
    """The server that owns this kernel: an explicit URL in the environment wins, else the
    ``jpserver-<pid>.json`` of the nearest ancestor process in the Jupyter runtime directory."""
    env = os.environ if environ is None else environ
    token = env.get(TOKEN_VARIABLE)
    url = env.get(URL_VARIABLE)
    if url:
        return ServerInfo(url=url, token=token or "", source=f"${URL_VARIABLE}")
    directory = runtime if runtime is not None else runtime_dir()
    for ancestor in ancestor_pids(pid):
        info = read_server_file(directory / f"jpserver-{ancestor}.json")
        if info is not None:
            return (
                info if token is None else ServerInfo(info.url, token, info.source, info.root_dir)
            )
    running = running_server(directory, token)
    if running is not None:
        return running
    raise RecallConnectionError(
        "no Jupyter server found for this kernel: none of its parent processes "
        f"({', '.join(map(str, ancestor_pids(pid))) or 'none'}) has a jpserver-<pid>.json in "
        f"{directory}, and no running server there has jupyter_recall. Start one (jupyter lab, "
        "jupyter server) before running this notebook, also to execute it with nbconvert, "
        f"nbclient or papermill, or set ${URL_VARIABLE} (and ${TOKEN_VARIABLE}) to the server's "
        "URL and token."
    )


def running_server(directory: Path, token: str | None = None) -> ServerInfo | None:
    """A kernel started by another program (nbconvert, papermill) uses the most recently
    started server of the runtime directory that answers as jupyter_recall."""
    servers = running_servers(directory) if directory.is_dir() else []
    if token is not None:
        servers = [ServerInfo(info.url, token, info.source, info.root_dir) for info in servers]
    client, _ = first_answering(servers, timeout=PROBE_TIMEOUT)
    if client is None:
        return None
    found = client.server
    source = f"{found.source}, a running server (this kernel is not its child)"
    return ServerInfo(found.url, found.token, source, found.root_dir)


def kernel_id_from_connection_file(path: str | None) -> str | None:
    if not path:
        return None
    match = _CONNECTION_FILE.search(os.path.basename(path))
    return match.group("id") if match else None


def own_kernel_id() -> str | None:
    """This kernel's id, from its connection file name ``kernel-<id>.json``; None outside one."""
    try:
        from ipykernel.connect import get_connection_file

        return kernel_id_from_connection_file(get_connection_file())
    except Exception:
        # Not inside an ipykernel (a plain script or terminal IPython): no kernel id.
        return None


def api_path_from_session_name(name: str | None, root_dir: str | None) -> str | None:
    """``JPY_SESSION_NAME`` is the notebook's API path, or its OS path when the frontend gave a
    name; the API path is what targets and sessions use."""
    if not name:
        return None
    if not os.path.isabs(name):
        return name.replace(os.sep, "/")
    if root_dir:
        try:
            relative = os.path.relpath(name, root_dir)
        except ValueError:
            return None
        if not relative.startswith(".."):
            return relative.replace(os.sep, "/")
    return None


# --- the process-wide connection --------------------------------------------------------------


class _Connection:
    """The client and identity of this process, found once (``set_client`` resets them)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.client: Client | None = None
        self.identity: Identity | None = None


_connection = _Connection()


def get_client() -> Client:
    """The client of this process, discovering the server on first use."""
    with _connection.lock:
        if _connection.client is None:
            _connection.client = Client(discover_server())
        return _connection.client


def set_client(client: Client | None) -> None:
    """Use another server (or forget the current one, to discover again on next use)."""
    with _connection.lock:
        _connection.client = client
        _connection.identity = None


def identity(client: Client | None = None) -> Identity:
    """This kernel's id and notebook path, asked from the server's sessions when possible."""
    with _connection.lock:
        if _connection.identity is not None:
            return _connection.identity
    client = client or get_client()
    # Reachability first: "no server" explains more than anything we could say about ourselves.
    client.info()
    kernel_id = own_kernel_id()
    path = client.session_path(kernel_id) if kernel_id else None
    # nbclient and papermill give their kernels a temporary connection file: no kernel id.
    external = path is None and (kernel_id is None or not _has_kernel(client, kernel_id))
    if path is None and not external:
        path = api_path_from_session_name(
            os.environ.get(SESSION_NAME_VARIABLE), client.server.root_dir
        )
    found = Identity(kernel_id=kernel_id, path=path, external=external)
    with _connection.lock:
        _connection.identity = found
    return found


def _has_kernel(client: Client, kernel_id: str) -> bool:
    """Whether the server runs this kernel (one it started without a notebook session, say)."""
    try:
        client.request("GET", f"/api/kernels/{kernel_id}", timeout=min(client.timeout, 10.0))
    except NotFoundError:
        return False
    return True


NOT_THE_SERVERS = (
    "this kernel was not started by the Jupyter server at {url} (it was started by another "
    "program: nbconvert, nbclient, papermill, a console), so the server cannot run {what} in "
    "it. Open the notebook in JupyterLab (or run it in a kernel the server starts, e.g. a "
    "session of POST /api/sessions){instead}."
)
"""What a kernel the server did not start cannot do, and what to do instead."""
HEADLESS_INSTEAD = ", or give target='headless' to run the code in a fresh kernel"


def not_the_servers(what: str, *, code: bool = False) -> str:
    """The message for something that needs a kernel the server started (``what`` it runs;
    ``code``: code, which may run headless instead)."""
    instead = HEADLESS_INSTEAD if code else ""
    return NOT_THE_SERVERS.format(url=get_client().base, what=what, instead=instead)


def require_server_kernel(what: str = "this notebook's jobs and recalls") -> None:
    """Stop here, with what to do, unless the server started this kernel: the first cell of a
    notebook whose jobs or recalls run in its own kernel calls it, so that nbconvert, nbclient
    and papermill stop at once with a clear message instead of failing later."""
    try:
        found = identity()
    except RecallConnectionError as error:
        # No server at all: the same one-line stop as %load_ext's, not a traceback.
        _stop(str(error))
    if found.external:
        _stop(not_the_servers(what))


def _stop(message: str) -> NoReturn:
    """IPython shows its UsageError as one line (no traceback) and fails the cell."""
    try:
        from IPython.core.error import UsageError
    except ImportError:
        raise RecallConnectionError(message) from None
    raise UsageError(f"jupyter_recall: {message}")


def forget_identity() -> None:
    """Ask the server again next time (after the notebook was renamed, say)."""
    with _connection.lock:
        _connection.identity = None
