"""Asking the person in the notebook to approve a tool call.

Two ways, because a busy cell cannot receive widget clicks (the kernel handles comm messages
on the shell channel, after the running cell):

- A call started by a cell that waits for it (``run_tool``, ``run_parallel``, an agent loop in a
  cell): a stdin prompt ``Approve shell.run(command='ls')? [y/N]`` in that cell, which works
  while the cell runs. When the request times out first, the prompt is withdrawn.
- Otherwise (background tasks, ``await``-ed calls): an approval card (``widgets.approval_card``,
  Approve / Deny) in the output of the cell that started the call, usable once the kernel is
  idle, settled with the outcome whoever answered; plain text with the programmatic answer when
  ipywidgets is missing.

Both end in ``approvals.answer(request_id, approved)``, which anyone may call. The requests
are also records of the server's approvals inbox (``approval_inbox.py``): a decision given in
the sidebar, the CLI or over REST ends the prompt or settles the card at once, however busy
the kernel is, and a notebook answer is recorded there with who gave it and when.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import contextvars
import ctypes
import html
import sys
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from jupyter_recall.core.errors import NotFoundError, PromptExpired
from jupyter_recall.kernel import widgets
from jupyter_recall.kernel.calls.approval_inbox import RestInbox
from jupyter_recall.tools.approval import TIMEOUT, ApprovalRequest, Approvals

if TYPE_CHECKING:
    from IPython.core.display_functions import DisplayHandle

    from jupyter_recall.kernel.widgets.approval import ApprovalCard

T = TypeVar("T")

waiting_cell: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "jupyter_recall_waiting_cell", default=False
)
"""Set in the context of calls a cell waits for: their approvals are asked on stdin."""

YES = ("y", "yes")


def display(obj: Any, **options: Any) -> Any:
    """IPython's ``display`` (untyped), imported when first needed."""
    from IPython.display import display as show

    call: Any = show
    return call(obj, **options)


def _kernel() -> Any:
    if "IPython" not in sys.modules:
        return None
    from IPython import get_ipython

    shell = get_ipython()
    return getattr(shell, "kernel", None) if shell is not None else None


def _stdin_usable() -> bool:
    kernel = _kernel()
    return kernel is not None and bool(getattr(kernel, "_allow_stdin", False))


# --- displays ---------------------------------------------------------------------------------


class _Displays:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.shown: dict[str, ApprovalCard | DisplayHandle] = {}
        """Each request's display: its card, or its text where widgets cannot show."""


_displays = _Displays()


NEEDED = "[APPROVAL NEEDED]"


def _details(request: ApprovalRequest) -> str:
    """The call and its request, without the heading: the card adds its own."""
    return (
        f"{request.describe()}\n"
        f"policy: {request.source}; request {request.request_id}; "
        f"refused after {request.timeout:g}s without an answer"
    )


def _question(request: ApprovalRequest) -> str:
    return f"{NEEDED} {_details(request)}"


def _outcome_text(request: ApprovalRequest) -> str:
    return f"[APPROVAL {str(request.outcome).upper()}] {request.describe()} ({request.request_id})"


def _answer(approvals: Approvals, request_id: str, approved: bool) -> None:
    with contextlib.suppress(NotFoundError):
        approvals.answer(request_id, approved)


def _card(approvals: Approvals, request: ApprovalRequest) -> ApprovalCard:
    card = widgets.approval_card(
        _details(request),
        lambda approved: _answer(approvals, request.request_id, approved),
        show=False,
    )
    display(card)
    return card


def _text(request: ApprovalRequest) -> dict[str, str]:
    text = (
        f"{_question(request)}\nanswer: jupyter_recall.approvals.answer("
        f"{request.request_id!r}, True)  # or False"
    )
    return {"text/plain": text, "text/html": f"<pre>{html.escape(text)}</pre>"}


def _text_display(request: ApprovalRequest) -> DisplayHandle:
    """The request as text, in a display updated in place with its outcome."""
    handle: DisplayHandle = display(_text(request), raw=True, display_id=True)
    return handle


def show_request(approvals: Approvals, request: ApprovalRequest) -> None:
    if _kernel() is None:
        return
    if waiting_cell.get() and _stdin_usable():
        # The cell's stdin prompt asks; buttons could not be clicked before the cell ends.
        return

    shown = _card(approvals, request) if widgets.available() else _text_display(request)
    with _displays.lock:
        _displays.shown[request.request_id] = shown


CARD_OUTCOMES = {TIMEOUT: "timed_out"}
"""The approval card's names of outcomes that differ from ``Approvals``' own."""


def show_outcome(request: ApprovalRequest) -> None:
    with _displays.lock:
        shown = _displays.shown.pop(request.request_id, None)
    if shown is None:
        return
    # Only a display shown earlier is here: IPython is imported (ipywidgets only for a card).
    from IPython.core.display_functions import DisplayHandle

    if isinstance(shown, DisplayHandle):
        text = _outcome_text(request)
        update: Callable[..., None] = shown.update  # untyped in IPython
        update({"text/plain": text, "text/html": f"<pre>{html.escape(text)}</pre>"}, raw=True)
        return
    outcome = str(request.outcome)
    shown.settle(CARD_OUTCOMES.get(outcome, outcome), f"({request.request_id})")


def install(approvals: Approvals) -> None:
    """Show this process's approval requests in the notebook (once)."""
    if getattr(approvals, "_notebook_prompts", False):
        return
    approvals._notebook_prompts = True  # type: ignore[attr-defined]
    if approvals.inbox is None:
        # Recorded in the server's inbox, the requests are answerable from anywhere, also
        # while the asking cell is busy; without a server they are asked here only.
        approvals.inbox = RestInbox()
    approvals.on_request.append(lambda request: show_request(approvals, request))
    approvals.on_settled.append(show_outcome)
    approvals.on_settled.append(_prompts.expire)


# --- stdin prompts in a waiting cell ----------------------------------------------------------


class _Prompts:
    """The stdin prompt in progress (at most one: one cell runs at a time)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.request_id: str | None = None
        self.thread_id: int | None = None

    @contextlib.contextmanager
    def active(self, request_id: str) -> Iterator[None]:
        with self.lock:
            self.request_id, self.thread_id = request_id, threading.get_ident()
        try:
            yield
        finally:
            with self.lock:
                self.request_id = self.thread_id = None

    def expire(self, request: ApprovalRequest) -> None:
        with self.lock:
            if self.request_id != request.request_id or self.thread_id is None:
                return
            ctypes.pythonapi.PyThreadState_SetAsyncExc(
                ctypes.c_ulong(self.thread_id), ctypes.py_object(PromptExpired)
            )
            self.request_id = None


_prompts = _Prompts()


def _ask_on_stdin(approvals: Approvals, request: ApprovalRequest) -> bool:
    """Ask; False when stdin cannot be used here (the caller stops trying)."""
    from IPython.core.error import StdinNotImplementedError

    kernel = _kernel()
    if kernel is None:
        return False
    prompt = f"{_question(request)}\nApprove {request.tool}? [y/N] "
    reply: str | None = None
    try:
        with _prompts.active(request.request_id):
            if request.outcome is None:
                reply = kernel.raw_input(prompt)
    except PromptExpired:
        print(_outcome_text(request))
        return True
    except StdinNotImplementedError:
        return False
    if reply is not None:
        approved = reply.strip().lower() in YES
        _answer(approvals, request.request_id, approved)
        print(f"[APPROVAL {'APPROVED' if approved else 'DENIED'}] {request.describe()}")
    return True


def wait(future: concurrent.futures.Future[T], approvals: Approvals) -> T:
    """The future's result, answering on stdin the approvals asked meanwhile."""
    wake = threading.Event()

    def on_request(_: ApprovalRequest) -> None:
        wake.set()

    future.add_done_callback(lambda _: wake.set())
    approvals.on_request.append(on_request)
    # A request made before the hook was in place is found on the first look.
    wake.set()
    asked: set[str] = set()
    stdin = _stdin_usable()
    try:
        while not future.done():
            wake.wait()
            wake.clear()
            for request in approvals.pending() if stdin else ():
                if request.request_id not in asked:
                    asked.add(request.request_id)
                    stdin = _ask_on_stdin(approvals, request)
        return future.result()
    finally:
        with contextlib.suppress(ValueError):
            approvals.on_request.remove(on_request)
