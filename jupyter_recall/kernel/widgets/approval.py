"""``ApprovalCard``: a tool call waiting for the person in the notebook, with Approve / Deny.

The card only shows and answers; the request lives elsewhere (``tools.approval.Approvals``):
``on_answer(approved)`` is called on a click, and ``settle(outcome)`` shows the end (approved,
denied, timed out) and takes the buttons away, whoever answered. A click reaches the kernel
when it is idle: a cell that waits for the call asks on stdin instead
(``kernel/calls/approval_prompt.py``).
"""

from __future__ import annotations

import html
import threading
from collections.abc import Callable
from typing import Any

import ipywidgets

from jupyter_recall.kernel.widgets import base, render

OUTCOME_COLOURS = {"approved": "#2e7d32", "denied": "#c62828", "timed_out": "#ef6c00"}


class ApprovalCard:
    def __init__(self, question: str, on_answer: Callable[[bool], Any]) -> None:
        self.question = question
        self.outcome: str | None = None
        self._on_answer = on_answer
        self._lock = threading.Lock()
        self.text = ipywidgets.HTML(f"<pre>{html.escape(question)}</pre>")
        self.approve = base.button("Approve", "run the tool call", lambda: self._click(True))
        self.approve.button_style = "success"
        self.deny = base.button("Deny", "refuse the tool call", lambda: self._click(False))
        self.deny.button_style = "danger"
        self.status = ipywidgets.HTML(render.badge("waiting for an answer", "#1565c0"))
        self.buttons = ipywidgets.HBox([self.approve, self.deny])
        self.widget = base.frame(
            [self.text, self.buttons, self.status], "jupyter-recall-approval-card"
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> base.MimeBundle:
        return base.bundle(self.widget, f"[APPROVAL NEEDED] {self.question}", **kwargs)

    def _click(self, approved: bool) -> None:
        with self._lock:
            if self.outcome is not None:
                return
        self.approve.disabled = self.deny.disabled = True
        self._on_answer(approved)

    def settle(self, outcome: str, detail: str = "") -> None:
        """Show how the request ended (``approved``, ``denied``, ``timed_out``...)."""
        with self._lock:
            self.outcome = outcome
        self.buttons.layout.display = "none"
        label = f"{outcome} {detail}".strip()
        self.status.value = render.badge(label, OUTCOME_COLOURS.get(outcome, "#616161"))
