"""A server's engine id: its address where that says which server it is, else its process."""

from __future__ import annotations

import os
import socket
from types import SimpleNamespace

from jupyter_recall.server.engine_name import server_engine_id

HOST = socket.gethostname()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_free_configured_port_names_the_server_across_restarts() -> None:
    port = free_port()
    serverapp = SimpleNamespace(port=port, ip="127.0.0.1", sock="")
    assert server_engine_id(serverapp) == f"server@{HOST}:{port}"
    assert server_engine_id(serverapp) == server_engine_id(serverapp)


def test_a_port_another_server_holds_is_not_this_servers_name() -> None:
    # A second `jupyter lab` on the machine: jupyter_server moves it to another port after the
    # extensions loaded, and under the first one's id it would interrupt that one's runs.
    with socket.socket() as first:
        first.bind(("127.0.0.1", 0))
        first.listen()
        port = first.getsockname()[1]
        serverapp = SimpleNamespace(port=port, ip="127.0.0.1", sock="")
        assert server_engine_id(serverapp) == f"server@{HOST}:pid{os.getpid()}"


def test_port_zero_and_a_unix_socket() -> None:
    any_port = SimpleNamespace(port=0, ip="127.0.0.1", sock="")
    assert server_engine_id(any_port) == f"server@{HOST}:pid{os.getpid()}"
    on_socket = SimpleNamespace(port=8888, ip="", sock="/run/jupyter/alice.sock")
    assert server_engine_id(on_socket) == f"server@{HOST}:/run/jupyter/alice.sock"
