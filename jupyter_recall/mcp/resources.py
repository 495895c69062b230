"""``recall://`` resources: a job, its runs, a run's output, approvals; read through REST.

``recall://jobs/{job_id}`` (the job, JSON), ``recall://jobs/{job_id}/runs`` (its latest runs,
JSON), ``recall://runs/{run_id}/output`` (the run's output as text), ``recall://approvals`` (the
pending approvals, JSON) and ``recall://approvals/{approval_id}`` (one record, JSON).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TypedDict

from jupyter_recall.client.remote import api_path
from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.limits import ID_PATTERN
from jupyter_recall.core.text import clip
from jupyter_recall.mcp.backend import Backend

SCHEME = "recall://"
JSON = "application/json"
RESOURCE_NOT_FOUND = -32002
"""The MCP specification's error code for a resource that cannot be read."""
TEXT = "text/plain"
LISTED_JOBS = 50
RUNS_SHOWN = 20
PENDING_APPROVALS = "recall://approvals"


@dataclass(frozen=True)
class Template:
    uri_template: str
    name: str
    description: str
    mime_type: str
    pattern: re.Pattern[str]


TEMPLATES = (
    Template(
        "recall://jobs/{job_id}",
        "job",
        "A scheduled job: its schedule, action, target, state and counts.",
        JSON,
        re.compile(rf"recall://jobs/(?P<id>{ID_PATTERN})"),
    ),
    Template(
        "recall://jobs/{job_id}/runs",
        "job runs",
        f"The latest {RUNS_SHOWN} runs of a job, newest first.",
        JSON,
        re.compile(rf"recall://jobs/(?P<id>{ID_PATTERN})/runs"),
    ),
    Template(
        "recall://runs/{run_id}/output",
        "run output",
        "The output of a run (subscribe to follow it while it runs).",
        TEXT,
        re.compile(rf"recall://runs/(?P<id>{ID_PATTERN})/output"),
    ),
    Template(
        "recall://approvals/{approval_id}",
        "approval",
        "An approval record: the tool call, who asked, its status and decision.",
        JSON,
        re.compile(rf"recall://approvals/(?P<id>{ID_PATTERN})"),
    ),
)
JOB, JOB_RUNS, RUN_OUTPUT, APPROVAL = TEMPLATES


SHOWN_URI = 200
"""Columns of an unknown URI repeated in the error."""


def match(uri: str) -> tuple[Template, str]:
    """The template ``uri`` is an instance of, and the id in it."""
    for template in TEMPLATES:
        found = template.pattern.fullmatch(uri)
        if found:
            return template, found["id"]
    accepted = [PENDING_APPROVALS, *(template.uri_template for template in TEMPLATES)]
    # Clipped: the message goes back to the client, which sent the whole URI already.
    shown = clip(repr(uri), SHOWN_URI)
    raise ValidationError("uri", f"not a jupyter_recall resource: {shown}", accepted=accepted)


def followed(uri: str) -> tuple[str, str | None]:
    """What a subscription to ``uri`` follows: ``("run", run id)`` or ``("approvals", id)``, the
    id None for the pending list."""
    if uri == PENDING_APPROVALS:
        return "approvals", None
    template, ident = match(uri)
    if template is RUN_OUTPUT:
        return "run", ident
    if template is APPROVAL:
        return "approvals", ident
    raise ValidationError(
        "uri", "only run outputs and approvals change while one watches them: " + uri
    )


def read(backend: Backend, uri: str) -> tuple[str, str]:
    """The resource's MIME type and text."""
    if uri == PENDING_APPROVALS:
        pending = backend.request("GET", "/api/recall/approvals", query={"status": "pending"})
        return JSON, json.dumps(pending)
    template, ident = match(uri)
    if template is APPROVAL:
        return JSON, json.dumps(backend.request("GET", f"/api/recall/approvals/{ident}"))
    if template is JOB:
        return JSON, json.dumps(backend.request("GET", api_path("jobs", ident)))
    if template is JOB_RUNS:
        query = {"limit": RUNS_SHOWN}
        runs = backend.request("GET", api_path("jobs", ident, "runs"), query=query)
        return JSON, json.dumps(runs)
    run = backend.request("GET", api_path("runs", ident))
    return TEXT, str(run.get("output") or "")


class Listed(TypedDict):
    """A resource as listed: its address and name."""

    uri: str
    name: str


def listed(backend: Backend) -> list[Listed]:
    """The pending approvals, then the caller's latest jobs, as resources (uri, name)."""
    jobs = backend.request("GET", "/api/recall/jobs")["jobs"][:LISTED_JOBS]
    found: list[Listed] = [{"uri": PENDING_APPROVALS, "name": "pending approvals"}]
    for job in jobs:
        found.append(
            {"uri": f"{SCHEME}jobs/{job['id']}", "name": str(job.get("name") or job["id"])}
        )
    return found
