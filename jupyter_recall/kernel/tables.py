"""Jobs and runs as text and HTML, for the magics (the widget comes later)."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone, tzinfo
from typing import Any

COLUMNS = ("id", "name", "kind", "schedule", "target", "status", "next run", "runs", "last")
NAME_WIDTH = 40
OUTPUT_LINES = 5


def parse_instant(value: Any) -> datetime | None:
    """An ISO instant of the API as an aware datetime (the API sends aware instants only; a
    naive one is taken as UTC); None when ``value`` is not an instant. The one parser of the
    magics, widgets and command line."""
    if not isinstance(value, str) or not value:
        return None
    try:
        instant = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return instant if instant.tzinfo is not None else instant.replace(tzinfo=timezone.utc)


def format_instant(value: Any, zone: tzinfo | None = timezone.utc) -> str:
    """An ISO instant of the API as ``2026-06-01 12:00:00 UTC``; ``zone=None``: local time."""
    instant = parse_instant(value)
    if instant is None:
        return value if isinstance(value, str) and value else "-"
    return instant.astimezone(zone).strftime("%Y-%m-%d %H:%M:%S %Z")


def short_instant(value: Any) -> str:
    """An ISO instant of the API in UTC, as the magics show it."""
    return format_instant(value)


def describe_target(target: Any) -> str:
    if not isinstance(target, Mapping):
        return "-"
    kind = target.get("type")
    if kind == "kernel":
        return f"kernel {target.get('path') or target.get('kernel_id')}"
    if kind == "headless":
        return f"headless {target.get('kernel_name', 'python3')}"
    return str(kind)


def clip(text: object, width: int) -> str:
    """One line of at most ``width`` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def job_row(job: Mapping[str, Any]) -> tuple[str, ...]:
    last = job.get("last_status") or "-"
    if job.get("last_error"):
        last = f"{last}: {job['last_error']}"
    return (
        str(job.get("id")),
        clip(str(job.get("name") or ""), NAME_WIDTH),
        str(job.get("kind")),
        str(job.get("description") or job.get("when")),
        describe_target(job.get("target")),
        str(job.get("status")),
        short_instant(job.get("next_fire_at")),
        str(job.get("run_count", 0)),
        clip(last, NAME_WIDTH),
    )


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in rows
    ]
    top = "  ".join(cell.ljust(width) for cell, width in zip(header, widths, strict=True))
    rule = "  ".join("-" * width for width in widths)
    return "\n".join(line.rstrip() for line in [top, rule, *lines])


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


def job_details(job: Mapping[str, Any], runs: Sequence[Mapping[str, Any]]) -> str:
    """What ``%schedule status <id>`` prints: the job, then its latest runs with their output."""
    action = job.get("action") or {}
    what = action.get("code") or action.get("instruction") or action.get("message") or action
    lines = [
        f"job {job.get('id')} {job.get('name')!r} ({job.get('kind')})",
        f"  schedule: {job.get('description')} [{job.get('canonical')}]",
        f"  status:   {job.get('status')}, next run {short_instant(job.get('next_fire_at'))}",
        f"  target:   {describe_target(job.get('target'))}",
        f"  action:   {action.get('type')}: {clip(str(what), 200)}",
        f"  runs:     {job.get('run_count', 0)} ({job.get('failure_count', 0)} failed)",
    ]
    if job.get("last_error"):
        lines.append(f"  last error: {job['last_error']}")
    for run in runs:
        status = run.get("status")
        error = f" - {run['error']}" if run.get("error") else ""
        lines.append(f"  run {run.get('id')} {short_instant(run.get('scheduled_for'))}: {status}")
        lines[-1] += error
        lines.extend(_output_tail(str(run.get("output") or "")))
    return "\n".join(lines)
