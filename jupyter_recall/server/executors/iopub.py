"""Our own connection to one kernel: shell, control and IOPub, routed by parent message id.

The browser's websocket is never used: runs are sent with a separate session, so their replies
and outputs carry parent ids that no notebook cell knows, and they never show up in cells.
Sockets are ZMQStreams with receive callbacks on the server's event loop, so no background task
is needed to read them: each message is pushed into the inbox of the request it answers.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypedDict

import anyio
import zmq
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from jupyter_client.session import Session
from zmq.eventloop.zmqstream import ZMQStream

from jupyter_recall.core.errors import KernelGone
from jupyter_recall.engine.executors import OutputSink

log = logging.getLogger(__name__)

Message = dict[str, Any]
Envelope = tuple[str, Message]
"""(channel name, deserialized message)."""


class ErrorContent(TypedDict, total=False):
    """An error as the messaging protocol (an ``error`` message, a failed ``execute_reply``)
    and nbformat's error outputs name it; read with defaults: a kernel may leave any out."""

    ename: str
    evalue: str
    traceback: list[str]


class ExecuteReply(ErrorContent, total=False):
    """The content of an ``execute_reply``: ``status`` is ok, error or aborted."""

    status: str
    execution_count: int


_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")

Liveness = Callable[[], Awaitable[None]]


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def _as_stream(socket: Any) -> ZMQStream:
    if isinstance(socket, ZMQStream):
        return socket
    # A ZMQStream needs a plain socket; asyncio sockets are shadowed, not re-created.
    return ZMQStream(zmq.Socket.shadow(socket.underlying))


class ChannelRouter:
    """A router of a kernel's replies and IOPub messages by parent id, whatever carries them.

    Subclasses carry the messages: ZMQ sockets here, a kernel gateway's websocket in
    ``gateway_channels.py``. They call ``_route`` for each message received and implement
    ``send``.
    """

    def __init__(self, session: Session, *, label: str) -> None:
        self.label = label
        """What the kernel is called in messages: ``kernel <id>``, ``fresh kernel <id>``."""
        self.session = session
        self._inboxes: dict[str, MemoryObjectSendStream[Envelope]] = {}
        self.closed = False
        self.kernel_info: Message | None = None
        self.generation = 0
        """Counts the fresh starts seen; subshells of an earlier generation are gone."""
        self.lost = False
        """The server serving the kernel's websocket (a gateway) said the kernel died: it
        publishes a parentless ``restarting`` (or ``dead``) status when the kernel is replaced."""

    @property
    def features(self) -> list[str]:
        if self.kernel_info is None:
            return []
        return list(self.kernel_info.get("supported_features", []))

    @property
    def language(self) -> str:
        if self.kernel_info is None:
            return ""
        return str(self.kernel_info.get("language_info", {}).get("name", ""))

    def _route(self, channel: str, msg: Message) -> None:
        if _is_fresh_start(channel, msg):
            # Requests in flight are not failed here: this status may come late (our SUB socket
            # reconnects to the new process lazily), after requests that the new process answers.
            # A request lost with the old process is caught by the executor's liveness check.
            self.generation += 1
            return
        if is_kernel_lost(channel, msg):
            self.lost = True
            return
        parent_id = msg.get("parent_header", {}).get("msg_id")
        inbox = self._inboxes.get(parent_id) if parent_id else None
        if inbox is not None:
            inbox.send_nowait((channel, msg))

    def new_message(
        self, msg_type: str, content: dict[str, Any], *, subshell_id: str | None = None
    ) -> Message:
        msg: Message = self.session.msg(msg_type, content)
        if subshell_id is not None:
            msg["header"]["subshell_id"] = subshell_id
        return msg

    @contextmanager
    def track(self, msg: Message) -> Iterator[MemoryObjectReceiveStream[Envelope]]:
        """An inbox of everything whose parent is ``msg``, for as long as the block runs."""
        if self.closed:
            raise KernelGone(f"the connection to {self.label} is closed")
        msg_id = msg["header"]["msg_id"]
        send, receive = anyio.create_memory_object_stream[Envelope](math.inf)
        self._inboxes[msg_id] = send
        try:
            yield receive
        finally:
            self._inboxes.pop(msg_id, None)
            send.close()
            receive.close()

    def send(self, channel: str, msg: Message) -> None:
        raise NotImplementedError

    async def request(
        self, channel: str, msg_type: str, content: dict[str, Any], *, timeout: float
    ) -> Message:
        """Send a request and return its reply's content (within ``timeout`` seconds)."""
        msg = self.new_message(msg_type, content)
        with self.track(msg) as inbox, anyio.fail_after(timeout):
            self.send(channel, msg)
            async for where, reply in inbox:
                if where == channel:
                    return dict(reply["content"])
        raise KernelGone(f"the connection to {self.label} closed")

    async def handshake(self, *, timeout: float) -> Message:
        """Wait until the kernel answers and our IOPub subscription is live; keep kernel_info.

        A fresh SUB socket misses what is published before its subscription reaches the kernel,
        so a kernel_info request is repeated until its busy/idle status is seen on IOPub.
        Control is used because the main shell may be busy with a user's cell.
        """
        with anyio.fail_after(timeout):
            attempt = 0
            while True:
                attempt += 1
                channels = ("control", "shell") if attempt > 3 else ("control",)
                info = await self._try_kernel_info(channels, wait=min(0.2 * attempt, 2.0))
                if info is not None:
                    self.kernel_info = info
                    return info

    async def _try_kernel_info(self, channels: tuple[str, ...], *, wait: float) -> Message | None:
        msg = self.new_message("kernel_info_request", {})
        reply: Message | None = None
        seen_iopub = False
        with self.track(msg) as inbox:
            for channel in channels:
                self.send(channel, msg)
            with anyio.move_on_after(wait):
                async for where, received in inbox:
                    if where == "iopub":
                        seen_iopub = True
                    elif where in channels and received["header"]["msg_type"].endswith("_reply"):
                        reply = dict(received["content"])
                    if reply is not None and seen_iopub:
                        return reply
        return None

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for inbox in list(self._inboxes.values()):
            inbox.close()
        self._inboxes.clear()


class KernelConnection(ChannelRouter):
    """Shell, control and IOPub ZMQ streams to one kernel of this machine."""

    def __init__(self, kernel_manager: Any, *, label: str) -> None:
        source: Session = kernel_manager.session
        # Our own session id: the kernel answers to us alone, and we never read others' replies.
        super().__init__(
            Session(
                key=source.key, signature_scheme=source.signature_scheme, username="jupyter_recall"
            ),
            label=label,
        )
        self._streams = {
            "shell": _as_stream(kernel_manager.connect_shell()),
            "control": _as_stream(kernel_manager.connect_control()),
            "iopub": _as_stream(kernel_manager.connect_iopub()),
        }
        for name, stream in self._streams.items():
            stream.on_recv(self._receiver(name), copy=False)

    def _receiver(self, channel: str) -> Any:
        def on_recv(frames: list[Any]) -> None:
            try:
                _, parts = self.session.feed_identities(frames, copy=False)
                msg = self.session.deserialize(parts, content=True, copy=False)
            except Exception:
                log.warning("dropping an unreadable %s message from %s", channel, self.label)
                return
            self._route(channel, msg)

        return on_recv

    def send(self, channel: str, msg: Message) -> None:
        self.session.send(self._streams[channel], msg)

    def close(self) -> None:
        super().close()
        for stream in self._streams.values():
            if not stream.closed():
                stream.close(linger=0)


def _is_fresh_start(channel: str, msg: Message) -> bool:
    return (
        channel == "iopub"
        and msg["header"].get("msg_type") == "status"
        and msg.get("content", {}).get("execution_state") == "starting"
    )


LOST_STATES = frozenset({"restarting", "dead"})
"""Statuses a websocket server (jupyter_server, a Kernel Gateway) publishes for a kernel that
died: it is being restarted (the run's request died with it), or it could not be."""


def is_kernel_lost(channel: str, msg: Message) -> bool:
    return (
        channel == "iopub"
        and msg.get("header", {}).get("msg_type") == "status"
        and msg.get("content", {}).get("execution_state") in LOST_STATES
    )


def render_output(msg: Message) -> str:
    """The text of one IOPub output message; '' for messages that carry no text."""
    msg_type = msg["header"]["msg_type"]
    content = msg["content"]
    if msg_type == "stream":
        return str(content.get("text", ""))
    if msg_type in ("execute_result", "display_data"):
        text = content.get("data", {}).get("text/plain")
        return f"{text}\n" if text else ""
    if msg_type == "error":
        return error_text(content) + "\n"
    return ""


def error_text(content: ErrorContent) -> str:
    traceback = [strip_ansi(line) for line in content.get("traceback", [])]
    if traceback:
        return "\n".join(traceback)
    return f"{content.get('ename', 'Error')}: {content.get('evalue', '')}"


def error_summary(content: ErrorContent) -> str:
    """The last meaningful line of an error: IPython ends its tracebacks with 'Name: value'."""
    lines = [line for line in error_text(content).splitlines() if line.strip()]
    if lines:
        return lines[-1].strip()
    return f"{content.get('ename', 'Error')}: {content.get('evalue', '')}"


@dataclass(slots=True)
class Execution:
    """The state of one execute_request as its messages arrive."""

    msg_id: str
    started: bool = False
    """The kernel published ``busy`` for it: it is executing, not queued."""
    reply: ExecuteReply | None = None
    idle: bool = False

    @property
    def done(self) -> bool:
        return self.reply is not None and self.idle

    @property
    def error(self) -> str | None:
        if self.reply is None or self.reply.get("status") == "ok":
            return None
        if self.reply.get("status") == "aborted":
            return "the kernel aborted the execution"
        return error_summary(self.reply)


LIVENESS_INTERVAL = 1.0
"""Seconds of silence after which the kernel's liveness is checked."""
REPLY_IDLE_GRACE = 10.0
"""Seconds to wait for the idle status once the reply is in, before giving up on trailing output."""


def execute_message(
    connection: ChannelRouter, code: str, *, subshell_id: str | None = None
) -> Message:
    return connection.new_message(
        "execute_request",
        {
            "code": code,
            "silent": False,
            # The user's In/Out history and execution count stay untouched by runs.
            "store_history": False,
            "user_expressions": {},
            "allow_stdin": False,
            # Never abort the user's queued cells because a run failed.
            "stop_on_error": False,
        },
        subshell_id=subshell_id,
    )


class _Discard:
    def write(self, text: str) -> None:
        """Output of our own housekeeping code is not a run's."""


async def run_quietly(connection: ChannelRouter, code: str, *, timeout: float) -> Execution:
    """Run our own short code in the kernel's main shell, its output dropped."""
    msg = execute_message(connection, code)
    execution = Execution(msg["header"]["msg_id"])
    with connection.track(msg) as inbox, anyio.fail_after(timeout):
        connection.send("shell", msg)
        await collect(inbox, execution, _Discard(), label=connection.label)
    return execution


async def collect(
    inbox: MemoryObjectReceiveStream[Envelope],
    execution: Execution,
    output: OutputSink,
    *,
    label: str,
    liveness: Liveness | None = None,
) -> None:
    """Stream outputs of ``execution`` into ``output`` until its reply and idle status are in.

    ``liveness`` is awaited whenever the kernel stays silent for a while; it raises KernelGone
    when the kernel died without a restart (which would otherwise leave us waiting forever).
    """
    silent_since = anyio.current_time()
    while not execution.done:
        envelope: Envelope | None = None
        try:
            with anyio.move_on_after(LIVENESS_INTERVAL):
                envelope = await inbox.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise KernelGone(f"the connection to {label} closed during the run") from None
        if envelope is not None:
            silent_since = anyio.current_time()
            _apply(*envelope, execution, output, label)
            continue
        if execution.reply is not None and anyio.current_time() - silent_since > REPLY_IDLE_GRACE:
            log.warning("no idle status for %s on %s", execution.msg_id, label)
            return
        if liveness is not None:
            await liveness()


def _apply(where: str, msg: Message, execution: Execution, output: OutputSink, label: str) -> None:
    msg_type = msg["header"]["msg_type"]
    if where == "shell" and msg_type == "execute_reply":
        reply: ExecuteReply = msg["content"]
        execution.reply = reply.copy()
    elif where == "iopub" and msg_type == "status":
        state = msg["content"].get("execution_state")
        execution.started = execution.started or state == "busy"
        execution.idle = execution.idle or state == "idle"
    elif where == "iopub":
        text = render_output(msg)
        if text:
            output.write(text)
