"""The bounds of what jupyter_recall accepts, declared once (core: every entry point uses them).

``server/openapi.yaml`` states the same numbers (``maxLength``, ``maximum``, path patterns) and
``tests/server/test_rest_limits.py`` checks that the two agree, so the spec promises exactly
what the server enforces.
"""

from __future__ import annotations

MAX_BODY_BYTES = 8 * 1024 * 1024
"""A request body, in bytes (code and notebook parameters travel in bodies)."""

MAX_DEPTH = 32
"""Nesting of objects and arrays in a body; deeper JSON is not a job description."""

MAX_INTEGER_DIGITS = 100
"""Digits of any integer in a body. Longer ones are refused while parsing (turning thousands of
digits into an int is slow, and Python refuses it past 4,300); the fields that are numbers
have their own, much smaller, ranges."""

TEXT_LIMITS = {
    "name": 200,
    "when": 500,
    "tz": 64,
    "session": 4096,
}
"""Longest value, in characters, of the short text fields of a job (these also refuse NUL)."""

MAX_RUNS = 1_000_000_000
"""``policies.max_runs``: from 1 to this."""

MAX_SECONDS = 10 * 366 * 86_400
"""``policies.catchup_window`` and ``policies.jitter``: from 0 to ten years in seconds;
``policies.timeout``: above 0 and at most this."""

ID_PATTERN = r"[A-Za-z0-9_-]{1,64}"
"""Job, run and watcher ids in paths (ids are made by ``core.model.new_id``)."""

SCHEDULE_KINDS = ("once", "interval", "cron", "immediate", "after")
"""``GET /jobs?schedule_kind=``."""

FLAGS = ("1", "true", "0", "false")
"""Boolean query arguments (``?pending_recalls=``); the first two mean yes."""

MAX_RETRIES = 100
"""``policies.retries.max``: from 0 to this many attempts after the first."""

MAX_RETRY_FACTOR = 10
"""``policies.retries.factor``: from 1 to this (``backoff`` is from 0 to ``MAX_SECONDS``,
``jitter`` a fraction from 0 to 1)."""

MAX_PAUSE_AFTER_FAILURES = 1000
"""``policies.pause_after_failures``: from 1 to this many consecutive failed occurrences."""

MAX_KEEP_RUNS = 1_000_000
"""``policies.keep_runs`` and ``RecallApp.keep_runs``: from 0 to this many runs kept per job
(``policies.keep_runs_for``: above 0 and at most ``MAX_SECONDS``)."""

NOTIFICATION_PRIORITIES = ("low", "normal", "high", "critical")
"""A notification's ``priority``, lowest first (a channel may map them to its own levels)."""
