"""``JobCard``: one job, live. Shown by ``%schedule`` and ``%recall`` (and by whoever creates a
job: ``show_job_card(job)``), and inside the ``%jobs`` panel for the selected job.

The card follows the job through the server's event stream (``live.router``): status, counters
and next fire time change when the job changes anywhere (this kernel, another one, the REST API,
JupyterLab); a run's output is appended to the card while the run executes, wherever it
executes; a finished run shows its outcome and duration, and folds into the history when the
next one starts. Buttons call the REST API; what they change comes back through the same events.
"""

from __future__ import annotations

import html
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

import ipywidgets

from jupyter_recall.client.documents import (
    EventDocument,
    JobDocument,
    RunDocument,
    WatcherCheckDocument,
)
from jupyter_recall.client.records import JobRecord, WatcherRecord
from jupyter_recall.core.errors import NotFoundError, RecallError
from jupyter_recall.core.text import describe_target
from jupyter_recall.core.timefmt import format_time
from jupyter_recall.kernel.connection import client as _client
from jupyter_recall.kernel.jobs import api
from jupyter_recall.kernel.widgets import base, render
from jupyter_recall.kernel.widgets.live import router

HISTORY = 10
"""Earlier runs kept in a card's history (the run records keep them all)."""
CHECKS = 20
"""A watcher's latest checks read for its results and sparkline."""
RUN_EVENTS = ("run.started", "run.output", "run.finished")
OUTPUT_CLASS = "jupyter-recall-run-output"


def _now() -> datetime:
    return datetime.now(timezone.utc)


class _History:
    """Earlier runs, newest first, each with an Output widget holding its output."""

    def __init__(self) -> None:
        self.widget = ipywidgets.Accordion(children=(), selected_index=None)
        self.widget.add_class("jupyter-recall-history")
        self.runs: list[RunDocument] = []
        self._outputs: dict[str, ipywidgets.Output] = {}

    def put(self, run: RunDocument) -> None:
        """Add the run (or update it, when it is already there) at its place."""
        run_id = str(run.get("id"))
        kept = next((r for r in self.runs if r.get("id") == run_id), None)
        if kept is not None:
            kept.update(run)
        else:
            self.runs.insert(0, run.copy())
            self.runs.sort(key=lambda r: str(r.get("started_at") or r.get("scheduled_for")))
            self.runs.reverse()
        for old in self.runs[HISTORY:]:
            widget = self._outputs.pop(str(old.get("id")), None)
            if widget is not None:
                widget.close()
        del self.runs[HISTORY:]

    def append(self, run_id: Any, text: str) -> bool:
        """Output of an earlier run still going (overlap allowed); False if it is not here."""
        kept = next((r for r in self.runs if r.get("id") == run_id), None)
        if kept is None:
            return False
        kept["output"] = render.clip_output(str(kept.get("output") or "") + text)
        return True

    def replace(self, runs: Sequence[RunDocument]) -> None:
        wanted = {str(run.get("id")) for run in runs}
        for run_id in list(self._outputs):
            if run_id not in wanted:
                self._outputs.pop(run_id).close()
        self.runs = [run.copy() for run in runs[:HISTORY]]

    def show(self, zone: Any, now: datetime, attempts: int | None = None) -> None:
        children = []
        for run in self.runs:
            run_id = str(run.get("id"))
            widget = self._outputs.get(run_id)
            if widget is None:
                widget = self._outputs[run_id] = base.output_widget(OUTPUT_CLASS + "-history")
            text = render.clip_output(str(run.get("output") or ""))
            if run.get("error"):
                text += ("\n" if text and not text.endswith("\n") else "") + str(run["error"])
            widget.outputs = base.stream_outputs(text)
            children.append(widget)
        self.widget.children = tuple(children)
        self.widget.titles = tuple(render.run_title(run, zone, now, attempts) for run in self.runs)

    def close(self) -> None:
        for widget in self._outputs.values():
            widget.close()
        self._outputs.clear()
        self.widget.close()


def card_document(job: JobRecord | WatcherRecord | JobDocument) -> JobDocument:
    """The job document a card starts from. A watcher is a job of kind ``watcher`` under its
    ``watcher_id``; until the card reads that job, it shows the watcher's status."""
    if isinstance(job, WatcherRecord):
        return {"id": job.id, "kind": "watcher", "status": job.status}
    if isinstance(job, JobRecord):
        return job.to_dict()
    return job.copy()


class JobCard:
    """A live card for one job: a ``Job``, its JSON, or a ``Watcher``.

    ``live=False`` makes a still picture (no subscription); ``load=False`` skips reading the
    job's runs from the server (the card starts empty). Display it with IPython's ``display``.
    """

    def __init__(
        self,
        job: JobRecord | WatcherRecord | JobDocument,
        *,
        live: bool = True,
        load: bool = True,
    ) -> None:
        self.job = card_document(job)
        self.job_id = self.job["id"]
        self.current: RunDocument | None = None
        self.text = ""
        self.checks: list[WatcherCheckDocument] | None = None
        self.deleted = False
        self._lock = threading.RLock()
        self._uid = base.uid()
        self.header = ipywidgets.HTML()
        self.countdown = base.countdown(self._countdown_html)
        self.counters = ipywidgets.HTML()
        self.message = ipywidgets.HTML()
        self.message.add_class("jupyter-recall-message")
        self.run_header = ipywidgets.HTML()
        self.output = base.output_widget(OUTPUT_CLASS)
        self.results = ipywidgets.HTML()
        self.history = _History()
        self.buttons = {
            "cancel": base.button("Cancel", "stop firing for good; keeps the history", self.cancel),
            "pause": base.button("Pause", "stop firing until resumed", self.toggle_pause),
            "skip": base.button("Skip", "skip the next occurrence", self.skip),
            "run": base.button("Run now", "fire once now; the schedule stays", self.run_now),
            "stop": base.button("Stop run", "stop the run in flight", self.stop_run),
        }
        controls = ipywidgets.HBox([ipywidgets.HTML(base.STYLE), *self.buttons.values()])
        self.widget = base.frame(
            [
                self.header,
                self.countdown,
                self.counters,
                controls,
                self.message,
                self.run_header,
                self.output,
                self.results,
                self.history.widget,
            ],
            "jupyter-recall-job-card",
        )
        self._unsubscribe: Callable[[], None] | None = None
        if live:
            self._unsubscribe = router.subscribe(self.job_id, self)
        if load:
            self.resync()
        else:
            self._show()

    # --- display -------------------------------------------------------------------------

    def _repr_mimebundle_(self, **kwargs: Any) -> base.MimeBundle:
        return base.bundle(self.widget, self.summary(), **kwargs)

    def summary(self) -> str:
        job = self.job
        upcoming = job.get("next_fire_at")
        # The text fallback is a snapshot (nbconvert, a notebook reopened): with the hint.
        ahead = f"next run {format_time(upcoming, _now())}" if upcoming else "no run ahead"
        if job.get("after"):
            ahead = "fires after its upstream's runs"
        return (
            f"{job.get('kind', 'job')} {self.job_id} {job.get('name')!r}: "
            f"{job.get('description') or job.get('when')} "
            f"({describe_target(job.get('target'))}), {job.get('status')}, {ahead}"
        )

    def _zone(self) -> Any:
        return render.USER_ZONE

    def _countdown_html(self) -> str:
        return render.countdown_html(self.job, _now(), f"{self._uid}-{base.uid()}")

    def _show(self) -> None:
        now, zone = _now(), self._zone()
        self.header.value = render.job_header_html(self.job)
        self.countdown.value = self._countdown_html()
        self.counters.value = render.counters_html(self.job)
        attempts = render.attempts_of(self.job)
        self.run_header.value = render.run_header_html(self.current, zone, now, attempts)
        self.output.outputs = base.stream_outputs(self.text)
        self.history.show(zone, now, attempts)
        self._show_results(zone, now)
        self._controls()

    def _show_results(self, zone: Any, now: datetime) -> None:
        if self.job.get("kind") != "watcher":
            self.results.layout.display = "none"
            return
        self.results.layout.display = None
        if self.checks is not None:
            entries = [render.check_entry(check, zone, now) for check in self.checks]
        else:
            current = self.current
            finished = [current] if current and current.get("status") != "running" else []
            runs = [*finished, *self.history.runs]
            entries = [render.run_entry(run, zone, now) for run in runs]
        self.results.value = render.results_html(entries)

    def _controls(self) -> None:
        """Buttons from the server's rule (``allowed_actions``, ``core/actions.py``): the card
        offers what the API accepts, as the JupyterLab sidebar does."""
        allowed = set() if self.deleted else set(self.job.get("allowed_actions") or ())
        paused = self.job.get("status") == "paused"
        running = self.current is not None and self.current.get("status") == "running"
        self.buttons["pause"].description = "Resume" if paused else "Pause"
        wanted = {
            "cancel": "cancel" in allowed,
            "pause": ("resume" if paused else "pause") in allowed,
            "skip": "skip" in allowed,
            "run": "run_now" in allowed,
            "stop": running and not self.deleted,
        }
        for name, enabled in wanted.items():
            base.enable(self.buttons[name], enabled)

    def say(self, text: str, *, error: bool = False) -> None:
        colour = "#c62828" if error else render.MUTED
        self.message.value = f'<span style="color:{colour}">{html.escape(text)}</span>'

    # --- state from the server -----------------------------------------------------------

    def resync(self) -> None:
        """Read the job and its runs again (at creation and after the stream reconnects)."""
        if self.deleted:
            return
        client = _client.get_client()
        try:
            job: JobDocument = client.request("GET", f"/api/recall/jobs/{self.job_id}")
            runs: list[RunDocument] = client.request("GET", f"/api/recall/jobs/{self.job_id}/runs")[
                "runs"
            ]
        except NotFoundError:
            self._deleted()
            return
        checks = self._read_checks(job)
        with self._lock:
            self.checks = checks
            self.job = job
            self.current = runs[0].copy() if runs else None
            self.text = render.clip_output(str(runs[0].get("output") or "")) if runs else ""
            self.history.replace(runs[1:])
            self._show()

    def on_event(self, event: str, document: EventDocument) -> None:
        job, run = document.get("job"), document.get("run")
        checks = self.checks
        if event == "job.deleted":
            self._deleted()
            return
        if event == "run.finished" and isinstance(run, dict):
            # Outside the lock: the buttons need not wait for these reads.
            run = self._read_run(run)
            job = job if isinstance(job, dict) else self._read_job()
            checks = self._read_checks(job or self.job)
        with self._lock:
            if event == "run.finished":
                self.checks = checks
            if event in ("job.created", "job.updated") and isinstance(job, dict):
                self.job = job.copy()
                self._show()
            elif event in RUN_EVENTS and isinstance(run, dict):
                if event == "run.finished" and isinstance(job, dict):
                    self.job = job.copy()
                self._on_run(event, run, str(document.get("text") or ""))

    def _on_run(self, event: str, run: RunDocument, text: str) -> None:
        if event == "run.finished":
            self._finished(run)
            return
        if self.current is None or self.current.get("id") != run.get("id"):
            if event == "run.output" and self.history.append(run.get("id"), text):
                self.history.show(self._zone(), _now())
                return
            self._start(run)
        if event == "run.output":
            self.text = render.clip_output(self.text + text)
            self.output.outputs = base.stream_outputs(self.text)
        else:
            current = run.copy() if self.current is None else self.current.copy()
            current.update(run)
            self.current = current
            self.run_header.value = render.run_header_html(
                self.current, self._zone(), _now(), render.attempts_of(self.job)
            )
            self._controls()

    def _start(self, run: RunDocument) -> None:
        """A new run becomes the current one; the previous one folds into the history."""
        if self.current is not None:
            self.history.put({**self.current, "output": self.text})
        self.current = run.copy()
        self.text = ""
        self._show()

    def _finished(self, full: RunDocument) -> None:
        if self.current is not None and self.current.get("id") == full.get("id"):
            self.current = full
            self.text = render.clip_output(str(full.get("output") or self.text))
            self._show()
        elif full.get("status") in ("skipped", "missed") or self._is_older(full):
            # Recorded without running (a skip, a missed occurrence) or an earlier overlapping run.
            self.history.put(full)
            self._show()
        else:
            self._start(full)
            self.text = render.clip_output(str(full.get("output") or ""))
            self._show()

    def _is_older(self, run: Mapping[str, Any]) -> bool:
        if self.current is None:
            return False
        mine = str(self.current.get("started_at") or self.current.get("scheduled_for"))
        theirs = str(run.get("started_at") or run.get("scheduled_for"))
        return theirs < mine

    def _read_run(self, run: RunDocument) -> RunDocument:
        """The run with its output: events carry runs without it."""
        try:
            full: RunDocument = _client.get_client().request("GET", f"/api/recall/runs/{run['id']}")
        except RecallError:
            return run
        return full

    def _read_checks(self, job: Mapping[str, Any]) -> list[WatcherCheckDocument] | None:
        """A watcher's latest checks, newest first; None for other jobs (or if unreadable:
        the card falls back to the runs' output)."""
        if job.get("kind") != "watcher":
            return None
        try:
            found = _client.get_client().request(
                "GET", f"/api/recall/watchers/{self.job_id}", query={"last_n": CHECKS}
            )
        except RecallError:
            return None
        checks: list[WatcherCheckDocument] = found.get("history") or []
        return [check.copy() for check in checks]

    def _read_job(self) -> JobDocument | None:
        """The job as it is after a run (counters, last status): a run that did not move the
        schedule (run now, a stop) ends without a ``job.updated`` event."""
        try:
            job: JobDocument = _client.get_client().request(
                "GET", f"/api/recall/jobs/{self.job_id}"
            )
            return job
        except RecallError:
            return None

    def _deleted(self) -> None:
        with self._lock:
            self.deleted = True
            self.job = {**self.job, "status": "deleted", "next_fire_at": None}
            self._show()
            self.say("this job was deleted")
        self.stop_following()

    def freeze(self) -> None:
        """Stop following the job (too many live cards); the card stays as it is."""
        self._unsubscribe = None
        self.say("no longer updated live (too many cards); jupyter_recall.job(id) reads it")

    def stop_following(self) -> None:
        unsubscribe, self._unsubscribe = self._unsubscribe, None
        if unsubscribe is not None:
            unsubscribe()

    def close(self) -> None:
        self.stop_following()
        self.history.close()
        for widget in self.widget.children:
            widget.close()
        self.widget.close()

    # --- buttons ------------------------------------------------------------------------

    def _act(self, label: str, action: Callable[[], str]) -> None:
        try:
            done = action()
        except RecallError as error:
            self.say(f"{label}: {error}", error=True)
            return
        self.say(done)

    def _apply(self, job: api.Job) -> None:
        with self._lock:
            self.job = job.to_dict()
            self._show()

    def _handle(self) -> api.Job:
        return api.Job({"id": self.job_id})

    def cancel(self) -> None:
        def act() -> str:
            self._apply(self._handle().cancel())
            return "cancelled: nothing more fires; the history stays"

        self._act("cancel", act)

    def toggle_pause(self) -> None:
        resume = self.job.get("status") == "paused"

        def act() -> str:
            handle = self._handle()
            self._apply(handle.resume() if resume else handle.pause())
            return "resumed" if resume else "paused"

        self._act("resume" if resume else "pause", act)

    def skip(self) -> None:
        def act() -> str:
            self._apply(self._handle().skip())
            return "skipped the next occurrence"

        self._act("skip", act)

    def run_now(self) -> None:
        def act() -> str:
            run = self._handle().run_now()
            with self._lock:
                if self.current is None or self.current.get("id") != run.get("id"):
                    self._start(run)
            return f"run {run.get('id')} started"

        self._act("run now", act)

    def stop_run(self) -> None:
        current = self.current

        def act() -> str:
            if current is None or current.get("status") != "running":
                return "no run in flight"
            run = _client.get_client().request("POST", f"/api/recall/runs/{current['id']}/stop")
            return f"run {run.get('id')}: {run.get('status')}"

        self._act("stop", act)
