"""``ProgressCard``: work that is not a job (a background task, ``run_parallel``'s actions) as a
done/total bar, one status line per action and a log.

Every method may be called from any thread (the tools' loop thread, a callback): updates are
widget state sent over the comm channel, which ipykernel 7 accepts from any thread.
"""

from __future__ import annotations

import html
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets

from jupyter_recall.kernel.widgets import base, render

PENDING = "pending"
RUNNING = "running"
OPEN_STATUSES = (PENDING, RUNNING)
DETAIL_WIDTH = 200
STATUS_COLOURS = {**render.RUN_COLOURS, PENDING: "#9e9e9e", "timed_out": "#ef6c00"}


class ProgressCard:
    """``ProgressCard(title, items)``: ``items`` are the actions' labels (unique), all pending.

    ``set_status(item, status, detail)`` moves one along (an unknown item is added); an item is
    done when its status is neither ``pending`` nor ``running``. ``log(text)`` appends to the
    card's output; ``finish(status, detail)`` ends the card (the cancel button goes away).
    ``on_cancel`` (optional) is called when the cancel button is clicked.
    """

    def __init__(
        self,
        title: str,
        items: Sequence[str] = (),
        *,
        on_cancel: Callable[[], Any] | None = None,
    ) -> None:
        self.title = title
        self.items: dict[str, tuple[str, str]] = {str(item): (PENDING, "") for item in items}
        self.status = RUNNING
        self.detail = ""
        self.text = ""
        self._started = time.monotonic()
        self._ended: float | None = None
        self._lock = threading.RLock()
        self.header = ipywidgets.HTML()
        self.bar = ipywidgets.IntProgress(value=0, min=0, max=1, bar_style="info")
        self.count = ipywidgets.Label()
        self.table = ipywidgets.HTML()
        self.output = base.output_widget("jupyter-recall-progress-output")
        self.cancel_button = base.button("Cancel", "cancel what has not finished", self.cancel)
        self._on_cancel = on_cancel
        if on_cancel is None:
            self.cancel_button.layout.display = "none"
        self.widget = base.frame(
            [
                self.header,
                ipywidgets.HBox([self.bar, self.count, self.cancel_button]),
                self.table,
                self.output,
            ],
            "jupyter-recall-progress-card",
        )
        self._show()

    def _repr_mimebundle_(self, **kwargs: Any) -> base.MimeBundle:
        return base.bundle(self.widget, self.summary(), **kwargs)

    @property
    def total(self) -> int:
        return len(self.items)

    @property
    def done(self) -> int:
        return sum(1 for status, _ in self.items.values() if status not in OPEN_STATUSES)

    def summary(self) -> str:
        lines = [f"{self.title}: {self.status}, {self.done}/{self.total} done"]
        lines += [
            f"  {item}: {status} {detail}".rstrip() for item, (status, detail) in self.items.items()
        ]
        return "\n".join(lines)

    def _show(self) -> None:
        ended = self._ended if self._ended is not None else time.monotonic()
        colour = STATUS_COLOURS.get(self.status, "#616161")
        detail = f" {html.escape(self.detail)}" if self.detail else ""
        self.header.value = (
            f"<b>{html.escape(self.title)}</b> {render.badge(self.status, colour)} "
            f'<span style="color:{render.MUTED}">{render.format_duration(ended - self._started)}'
            f"</span>{detail}"
        )
        self.bar.max = max(self.total, 1)
        self.bar.value = self.done
        failed = any(status == "failed" for status, _ in self.items.values())
        self.bar.bar_style = "danger" if failed else ("success" if self._ended else "info")
        self.count.value = f"{self.done}/{self.total}"
        rows = "".join(
            f"<tr><td>{html.escape(item)}</td><td>"
            f"{render.badge(status, STATUS_COLOURS.get(status, '#616161'))}</td>"
            f"<td>{html.escape(detail[:DETAIL_WIDTH])}</td></tr>"
            for item, (status, detail) in self.items.items()
        )
        self.table.value = f'<table class="jupyter-recall-progress">{rows}</table>' if rows else ""

    def set_status(self, item: str, status: str, detail: str = "") -> None:
        with self._lock:
            self.items[str(item)] = (status, detail)
            self._show()

    def log(self, text: str) -> None:
        with self._lock:
            self.text = render.clip_output(self.text + text)
            self.output.outputs = base.stream_outputs(self.text)

    def finish(self, status: str, detail: str = "") -> None:
        with self._lock:
            self.status, self.detail = status, detail
            self._ended = time.monotonic()
            self.cancel_button.layout.display = "none"
            self._show()

    def cancel(self) -> None:
        if self._on_cancel is None or self._ended is not None:
            return
        self.cancel_button.disabled = True
        self._on_cancel()
