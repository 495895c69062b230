"""What happens in the kernel when a recall (a self-instruction) fires.

The server's live-kernel executor runs, inside the run's own execute request (in a kernel
subshell when the kernel has them), code that calls :func:`deliver`. So whatever the handler
prints streams into the run's output, and nothing appears in the user's cells.
"""

from __future__ import annotations

import html
import inspect
import threading
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from jupyter_recall.kernel.connection import notifications
from jupyter_recall.kernel.jobs.api import Job

Handler = Callable[..., Any]
H = TypeVar("H", bound=Handler)

NOTIFICATION_PREFIX = "[RECALL] "


class _Registry:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.handler: Handler | None = None


_registry = _Registry()


def on_recall(handler: H) -> H:
    """Register the agent's handler (a decorator): ``handler(instruction, job)`` is called when
    a recall fires in this kernel, with the self-instruction and the job (a ``Job``, with
    ``run_id`` and ``scheduled_for``). A handler taking one argument gets the instruction only.
    What it prints goes to the run's output; a value it returns is printed too. If it raises,
    the run fails (a recurring recall keeps its schedule). Registering again replaces it."""
    if not callable(handler):
        raise TypeError(f"on_recall needs a callable, got {handler!r}")
    with _registry.lock:
        _registry.handler = handler
    return handler


def clear_handler() -> None:
    """Forget the handler: recalls are shown as notifications again."""
    with _registry.lock:
        _registry.handler = None


def current_handler() -> Handler | None:
    with _registry.lock:
        return _registry.handler


def _takes_job(handler: Handler) -> bool:
    try:
        signature = inspect.signature(handler)
    except (TypeError, ValueError):
        return True
    positional = [
        p
        for p in signature.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    variadic = any(p.kind is p.VAR_POSITIONAL for p in signature.parameters.values())
    return variadic or len(positional) >= 2


def _notification(instruction: str, job: Mapping[str, Any]) -> notifications.Notification:
    return {
        "type": "recall",
        "instruction": instruction,
        "job_id": job.get("id"),
        "job_name": job.get("name"),
        "run_id": job.get("run_id"),
        "session": job.get("session"),
        "scheduled_for": job.get("scheduled_for"),
    }


def show_notification(instruction: str) -> None:
    """Display the instruction where the run's output goes (text/plain and an HTML card)."""
    text = NOTIFICATION_PREFIX + instruction
    try:
        from IPython.display import display
    except ImportError:
        print(text, flush=True)
        return
    card = (
        '<div class="jupyter-recall-notification" style="border-left:3px solid #e6a23c;'
        'padding:4px 8px"><b>Recall</b>: ' + html.escape(instruction) + "</div>"
    )
    show: Callable[..., Any] = display
    show({"text/plain": text, "text/html": card}, raw=True)


class RecalledJob(Job):
    """The job handed to a handler: a ``Job`` with the run that delivers it."""

    __slots__ = ()

    @property
    def run_id(self) -> str | None:
        return self._text("run_id")

    @property
    def scheduled_for(self) -> str | None:
        return self._text("scheduled_for")


def deliver(instruction: str, job: Mapping[str, Any]) -> None:
    """Entry point of the server's instruction executor: hand ``instruction`` to the registered
    handler, or show it and queue it as a notification when there is none."""
    handler = current_handler()
    if handler is None:
        show_notification(instruction)

        notifications.push(_notification(instruction, job))
        return
    handle = RecalledJob(job)
    result = handler(instruction, handle) if _takes_job(handler) else handler(instruction)
    if result is not None:
        print(result, flush=True)
