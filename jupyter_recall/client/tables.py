"""Jobs and runs as text and HTML, for the magics (and the widgets' text fallback)."""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from jupyter_recall.core.text import clip, describe_target, job_status, text_table
from jupyter_recall.core.timefmt import format_time

__all__ = [  # clip, describe_target and text_table re-exported: the magics read them from here
    "clip",
    "describe_target",
    "html_table",
    "job_details",
    "job_row",
    "jobs_bundle",
    "last_outcome",
    "next_run",
    "now",
    "result_text",
    "short_instant",
    "text_table",
]

COLUMNS = ("id", "name", "kind", "schedule", "target", "status", "next run", "runs", "last")
NAME_WIDTH = 40
OUTPUT_LINES = 5


def now() -> datetime:
    """The instant the magics' tables are relative to (they are printed once, a snapshot)."""
    return datetime.now(timezone.utc)


def short_instant(value: Any) -> str:
    """An instant of the API as every surface shows it (``core/timefmt.py``), relative to now."""
    return format_time(value, now())


VALUE_KEYS = ("value", "result", "content", "stdout", "body", "status_code")
"""Fields of a mapping result that hold its value, in this order (a tool's ``data``)."""
RESULT_WIDTH = 80


def _last_line(text: str) -> str:
    """The newest line of a text (a log's, a counter's): what changes from check to check."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else '""'


def _compact(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


def result_text(data: Any, width: int = RESULT_WIDTH) -> str:
    """A result as a person reads it, on one line: a text's last line, a number as it is, an
    HTTP answer as ``HTTP 200: <body>``, a mapping by its value field (``VALUE_KEYS``) or else
    as ``key=value`` pairs; never raw JSON cut in the middle of a brace."""
    if isinstance(data, Mapping):
        if "status_code" in data:
            body = data.get("body")
            text = f"HTTP {data['status_code']}" + (f": {result_text(body)}" if body else "")
        else:
            key = next((key for key in VALUE_KEYS if key in data), None)
            text = (
                result_text(data[key])
                if key is not None
                else ", ".join(f"{k}={_compact(v)}" for k, v in data.items()) or "{}"
            )
    elif isinstance(data, str):
        text = _last_line(data)
    elif isinstance(data, list | tuple):
        text = f"{len(data)} items: {_compact(list(data))}"
    else:
        text = "-" if data is None else _compact(data)
    return clip(text, width)


PAUSED_NEXT = "paused: does not fire"
"""A paused job's next run, as the JupyterLab sidebar says it (it has no next fire)."""


def next_run(job: Mapping[str, Any]) -> str:
    """When the job fires next; a paused one does not (said in words, not as "-")."""
    if job.get("status") == "paused":
        return PAUSED_NEXT
    return short_instant(job.get("next_fire_at"))


def last_outcome(job: Mapping[str, Any]) -> str:
    """The last run's status and error, the status said once: an error that starts with its
    status (``timed_out: still running after ...``, ``missed: ...``) is shown as it is."""
    last = str(job.get("last_status") or "-")
    error = job.get("last_error")
    if not error:
        return last
    error = str(error)
    return error if error.startswith(f"{last}:") else f"{last}: {error}"


def job_row(job: Mapping[str, Any]) -> tuple[str, ...]:
    return (
        str(job.get("id")),
        clip(str(job.get("name") or ""), NAME_WIDTH),
        str(job.get("kind")),
        str(job.get("description") or job.get("when")),
        describe_target(job.get("target")),
        job_status(job),
        next_run(job),
        str(job.get("run_count", 0)),
        clip(last_outcome(job), NAME_WIDTH),
    )


def html_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    head = "".join(f"<th>{html.escape(cell)}</th>" for cell in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>" for row in rows
    )
    return (
        '<table class="jupyter-recall-jobs"><thead><tr>'
        + head
        + "</tr></thead><tbody>"
        + body
        + "</tbody></table>"
    )


def jobs_bundle(jobs: Sequence[Mapping[str, Any]], *, empty: str) -> dict[str, str]:
    """A display bundle: an HTML table with a text/plain fallback."""
    if not jobs:
        return {"text/plain": empty, "text/html": f"<p>{html.escape(empty)}</p>"}
    rows = [job_row(job) for job in jobs]
    return {"text/plain": text_table(COLUMNS, rows), "text/html": html_table(COLUMNS, rows)}


def _output_tail(output: str) -> list[str]:
    lines = output.rstrip("\n").splitlines()
    return [f"      | {line}" for line in lines[-OUTPUT_LINES:]]


def _status_line(job: Mapping[str, Any]) -> str:
    if job.get("status") == "paused":
        return f"  status:   {PAUSED_NEXT}"
    return f"  status:   {job.get('status')}, next run {next_run(job)}"


def job_details(job: Mapping[str, Any], runs: Sequence[Mapping[str, Any]]) -> str:
    """What ``%schedule status <id>`` prints: the job, then its latest runs with their output."""
    action = job.get("action") or {}
    what = action.get("code") or action.get("instruction") or action.get("message") or action
    lines = [
        f"job {job.get('id')} {job.get('name')!r} ({job.get('kind')})",
        f"  schedule: {job.get('description')} [{job.get('canonical')}]",
        _status_line(job),
        f"  target:   {describe_target(job.get('target'))}",
        f"  action:   {action.get('type')}: {clip(str(what), 200)}",
        f"  runs:     {job.get('run_count', 0)} by the schedule; "
        f"{job.get('failure_count', 0)} failed (Run now included)",
    ]
    if job.get("last_error"):
        lines.append(f"  last error: {job['last_error']}")
    if job.get("paused_reason"):
        lines.append(f"  paused:   {job['paused_reason']}")
    for run in runs:
        status = str(run.get("status"))
        if isinstance(run.get("attempt"), int) and run["attempt"] > 1:
            status += f" (attempt {run['attempt']})"
        if run.get("retry_at"):
            status += f", retry at {short_instant(run['retry_at'])}"
        error = f" - {run['error']}" if run.get("error") else ""
        lines.append(f"  run {run.get('id')} {short_instant(run.get('scheduled_for'))}: {status}")
        lines[-1] += error
        lines.extend(_output_tail(str(run.get("output") or "")))
    return "\n".join(lines)
