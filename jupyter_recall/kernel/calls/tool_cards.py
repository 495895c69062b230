"""Progress cards (``kernel/widgets``) for ``run_parallel`` and background tasks.

Only used when ``widgets.available()``; the callers keep their text displays otherwise. The
cards are displayed from the cell's thread (so they land in that cell) and updated from the
tools' loop thread: widget updates are comm messages, which ipykernel sends from any thread.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from jupyter_recall.kernel import widgets
from jupyter_recall.kernel.calls.approval_prompt import display
from jupyter_recall.tools.background import BackgroundTask
from jupyter_recall.tools.parallel import Action
from jupyter_recall.tools.registry import ToolResult

if TYPE_CHECKING:
    from jupyter_recall.kernel.widgets.progress import ProgressCard

DETAIL_CLIP = 80
"""Characters of an error kept in a card's line (the full result is what the call returns)."""


def short_detail(result: Mapping[str, Any] | None) -> str:
    """A card line's detail: the HTTP status code of a success, the error's first line."""
    if not result:
        return ""
    if result.get("success"):
        data = result.get("data")
        code = data.get("status_code") if isinstance(data, Mapping) else None
        return str(code) if code is not None else ""
    error = str(result.get("error") or "").strip()
    first = error.splitlines()[0] if error else ""
    return first if len(first) <= DETAIL_CLIP else first[: DETAIL_CLIP - 1] + "…"


def action_label(action: Action) -> str:
    return f"#{action.index} {action.name}"


class ParallelCard:
    """One line per action of a ``run_parallel`` call; ``N of M succeeded`` at the end."""

    def __init__(self, actions: Sequence[Action]) -> None:
        self.labels = [action_label(action) for action in actions]
        self.succeeded = 0
        count = len(self.labels)
        self.card: ProgressCard = widgets.progress_card(
            f"run_parallel: {count} action{'' if count == 1 else 's'}", self.labels
        )
        for label in self.labels:
            self.card.set_status(label, "running")

    def done(self, index: int, result: ToolResult) -> None:
        """``run_actions``'s ``on_done`` (on the loop thread)."""
        ok = bool(result.get("success"))
        self.succeeded += ok
        self.card.set_status(
            self.labels[index], "succeeded" if ok else "failed", short_detail(result)
        )

    def finish(self, results: Sequence[ToolResult] | None) -> None:
        """The call's end; ``None`` when it was interrupted."""
        if results is None:
            self.card.finish("cancelled", f"{self.succeeded} of {len(self.labels)} succeeded")
            return
        succeeded = sum(1 for result in results if result.get("success"))
        status = "succeeded" if succeeded == len(results) else "failed"
        self.card.finish(status, f"{succeeded} of {len(results)} succeeded")


class BackgroundCard:
    """A background task's card: its tool as the one line, a Cancel button, its outcome."""

    def __init__(self, task: BackgroundTask, cancel: Callable[[], Any], text: str) -> None:
        # The widget modules import ipywidgets: only when a card is shown.
        from jupyter_recall.kernel.widgets import base
        from jupyter_recall.kernel.widgets.progress import ProgressCard

        self.label = task.name
        self.card = ProgressCard(
            f"background task {task.task_id}: {task.name}", [task.name], on_cancel=cancel
        )
        self.card.set_status(self.label, "running")
        # ``text`` is the fallback a saved notebook or nbconvert shows; the end replaces it
        # (hence a display id).
        self.handle = display(base.bundle(self.card.widget, text), raw=True, display_id=True)

    def finish(self, task: BackgroundTask, text: str) -> None:
        from jupyter_recall.kernel.widgets import base

        detail = short_detail(task.result)
        self.card.set_status(self.label, task.status, detail)
        self.card.log(text + "\n")
        self.card.finish(task.status, f"in {task.elapsed_shown:.2f}s")
        self.handle.update(base.bundle(self.card.widget, text), raw=True)
