"""Live cards and the jobs panel (ipywidgets) for the notebook; see ``docs/widgets.md``.

Importing this package does not import ipywidgets; the classes live in its modules
(``card.JobCard``, ``progress.ProgressCard``, ``approval.ApprovalCard``, ``panel.JobsPanel``)
and the functions below import them on first use. ``available()`` says whether widgets can be
shown here: ipywidgets is installed and this process is a kernel with a frontend to talk to.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jupyter_recall.client.documents import JobDocument
    from jupyter_recall.client.records import JobRecord, WatcherRecord
    from jupyter_recall.kernel.widgets.approval import ApprovalCard
    from jupyter_recall.kernel.widgets.card import JobCard
    from jupyter_recall.kernel.widgets.panel import JobsPanel
    from jupyter_recall.kernel.widgets.progress import ProgressCard

__all__ = [
    "approval_card",
    "available",
    "cards_for",
    "job_card",
    "jobs_panel",
    "progress_card",
]


def available() -> bool:
    """True in an ipykernel with ipywidgets installed (a terminal IPython has no frontend)."""
    if importlib.util.find_spec("ipywidgets") is None or "IPython" not in sys.modules:
        return False
    from IPython import get_ipython

    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def _display(card: Any) -> None:
    from IPython.display import display

    show: Callable[..., Any] = display
    show(card)


def job_card(job: JobRecord | WatcherRecord | JobDocument, *, show: bool = True) -> JobCard:
    """A live card for ``job`` (a ``Job``, its JSON or a ``Watcher``), displayed in the
    current output."""
    from jupyter_recall.kernel.widgets.card import JobCard

    card = JobCard(job)
    if show:
        _display(card)
    return card


def progress_card(
    title: str,
    items: Sequence[str] = (),
    *,
    on_cancel: Callable[[], Any] | None = None,
    show: bool = True,
) -> ProgressCard:
    """A progress card (done/total, one line per item, a log), displayed."""
    from jupyter_recall.kernel.widgets.progress import ProgressCard

    card = ProgressCard(title, items, on_cancel=on_cancel)
    if show:
        _display(card)
    return card


def approval_card(
    question: str, on_answer: Callable[[bool], Any], *, show: bool = True
) -> ApprovalCard:
    """Approve / Deny for a tool call waiting for the person in the notebook, displayed."""
    from jupyter_recall.kernel.widgets.approval import ApprovalCard

    card = ApprovalCard(question, on_answer)
    if show:
        _display(card)
    return card


def jobs_panel(*, everything: bool = False, show: bool = True) -> JobsPanel:
    """The live jobs panel of ``%jobs``, displayed."""
    from jupyter_recall.kernel.widgets.panel import JobsPanel

    panel = JobsPanel(everything=everything)
    if show:
        _display(panel)
    return panel


def cards_for(job_id: str) -> list[JobCard]:
    """The live cards following ``job_id`` in this kernel, oldest first."""
    if "jupyter_recall.kernel.widgets.card" not in sys.modules:
        return []
    from jupyter_recall.kernel.widgets.card import JobCard
    from jupyter_recall.kernel.widgets.live import router

    return [card for card in router.following(job_id) if isinstance(card, JobCard)]
