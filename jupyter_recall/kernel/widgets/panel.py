"""``JobsPanel``: what ``%jobs`` shows, live. One row of filters, the jobs of this notebook (or
every job of the user) as one compact list (name, status, next run), the selected job's live
``JobCard`` below it (its buttons, history with outputs), and a timeline of recent runs coloured
by outcome, folded until opened. The table is the text fallback (nbconvert, a terminal).

It follows every job of the user through the event stream; a burst of events reads the server
once (``Coalescer``).
"""

from __future__ import annotations

import html
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

import ipywidgets

from jupyter_recall.client import tables
from jupyter_recall.client.documents import EventDocument, JobDocument, RunDocument
from jupyter_recall.core.errors import RecallError
from jupyter_recall.core.timefmt import parse_instant
from jupyter_recall.kernel.connection import client as _client
from jupyter_recall.kernel.widgets import base, render
from jupyter_recall.kernel.widgets.card import JobCard
from jupyter_recall.kernel.widgets.live import ANY_JOB, Coalescer, router

STATUSES = ("active", "paused", "completed", "failed", "cancelled")
KINDS = ("job", "recall", "watcher")
TIMELINE_WINDOW = timedelta(hours=1)
JOB_EVENTS = ("job.created", "job.updated", "job.deleted")
RUN_EVENTS = ("run.started", "run.finished")
LABEL_WIDTH = 40
LIST_ROWS = (3, 8)
"""The list shows this many rows at least and at most (it scrolls beyond)."""
PAGE = 50
"""Jobs read at first, and again at each "more" (the server pages its listings)."""


def _choices(values: Sequence[str]) -> list[tuple[str, str]]:
    return [("any", ""), *((value, value) for value in values)]


def job_label(job: Mapping[str, Any], now: datetime) -> str:
    """One line of the list: name, status, next run (or the last outcome), kind and id."""
    name = " ".join(str(job.get("name") or "").split())
    name = name if len(name) <= LABEL_WIDTH else name[: LABEL_WIDTH - 1] + "…"
    upcoming = job.get("next_fire_at")
    if upcoming and job.get("status") in ("active", "paused"):
        when = f"next {render.local_time(upcoming, now=now)}"
    else:
        when = f"last {job.get('last_status') or '-'}"
    return f"{name} · {job.get('status')} · {when} · {job.get('kind')} {job.get('id')}"


class JobsPanel:
    """``JobsPanel(everything=False)``: this notebook's jobs (``everything``: all of the user's).
    ``refresh()`` reads them again; it also happens by itself when anything changes."""

    def __init__(self, *, everything: bool = False, session: str | None = None) -> None:
        self.session = session
        self.jobs: list[JobDocument] = []
        self.runs: dict[str, RunDocument] = {}
        """The user's runs of the timeline's window by id: read once, then kept from events."""
        self.card: JobCard | None = None
        self._lock = threading.RLock()
        self._updating = False
        self.status = ipywidgets.Dropdown(
            options=_choices(STATUSES), value="", description="status"
        )
        self.kind = ipywidgets.Dropdown(options=_choices(KINDS), value="", description="kind")
        self.pending = ipywidgets.Checkbox(value=False, description="pending recalls only")
        self.everything = ipywidgets.Checkbox(value=everything, description="all notebooks")
        for control in (self.status, self.kind, self.pending, self.everything):
            control.observe(lambda _: self.refresh(), names="value")
        self.select = ipywidgets.Select(options=[], rows=LIST_ROWS[0])
        self.select.layout.width = "100%"
        self.select.add_class("jupyter-recall-jobs-list")
        self.select.observe(self._selected, names="value")
        self.detail = ipywidgets.VBox([])
        self.timeline = ipywidgets.HTML()
        self.recent = ipywidgets.Accordion(
            children=(self.timeline,), titles=("recent runs (the last hour)",), selected_index=None
        )
        self.message = ipywidgets.HTML()
        self.shown = PAGE
        """How many jobs the list reads: one page, and one more at each click on ``more``."""
        self.more = ipywidgets.Button(description="more", tooltip=f"show {PAGE} more jobs")
        self.more.layout.display = "none"
        self.more.on_click(lambda _: self.show_more())
        for control in (self.status, self.kind):
            control.layout.width = "auto"
        self.widget = base.frame(
            [
                # "more" sits with the filters: it is one of them (how many jobs to read).
                ipywidgets.HBox([self.status, self.kind, self.pending, self.everything, self.more]),
                self.message,
                self.select,
                self.detail,
                self.recent,
            ],
            "jupyter-recall-jobs-panel",
        )
        try:
            # Read before anything is displayed or subscribed: an unreachable server is the
            # caller's error (one line under %jobs' guard), not one raised while IPython
            # renders the panel (a traceback).
            first = self._read()
        except RecallError:
            self.widget.close()
            raise
        self._jobs_later = Coalescer(self.refresh)
        self._draw_later = Coalescer(self.draw_timeline)
        self._unsubscribe: Callable[[], None] | None = router.subscribe(ANY_JOB, self)
        self.load_runs()
        self._show(first)

    def _repr_mimebundle_(self, **kwargs: Any) -> base.MimeBundle:
        text = tables.jobs_bundle(self.jobs, empty=self._empty())
        return base.bundle(self.widget, text["text/plain"], text["text/html"], **kwargs)

    def _empty(self) -> str:
        where = "" if self.everything.value else f" for {self._session()}"
        return f"no {self.kind.value or 'job'}s{where}"

    def _session(self) -> str | None:
        return self.session or _client.identity().session

    def query(self) -> dict[str, str | None]:
        """The filters as the query of ``GET /api/recall/jobs``."""
        query: dict[str, str | None] = {
            "status": self.status.value or None,
            "kind": self.kind.value or None,
            "pending_recalls": "1" if self.pending.value else None,
            "limit": str(self.shown),
        }
        if not self.everything.value:
            query["path"] = self._session()
        return query

    # --- reading --------------------------------------------------------------------------

    def _read(self) -> Any:
        return _client.get_client().request("GET", "/api/recall/jobs", query=self.query())

    def refresh(self) -> None:
        try:
            found = self._read()
        except RecallError as error:
            self.message.value = f'<span style="color:#c62828">{html.escape(str(error))}</span>'
            return
        self._show(found)

    def _show(self, found: Any) -> None:
        with self._lock:
            self.message.value = ""
            jobs: list[JobDocument] = found["jobs"]
            self.jobs = [job.copy() for job in jobs]
            self.more.layout.display = None if found.get("next_cursor") else "none"
            self._options()
        self.draw_timeline()

    def show_more(self) -> None:
        self.shown += PAGE
        self.refresh()

    def _options(self) -> None:
        chosen = self.select.value
        ids = [str(job["id"]) for job in self.jobs]
        now = datetime.now(timezone.utc)
        self._updating = True
        try:
            self.select.rows = min(max(len(ids), LIST_ROWS[0]), LIST_ROWS[1])
            self.select.options = [(job_label(job, now), str(job["id"])) for job in self.jobs]
            self.select.value = chosen if chosen in ids else (ids[0] if ids else None)
        finally:
            self._updating = False
        self._show_card(self.select.value)

    def load_runs(self) -> None:
        """Read the runs of the timeline's window (at creation and after a reconnection)."""
        start = datetime.now(timezone.utc) - TIMELINE_WINDOW
        try:
            found = _client.get_client().every_run(query={"since": start.isoformat()})
        except RecallError:
            return
        with self._lock:
            for run in found:
                run.pop("output", None)
                self.runs[str(run["id"])] = run

    def draw_timeline(self) -> None:
        end = datetime.now(timezone.utc)
        start = end - TIMELINE_WINDOW
        with self._lock:
            for run_id, run in list(self.runs.items()):
                instant = parse_instant(run.get("finished_at") or run.get("started_at"))
                if instant is not None and instant < start:
                    del self.runs[run_id]
            shown = {str(job["id"]) for job in self.jobs}
            runs = [run for run in self.runs.values() if str(run.get("job_id")) in shown]
            rows = [(str(job["id"]), str(job.get("name") or job["id"])) for job in self.jobs]
            self.timeline.value = render.timeline_svg(rows, runs, start=start, end=end)

    # --- the selected job -----------------------------------------------------------------

    def _selected(self, change: Mapping[str, Any]) -> None:
        if not self._updating:
            self._show_card(change.get("new"))

    def _show_card(self, job_id: str | None) -> None:
        with self._lock:
            if self.card is not None and self.card.job_id == job_id:
                return
            old, self.card = self.card, None
            if job_id is not None:
                job = next(job for job in self.jobs if str(job["id"]) == job_id)
                self.card = JobCard(job)
            self.detail.children = [self.card.widget] if self.card is not None else []
        if old is not None:
            old.close()

    # --- live -----------------------------------------------------------------------------

    def on_event(self, event: str, document: EventDocument) -> None:
        run = document.get("run")
        if event in JOB_EVENTS:
            self._jobs_later.poke()
        elif event in RUN_EVENTS and isinstance(run, dict) and "id" in run:
            with self._lock:
                self.runs[str(run["id"])] = run.copy()
            self._draw_later.poke()

    def resync(self) -> None:
        self.load_runs()
        self._jobs_later.poke()

    def freeze(self) -> None:
        self._unsubscribe = None
        self.message.value = "no longer updated live (too many panels and cards): run %jobs again"

    def close(self) -> None:
        unsubscribe, self._unsubscribe = self._unsubscribe, None
        if unsubscribe is not None:
            unsubscribe()
        self._jobs_later.cancel()
        self._draw_later.cancel()
        if self.card is not None:
            self.card.close()
        self.widget.close()
