"""Real receivers on loopback for channel tests: an HTTP server that records the JSON it is
POSTed, and an SMTP server (aiosmtpd) that records the messages it is sent."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Hook:
    """What the HTTP receiver got, and how it answers: ``status``, after the answers queued
    in ``first_answers`` (a status and its headers each) are used up."""

    url: str
    status: int = 200
    first_answers: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    received: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    arrived: threading.Condition = field(default_factory=threading.Condition)

    def wait(self, count: int = 1, timeout: float = 10.0) -> list[dict[str, Any]]:
        with self.arrived:
            self.arrived.wait_for(lambda: len(self.received) >= count, timeout)
        assert len(self.received) >= count, f"{len(self.received)} of {count} POSTs arrived"
        return list(self.received)


@contextmanager
def http_receiver(path: str = "/hook") -> Iterator[Hook]:
    hook_holder: list[Hook] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            hook = hook_holder[0]
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with hook.arrived:
                hook.received.append(json.loads(body))
                hook.headers.append(dict(self.headers.items()))
                hook.arrived.notify_all()
                status, headers = (
                    hook.first_answers.pop(0) if hook.first_answers else (hook.status, {})
                )
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    hook_holder.append(Hook(f"http://127.0.0.1:{server.server_address[1]}{path}"))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield hook_holder[0]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@dataclass
class Mail:
    mail_from: str
    rcpt_tos: list[str]
    message: Message


@dataclass
class Mailbox:
    host: str
    port: int
    received: list[Mail] = field(default_factory=list)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.received.append(
            Mail(envelope.mail_from, list(envelope.rcpt_tos), message_from_bytes(envelope.content))
        )
        return "250 Message accepted for delivery"

    def wait(self, count: int = 1, timeout: float = 10.0) -> list[Mail]:
        deadline = time.monotonic() + timeout
        while len(self.received) < count and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(self.received) >= count, f"{len(self.received)} of {count} mails arrived"
        return list(self.received)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def smtp_receiver() -> Iterator[Mailbox]:
    from aiosmtpd.controller import Controller

    mailbox = Mailbox("127.0.0.1", free_port())
    controller = Controller(mailbox, hostname=mailbox.host, port=mailbox.port)
    controller.start()
    try:
        yield mailbox
    finally:
        controller.stop()
