"""The engine id of a Jupyter server's scheduler (``RecallApp``): its own, and the same across
its restarts where it can be.

The id names the server's lease and its runs. A server restarted under the id of its crashed
predecessor interrupts the runs that one left ``running`` at once, instead of waiting for its
lease to expire; two live servers under one id would interrupt each other's runs. The id is
read while jupyter_server loads its extensions, before it binds its port: a configured port
that another process holds is not the one this server will get (jupyter_server moves on to
another), so such a server, and one given port 0, takes an id of its own process instead.
"""

from __future__ import annotations

import os
import socket
from typing import Any


def server_engine_id(serverapp: Any) -> str:
    """``server@<host>:<port>``, ``server@<host>:<unix socket>``, or, when the address cannot
    say which server this is, ``server@<host>:pid<pid>``."""
    host = socket.gethostname()
    unix_socket = getattr(serverapp, "sock", "") or ""
    if unix_socket:
        return f"server@{host}:{unix_socket}"
    port = int(getattr(serverapp, "port", 0) or 0)
    if port and port_is_free(getattr(serverapp, "ip", "") or "", port):
        return f"server@{host}:{port}"
    return f"server@{host}:pid{os.getpid()}"


def port_is_free(ip: str, port: int) -> bool:
    """Whether this process could listen on ``port`` (as jupyter_server will try first)."""
    family = socket.AF_INET6 if ":" in ip else socket.AF_INET
    with socket.socket(family) as probe:
        # As jupyter_server's own sockets: a port in TIME_WAIT after a restart is free.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((ip, port))
        except OSError:
            return False
    return True
