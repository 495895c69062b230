"""The HTML the cards and the panel show: pure functions of JSON documents and an instant.

Nothing here imports ipywidgets, so it is testable (and usable) without it. Every value that
comes from a job or a run is escaped. The countdown is CSS only (``countdown_html``): the
browser counts down by itself, so a card costs no message and no kernel wake-up per second.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone, tzinfo
from typing import Any

from jupyter_recall.client.tables import VALUE_KEYS, result_text
from jupyter_recall.core import timefmt
from jupyter_recall.core.text import describe_target
from jupyter_recall.core.timefmt import parse_instant

RUN_COLOURS = {
    "running": "#1565c0",
    "succeeded": "#2e7d32",
    "failed": "#c62828",
    "interrupted": "#ef6c00",
    "timed_out": "#ad1457",
    "cancelled": "#6d4c41",
    "skipped": "#9e9e9e",
    "missed": "#9e9e9e",
}
JOB_COLOURS = {
    "active": "#1565c0",
    "paused": "#ef6c00",
    "completed": "#2e7d32",
    "failed": "#c62828",
    "cancelled": "#6d4c41",
    "deleted": "#9e9e9e",
}
RUN_SYMBOLS = {
    "running": "▶",
    "succeeded": "✓",
    "failed": "✗",
    "interrupted": "!",
    "timed_out": "⧗",
    "cancelled": "■",
    "skipped": "↷",
    "missed": "↷",
}
MUTED = "var(--jp-ui-font-color2, #616161)"
"""Secondary text: the theme's muted colour (readable on dark themes too), grey elsewhere."""
ENDED_JOB_STATUSES = ("completed", "failed", "cancelled", "deleted")
STATIC_COUNTDOWN = 86400
"""From this many seconds ahead the countdown is a day count, not a ticking clock."""
OUTPUT_LIMIT = 20000
"""Characters of a run's output a card keeps (the tail); the run record keeps more."""

RESULTS_SHOWN = 5

Entry = tuple[str, str, float | None]
"""One result of a watcher: a title, a one-line text and its number (if any)."""

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


# --- values -----------------------------------------------------------------------------------


USER_ZONE: tzinfo | None = None
"""The zone cards show times in: the kernel's (the user's machine), as the other surfaces do."""


def local_time(value: Any, zone: tzinfo | None = USER_ZONE, *, now: datetime | None = None) -> str:
    """``14:03:05 CET`` on the day of ``now``, else ``2026-06-01 14:03 CEST`` (``core/timefmt``)
    without the relative hint: a card stays on the page and a printed ``in 5 min`` would go
    stale; the next run has a ticking countdown instead."""
    if parse_instant(value) is None:
        return "-"
    return timefmt.format_time(value, now or datetime.now(timezone.utc), zone, hint=False)


def time_html(value: Any, zone: tzinfo | None = USER_ZONE, *, now: datetime | None = None) -> str:
    """``local_time`` in a ``<time>`` element carrying the exact instant (shown on hover)."""
    instant = parse_instant(value)
    if instant is None:
        return "-"
    exact = _esc(instant.isoformat())
    shown = _esc(local_time(value, zone, now=now))
    return f'<time datetime="{exact}" title="{exact}">{shown}</time>'


def format_duration(seconds: Any) -> str:
    """``0.42 s``, ``12 s``, ``3 min 05 s``, ``2 h 03 min``."""
    if not isinstance(seconds, int | float) or isinstance(seconds, bool) or seconds < 0:
        return "-"
    if seconds < 10:
        return f"{seconds:.2g} s" if seconds < 1 else f"{seconds:.1f} s"
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


def clip_output(text: str, limit: int = OUTPUT_LIMIT) -> str:
    """The tail of ``text`` within ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    kept = text[-limit:]
    return f"[… {len(text) - limit} earlier characters not shown]\n{kept}"


def numeric_value(data: Any) -> float | None:
    """The number a result stands for: a number; the last number on the last non-empty line of
    a text; or that of the first of ``VALUE_KEYS`` a mapping has. None when there is none."""
    if isinstance(data, bool):
        return None
    if isinstance(data, int | float):
        return float(data) if math.isfinite(data) else None
    if isinstance(data, str):
        lines = data.strip().splitlines()
        numbers = _NUMBER.findall(lines[-1]) if lines else []
        value = float(numbers[-1]) if numbers else math.nan
        return value if math.isfinite(value) else None
    if isinstance(data, Mapping):
        for key in VALUE_KEYS:
            found = numeric_value(data.get(key))
            if found is not None:
                return found
    return None


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def badge(text: str, colour: str) -> str:
    return (
        f'<span style="background:{colour};color:#fff;border-radius:3px;padding:0 5px;'
        f'font-size:0.85em">{_esc(text)}</span>'
    )


# --- the card's parts -------------------------------------------------------------------------


def job_header_html(job: Mapping[str, Any]) -> str:
    """Name, kind, id, status, the schedule in words and where it runs."""
    status = str(job.get("status") or "?")
    kind = str(job.get("kind") or "job")
    return (
        '<div class="jupyter-recall-card-header">'
        f"<b>{_esc(job.get('name') or job.get('id'))}</b> "
        f"{badge(status, JOB_COLOURS.get(status, '#616161'))} "
        f'<span style="color:{MUTED}">{_esc(kind)} {_esc(job.get("id"))}</span><br>'
        f"{_schedule_html(job)}"
        f' <span style="color:{MUTED}">· {_esc(describe_target(job.get("target")))}</span>'
        "</div>"
    )


_AFTER_VERBS = {"succeeded": "succeeds", "failed": "fails", "finished": "finishes"}


def _schedule_html(job: Mapping[str, Any]) -> str:
    """The schedule in words; for a job fired by another job's runs, its upstream (id and
    outcome), marked for the eye and for tests."""
    after = job.get("after")
    if not isinstance(after, Mapping):
        text = job.get("description") or job.get("when")
        return f'<span class="jupyter-recall-schedule">{_esc(text)}</span>'
    upstream, on = after.get("job"), after.get("on")
    return (
        f'<span class="jupyter-recall-schedule jupyter-recall-upstream" '
        f'data-upstream-id="{_esc(upstream)}" title="fires each time a run of job '
        f'{_esc(upstream)} {_esc(_AFTER_VERBS.get(str(on), on))}">'
        f"after job <b>{_esc(upstream)}</b> {_esc(_AFTER_VERBS.get(str(on), on))}</span>"
    )


def counters_html(job: Mapping[str, Any]) -> str:
    last = job.get("last_status")
    parts = [
        # Two different counts (docs/engine.md): side by side, each says what it counts, or
        # "runs 1 · failed 2" would read as a contradiction after a failed Run now.
        f"<span title='fired by the schedule (Run now not included)'>scheduled runs "
        f"<b>{_esc(job.get('run_count', 0))}</b></span>",
        f"<span title='failed runs, Run now included'>failed runs "
        f"<b>{_esc(job.get('failure_count', 0))}</b></span>",
    ]
    if last:
        parts.append(f"last {badge(str(last), RUN_COLOURS.get(str(last), '#616161'))}")
    policies = job.get("policies") or {}
    if isinstance(policies, Mapping) and policies.get("max_runs"):
        parts.append(f"max runs {_esc(policies['max_runs'])}")
    limit = policies.get("timeout") if isinstance(policies, Mapping) else None
    if isinstance(limit, (int, float)):
        parts.append(f"time limit {limit:g} s")
    retries = policies.get("retries") if isinstance(policies, Mapping) else None
    if isinstance(retries, Mapping) and retries.get("max"):
        backoff = retries.get("backoff")
        delay = f"{backoff:g}" if isinstance(backoff, (int, float)) else _esc(backoff)
        parts.append(f"retries {_esc(retries['max'])} (backoff {delay} s)")
    if isinstance(policies, Mapping) and policies.get("pause_after_failures"):
        streak = job.get("failure_streak", 0)
        parts.append(f"failures in a row {_esc(streak)}/{_esc(policies['pause_after_failures'])}")
    text = " · ".join(parts)
    if job.get("last_error"):
        text += f'<br><span style="color:#c62828">{_esc(job["last_error"])}</span>'
    return f'<div class="jupyter-recall-counters">{text}</div>'


def _ticking(seconds: int, uid: str) -> str:
    """A countdown the browser runs: an integer custom property animated from ``seconds`` to 0
    in one-second steps, split into hours, minutes and seconds shown through CSS counters.
    Registered integer properties round, hence the ``- 0.5`` (floor) in the splits."""
    name = f"jr-cd-{uid}"
    return (
        "<style>"
        "@property --jr-left{syntax:'<integer>';inherits:true;initial-value:0}"
        "@property --jr-h{syntax:'<integer>';inherits:true;initial-value:0}"
        "@property --jr-m{syntax:'<integer>';inherits:true;initial-value:0}"
        "@property --jr-s{syntax:'<integer>';inherits:true;initial-value:0}"
        ".jupyter-recall-countdown{--jr-h:calc(var(--jr-left) / 3600 - 0.5);"
        "--jr-m:calc((var(--jr-left) - var(--jr-h) * 3600) / 60 - 0.5);"
        "--jr-s:calc(var(--jr-left) - var(--jr-h) * 3600 - var(--jr-m) * 60);"
        "counter-reset:jrh var(--jr-h) jrm var(--jr-m) jrs var(--jr-s)}"
        ".jupyter-recall-countdown::after{content:counter(jrh) ':' "
        "counter(jrm,decimal-leading-zero) ':' counter(jrs,decimal-leading-zero)}"
        f"@keyframes {name}{{from{{--jr-left:{seconds}}}to{{--jr-left:0}}}}"
        f".{name}{{animation:{name} {seconds}s steps({seconds},end) forwards}}"
        "</style>"
        f'<span class="jupyter-recall-countdown {name}" data-seconds="{seconds}"></span>'
    )


def countdown_html(job: Mapping[str, Any], now: datetime, uid: str) -> str:
    """The next fire time and, when it is less than a day ahead, a live countdown to it."""
    status = str(job.get("status") or "")
    if status in ENDED_JOB_STATUSES:
        return f'<div class="jupyter-recall-next">ended ({_esc(status)})</div>'
    if status == "paused" and job.get("paused_reason"):
        return (
            '<div class="jupyter-recall-next jupyter-recall-paused-reason">'
            f"{_esc(job['paused_reason'])} · nothing fires until resumed</div>"
        )
    if status == "paused":
        return '<div class="jupyter-recall-next">paused: nothing fires until resumed</div>'
    upcoming = parse_instant(job.get("next_fire_at"))
    if upcoming is None:
        return '<div class="jupyter-recall-next">no run ahead</div>'
    at = time_html(job.get("next_fire_at"), now=now)
    seconds = math.ceil((upcoming - now).total_seconds())
    if seconds <= 0:
        return f'<div class="jupyter-recall-next">next run {at}: due now</div>'
    if seconds >= STATIC_COUNTDOWN:
        hint = _esc(timefmt.relative(upcoming, now))
        return f'<div class="jupyter-recall-next">next run {at} ({hint})</div>'
    return f'<div class="jupyter-recall-next">next run {at} (in {_ticking(seconds, uid)})</div>'


def attempts_of(job: Mapping[str, Any]) -> int | None:
    """How many runs an occurrence of ``job`` gets at most (``policies.retries.max`` + 1), or
    None when it has no retries."""
    policies = job.get("policies")
    retries = policies.get("retries") if isinstance(policies, Mapping) else None
    if not isinstance(retries, Mapping) or not isinstance(retries.get("max"), int):
        return None
    return int(retries["max"]) + 1


def attempt_text(run: Mapping[str, Any], zone: tzinfo, now: datetime, attempts: int | None) -> str:
    """`` · attempt 2/3`` and `` · retry at 14:03:05``: what a run is of its occurrence."""
    attempt = run.get("attempt")
    text = ""
    if isinstance(attempt, int) and (attempts or attempt > 1):
        text = f" · attempt {attempt}/{attempts}" if attempts else f" · attempt {attempt}"
    if run.get("retry_at"):
        text += f" · retry at {local_time(run.get('retry_at'), zone, now=now)}"
    return text


def run_title(
    run: Mapping[str, Any], zone: tzinfo, now: datetime, attempts: int | None = None
) -> str:
    """One line for a run: symbol, time, outcome and duration (the history's titles), and
    which attempt of its occurrence it is when the job retries (``attempts`` at most)."""
    status = str(run.get("status") or "?")
    when = run.get("started_at") or run.get("scheduled_for")
    text = f"{RUN_SYMBOLS.get(status, '·')} {local_time(when, zone, now=now)} {status}"
    if status != "running" and run.get("duration") is not None:
        text += f" in {format_duration(run.get('duration'))}"
    if run.get("trigger") and run.get("trigger") != "schedule":
        text += f" ({run['trigger']})"
    return text + attempt_text(run, zone, now, attempts)


def run_header_html(
    run: Mapping[str, Any] | None, zone: tzinfo, now: datetime, attempts: int | None = None
) -> str:
    if run is None:
        return '<div class="jupyter-recall-run">no run yet</div>'
    status = str(run.get("status") or "?")
    colour = RUN_COLOURS.get(status, "#616161")
    title = run_title(run, zone, now, attempts)
    text = f'<span style="color:{colour}"><b>{_esc(title)}</b></span>'
    text += f' <span style="color:{MUTED}">run {_esc(run.get("id"))}</span>'
    if run.get("error"):
        text += f'<br><span style="color:#c62828">{_esc(run["error"])}</span>'
    return f'<div class="jupyter-recall-run" data-status="{_esc(status)}">{text}</div>'


# --- charts -----------------------------------------------------------------------------------


def sparkline_svg(values: Sequence[float], width: int = 180, height: int = 36) -> str:
    """A line of the values (oldest first) with the last one marked; empty below two."""
    if len(values) < 2:
        return ""
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    step = (width - 8) / (len(values) - 1)
    points = [
        (4 + i * step, height - 4 - (value - low) / span * (height - 8))
        for i, value in enumerate(values)
    ]
    path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    last_x, last_y = points[-1]
    return (
        f'<svg class="jupyter-recall-sparkline" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}"><polyline fill="none" stroke="#1565c0" '
        f'stroke-width="1.5" points="{path}"/><circle cx="{last_x:.1f}" cy="{last_y:.1f}" r="2.5"'
        f' fill="#c62828"/><title>min {low:g}, max {high:g}, last {values[-1]:g}</title></svg>'
    )


def check_entry(check: Mapping[str, Any], zone: tzinfo, now: datetime) -> Entry:
    """A watcher check (``GET /api/recall/watchers/{id}``, ``history``) as a result entry."""
    raw = check.get("result")
    result: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    success = bool(check.get("success"))
    data = result.get("data") if success else result.get("error")
    title = f"{'✓' if success else '✗'} {local_time(check.get('checked_at'), zone, now=now)}"
    if check.get("notified"):
        title += " notified"
    return title, result_text(data), numeric_value(data) if success else None


def run_entry(run: Mapping[str, Any], zone: tzinfo, now: datetime) -> Entry:
    """A finished run as a result entry: its output's last line and number."""
    output = str(run.get("output") or "")
    success = run.get("status") == "succeeded"
    text = output if success or not run.get("error") else str(run["error"])
    return run_title(run, zone, now), result_text(text), numeric_value(output) if success else None


def results_html(entries: Sequence[Entry]) -> str:
    """The latest results (newest first) and a sparkline of their numbers."""
    if not entries:
        return '<div class="jupyter-recall-results">no results yet</div>'
    values = [value for _, _, value in reversed(entries) if value is not None]
    rows = "".join(
        f"<li>{_esc(title)}: <code>{_esc(text)}</code></li>"
        for title, text, _ in entries[:RESULTS_SHOWN]
    )
    return (
        '<div class="jupyter-recall-results"><b>latest results</b> '
        f'{sparkline_svg(values)}<ul style="margin:2px 0">{rows}</ul></div>'
    )


def timeline_svg(
    rows: Sequence[tuple[str, str]],
    runs: Sequence[Mapping[str, Any]],
    *,
    start: datetime,
    end: datetime,
    width: int = 640,
) -> str:
    """Recent runs as dots on one line per job (``rows``: job id and label), coloured by
    outcome, between ``start`` and ``end``."""
    if not rows:
        return '<div class="jupyter-recall-timeline">no jobs</div>'
    label_width, row_height, top = 180, 18, 16
    height = top + row_height * len(rows) + 4
    span = max((end - start).total_seconds(), 1.0)
    index = {job_id: i for i, (job_id, _) in enumerate(rows)}
    parts = [
        f'<svg class="jupyter-recall-timeline" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" style="font:11px sans-serif">',
        f'<text x="{label_width}" y="11" fill="#616161">{_esc(local_time(start, now=end))}</text>',
        f'<text x="{width - 4}" y="11" fill="#616161" text-anchor="end">'
        f"{_esc(local_time(end, now=end))}</text>",
    ]
    for i, (_, label) in enumerate(rows):
        y = top + i * row_height + row_height / 2
        parts.append(f'<text x="2" y="{y + 4:.0f}">{_esc(label[:28])}</text>')
        parts.append(
            f'<line x1="{label_width}" y1="{y:.0f}" x2="{width - 4}" y2="{y:.0f}" '
            'stroke="#e0e0e0"/>'
        )
    for run in runs:
        row = index.get(str(run.get("job_id")))
        instant = parse_instant(run.get("started_at") or run.get("scheduled_for"))
        if row is None or instant is None or not start <= instant <= end:
            continue
        x = label_width + (instant - start).total_seconds() / span * (width - 4 - label_width)
        y = top + row * row_height + row_height / 2
        status = str(run.get("status"))
        parts.append(
            f'<circle class="jupyter-recall-dot" data-status="{_esc(status)}" cx="{x:.1f}" '
            f'cy="{y:.0f}" r="4" fill="{RUN_COLOURS.get(status, "#616161")}"><title>'
            f"{_esc(run.get('id'))} {_esc(status)} {_esc(run.get('started_at') or '')}"
            "</title></circle>"
        )
    parts.append("</svg>")
    legend = " ".join(badge(status, colour) for status, colour in RUN_COLOURS.items())
    return f"<div>{''.join(parts)}<div>{legend}</div></div>"
