"""The ids of the server's records (jobs, runs, watchers, approvals) as clients check them
before a request, so that a bad one is refused naming the argument."""

from __future__ import annotations

import re

from jupyter_recall.core.errors import ValidationError

ID_LENGTH = 64
"""The longest id (``core.limits.ID_PATTERN``): the ``maxLength`` of the tools' id arguments."""
JOB_ID = re.compile(rf"^[A-Za-z0-9_-]{{1,{ID_LENGTH}}}$")


def check_job_id(job_id: object, field: str = "job_id") -> str:
    if not isinstance(job_id, str) or not JOB_ID.match(job_id):
        raise ValidationError(field, f"not a job id: {job_id!r} (ids look like '3f9c2a1b7d0e')")
    return job_id
