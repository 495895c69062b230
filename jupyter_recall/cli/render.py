"""Jobs, runs and parse results as plain aligned text for a terminal; instants in this
machine's zone with a hint relative to now (``core/timefmt.py``, as every surface shows them)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from jupyter_recall.client.tables import PAUSED_NEXT, last_outcome
from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.text import (
    CONTROL_PICTURES,
    clip,
    describe_target,
    job_status,
    text_table,
)
from jupyter_recall.core.timefmt import absolute, format_time, parse_instant
from jupyter_recall.core.tz import resolve_tz

JOB_COLUMNS = ("id", "name", "schedule", "status", "next fire", "last")
RUN_COLUMNS = ("run", "job", "status", "trigger", "scheduled for", "duration", "error")
NAME_WIDTH = 30
ERROR_WIDTH = 50


def local_instant(value: Any) -> str:
    """An ISO instant of the API in this machine's zone, relative to now:
    ``2026-06-01 11:00 CEST (in 3 d)``; ``14:03:05 CET (29 min ago)`` today."""
    return format_time(value, datetime.now(timezone.utc))


def describe_action(action: Any) -> str:
    if not isinstance(action, Mapping):
        return "-"
    kind = action.get("type")
    detail = {
        "code": action.get("code"),
        "instruction": action.get("instruction"),
        "tool": action.get("name"),
        "notebook": action.get("path"),
        "notification": action.get("message"),
    }.get(str(kind))
    return f"{kind}: {clip(detail, 60)}" if detail else str(kind)


def last_status(job: Mapping[str, Any]) -> str:
    return clip(last_outcome(job), ERROR_WIDTH)


def next_fire(job: Mapping[str, Any]) -> str:
    """When the job fires next; a paused one does not."""
    return PAUSED_NEXT if job.get("status") == "paused" else local_instant(job.get("next_fire_at"))


def job_row(job: Mapping[str, Any]) -> tuple[str, ...]:
    return (
        str(job.get("id")),
        clip(job.get("name") or "", NAME_WIDTH),
        str(job.get("description") or job.get("when")),
        job_status(job),
        next_fire(job),
        last_status(job),
    )


def jobs_table(jobs: Sequence[Mapping[str, Any]]) -> str:
    if not jobs:
        return "no jobs"
    return text_table(JOB_COLUMNS, [job_row(job) for job in jobs])


def run_row(run: Mapping[str, Any], names: Mapping[str, str]) -> tuple[str, ...]:
    job_id = str(run.get("job_id"))
    name = names.get(job_id)
    duration = run.get("duration")
    return (
        str(run.get("id")),
        f"{job_id} {clip(name, NAME_WIDTH)}" if name else job_id,
        run_status(run),
        str(run.get("trigger")),
        local_instant(run.get("scheduled_for")),
        f"{duration:.1f}s" if isinstance(duration, (int, float)) else "-",
        clip(run.get("error") or "", ERROR_WIDTH),
    )


def run_status(run: Mapping[str, Any]) -> str:
    """The status, with the attempt of a retry and the instant of a pending one."""
    text = str(run.get("status"))
    attempt = run.get("attempt")
    if isinstance(attempt, int) and attempt > 1:
        text += f" (attempt {attempt})"
    if run.get("retry_at"):
        text += f", retry at {local_instant(run.get('retry_at'))}"
    return text


def runs_table(runs: Sequence[Mapping[str, Any]], names: Mapping[str, str] | None = None) -> str:
    if not runs:
        return "no runs"
    return text_table(RUN_COLUMNS, [run_row(run, names or {}) for run in runs])


def _fields(pairs: Sequence[tuple[str, str]]) -> str:
    # A name or schedule holding an escape sequence must not reach the terminal as one.
    width = max(len(key) for key, _ in pairs)
    return "\n".join(
        f"{key.ljust(width)}  {value.translate(CONTROL_PICTURES)}" for key, value in pairs
    )


def job_detail(job: Mapping[str, Any], runs: Sequence[Mapping[str, Any]]) -> str:
    """``show``: every field that matters, then the most recent runs."""
    policies = ", ".join(f"{k}={v}" for k, v in sorted((job.get("policies") or {}).items()))
    pairs = [
        ("id", str(job.get("id"))),
        ("name", str(job.get("name") or "")),
        ("kind", str(job.get("kind"))),
        ("status", str(job.get("status"))),
        *([("paused", str(job["paused_reason"]))] if job.get("paused_reason") else []),
        ("schedule", str(job.get("description"))),
        ("time zone", str(job.get("tz"))),
        ("when", f"{job.get('when')!s}  [canonical: {job.get('canonical')}]"),
        ("action", describe_action(job.get("action"))),
        ("target", describe_target(job.get("target"))),
        ("session", str(job.get("session") or "-")),
        ("next fire", next_fire(job)),
        ("runs", f"{job.get('run_count', 0)} ({job.get('failure_count', 0)} failed)"),
        ("last run", f"{local_instant(job.get('last_run_at'))}  {last_status(job)}"),
        ("policies", policies or "-"),
        ("created", local_instant(job.get("created_at"))),
        ("updated", local_instant(job.get("updated_at"))),
    ]
    text = _fields(pairs)
    if runs:
        text += "\n\nrecent runs\n" + runs_table(runs)
    return text


def job_line(job: Mapping[str, Any]) -> str:
    """One line after a change: what the job is now."""
    name = f" {job['name']!r}" if job.get("name") else ""
    ahead = (
        "nothing fires until resumed"
        if job.get("status") == "paused"
        else f"next fire {local_instant(job.get('next_fire_at'))}"
    )
    return f"job {job.get('id')}{name}: {job.get('status')}, {job.get('description')}, {ahead}"


def _zoned(value: str, zone_name: str) -> str:
    """A fire time in the schedule's zone (what ``parse`` checks), with its weekday and the hint
    relative to now, and in this machine's zone when that differs."""
    instant = parse_instant(value)
    try:
        zone = resolve_tz(zone_name)
    except ValidationError:
        return local_instant(value)
    if instant is None:
        return local_instant(value)
    now = datetime.now(timezone.utc)
    text = f"{instant.astimezone(zone):%a} {format_time(instant, now, zone)}"
    if instant.astimezone().utcoffset() != instant.astimezone(zone).utcoffset():
        text += f"  [{absolute(instant, now)} here]"
    return text


def parse_result(result: Mapping[str, Any]) -> str:
    zone = str(result.get("tz"))
    pairs = [
        ("kind", str(result.get("kind"))),
        ("canonical", str(result.get("canonical"))),
        ("in words", str(result.get("description"))),
        ("time zone", zone),
    ]
    times = [_zoned(str(t), zone) for t in result.get("next_fire_times") or []]
    text = _fields(pairs) + "\nnext fire times"
    return text + ("".join(f"\n  {t}" for t in times) if times else "\n  none")
