"""``policies.retries``: the backoff planning as tables (pure: the end of an attempt is an
argument, no clock), and the validation of the policy naming each field."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.limits import MAX_RETRIES, MAX_RETRY_FACTOR, MAX_SECONDS
from jupyter_recall.core.model import Policies, RunStatus
from jupyter_recall.core.retries import (
    RETRY_ON,
    Retries,
    retry_at,
    retry_delay,
    retry_fraction,
    wants_retry,
)

T0 = datetime(2030, 1, 1, 9, 0, tzinfo=timezone.utc)
ENDED = T0 + timedelta(seconds=42)

# (backoff, factor, jitter, attempt that ended, fraction) -> seconds until the next attempt
DELAYS = [
    (10, 2, 0, 1, 0.0, 10),
    (10, 2, 0, 2, 0.0, 20),
    (10, 2, 0, 3, 0.0, 40),
    (10, 2, 0, 4, 0.9, 80),  # no jitter: the fraction does nothing
    (5, 1, 0, 7, 0.0, 5),  # factor 1: a constant backoff
    (10, 3, 0, 3, 0.0, 90),
    (10, 2, 0.5, 1, 0.0, 10),
    (10, 2, 0.5, 1, 0.5, 12.5),
    (10, 2, 0.5, 2, 0.999, 20 * (1 + 0.5 * 0.999)),
    (10, 2, 1, 3, 0.25, 50),
    (0, 2, 1, 5, 0.7, 0),  # no backoff: at once
    (10, 10, 0, 100, 0.0, MAX_SECONDS),  # 10 * 10^99 s: bounded, no overflow
    (MAX_SECONDS, 2, 1, 2, 0.9, MAX_SECONDS),
]


@pytest.mark.parametrize("row", DELAYS)
def test_the_delay_table(row: tuple[float, float, float, int, float, float]) -> None:
    backoff, factor, jitter, attempt, fraction, delay = row
    retries = Retries(max=100, backoff=backoff, factor=factor, jitter=jitter)
    assert retry_delay(retries, attempt, fraction) == pytest.approx(delay)


# (max, on, status, attempt that ended) -> another attempt?
WANTS = [
    (2, RETRY_ON, RunStatus.FAILED, 1, True),
    (2, RETRY_ON, RunStatus.FAILED, 2, True),
    (2, RETRY_ON, RunStatus.FAILED, 3, False),  # three attempts: max + 1
    (0, RETRY_ON, RunStatus.FAILED, 1, False),
    (2, RETRY_ON, RunStatus.TIMED_OUT, 1, True),
    (2, RETRY_ON, RunStatus.INTERRUPTED, 1, True),
    (2, ("failed",), RunStatus.TIMED_OUT, 1, False),
    (2, ("failed",), RunStatus.INTERRUPTED, 1, False),
    (2, RETRY_ON, RunStatus.SUCCEEDED, 1, False),
    (2, RETRY_ON, RunStatus.CANCELLED, 1, False),  # stopped on request: never retried
    (2, RETRY_ON, RunStatus.SKIPPED, 1, False),
    (2, RETRY_ON, RunStatus.MISSED, 1, False),
]


@pytest.mark.parametrize(("most", "on", "status", "attempt", "wanted"), WANTS)
def test_which_ends_call_for_another_attempt(
    most: int, on: tuple[str, ...], status: RunStatus, attempt: int, wanted: bool
) -> None:
    assert wants_retry(Retries(max=most, on=on), status, attempt) is wanted


def test_no_policy_never_retries() -> None:
    assert wants_retry(None, RunStatus.FAILED, 1) is False
    at = retry_at(
        None, job_id="j", occurrence=T0, attempt=1, status=RunStatus.FAILED, ended_at=ENDED
    )
    assert at is None


def test_retry_at_counts_from_the_end_of_the_attempt() -> None:
    retries = Retries(max=3, backoff=10, factor=2)
    at = [
        retry_at(
            retries,
            job_id="j",
            occurrence=T0,
            attempt=n,
            status=RunStatus.FAILED,
            ended_at=ENDED,
        )
        for n in (1, 2, 3, 4)
    ]
    assert at == [ENDED + timedelta(seconds=s) for s in (10, 20, 40)] + [None]


def test_jitter_is_deterministic_per_job_occurrence_and_attempt() -> None:
    retries = Retries(max=3, backoff=100, jitter=0.5)
    planned = {
        (job, attempt): retry_at(
            retries,
            job_id=job,
            occurrence=T0,
            attempt=attempt,
            status=RunStatus.FAILED,
            ended_at=ENDED,
        )
        for job in ("a", "b")
        for attempt in (1, 2)
    }
    # The same inputs plan the same instant (a restarted or second engine agrees)...
    assert planned[("a", 1)] == retry_at(
        retries, job_id="a", occurrence=T0, attempt=1, status=RunStatus.FAILED, ended_at=ENDED
    )
    # ...different jobs spread out, and every delay stays within [base, base * 1.5).
    assert planned[("a", 1)] != planned[("b", 1)]
    for (_, attempt), at in planned.items():
        assert at is not None
        base = 100 * 2 ** (attempt - 1)
        assert base <= (at - ENDED).total_seconds() < base * 1.5
    fractions = {retry_fraction(str(n), T0, 1) for n in range(200)}
    assert all(0 <= f < 1 for f in fractions)
    assert len(fractions) == 200


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        (2, Retries(max=2)),
        ({"max": 1}, Retries(max=1)),
        (
            {"max": 3, "backoff": 1.5, "factor": 3, "jitter": 0.2, "on": ["failed", "failed"]},
            Retries(max=3, backoff=1.5, factor=3.0, jitter=0.2, on=("failed",)),
        ),
    ],
)
def test_accepted_forms(value: object, expected: Retries | None) -> None:
    assert Retries.parse(value) == expected
    policies = Policies.from_dict({"retries": value})
    assert policies.retries == expected
    assert Policies.from_dict(policies.to_dict()) == policies


@pytest.mark.parametrize(
    ("value", "field", "says"),
    [
        ("twice", "retries", "count of retries, an object or null"),
        (True, "retries", "count of retries"),
        (-1, "retries.max", f"from 0 to {MAX_RETRIES}"),
        (MAX_RETRIES + 1, "retries.max", f"from 0 to {MAX_RETRIES}"),
        ({}, "retries.max", "is required"),
        ({"max": 1.5}, "retries.max", "must be an integer"),
        ({"max": 1, "backoff": -1}, "retries.backoff", f"from 0 to {MAX_SECONDS:,}"),
        ({"max": 1, "backoff": "5s"}, "retries.backoff", "must be a number"),
        ({"max": 1, "factor": 0.5}, "retries.factor", f"from 1 to {MAX_RETRY_FACTOR}"),
        ({"max": 1, "jitter": 2}, "retries.jitter", "from 0 to 1"),
        ({"max": 1, "on": []}, "retries.on", "at least one status"),
        ({"max": 1, "on": ["succeeded"]}, "retries.on", "unknown status 'succeeded'"),
        ({"max": 1, "on": "failed"}, "retries.on", "list of statuses"),
        ({"max": 1, "delay": 3}, "retries.delay", "unknown retry setting"),
    ],
)
def test_refusals_name_the_field(value: object, field: str, says: str) -> None:
    with pytest.raises(ValidationError) as caught:
        Policies.from_dict({"retries": value})
    assert caught.value.field == field
    assert says in caught.value.message
