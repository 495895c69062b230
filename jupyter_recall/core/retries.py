"""Retries of a job's runs (``policies.retries``): the policy record and its pure planning.

An *attempt* is one run of an occurrence; a run that ends with a status of ``on`` while
attempts remain is followed by the next attempt of the same occurrence, after a backoff:

    delay = backoff * factor ** (attempt - 1) * (1 + jitter * f)

where ``attempt`` is the attempt that just ended and ``f`` in [0, 1) a hash of the job, the
occurrence and the attempt (deterministic, like the firing jitter of ``core/policy.py``: a
restarted or second engine plans the same instant). Nothing here reads a clock: the end of the
attempt is an argument.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, TypedDict

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.limits import (
    MAX_RETRIES,
    MAX_RETRY_FACTOR,
    MAX_SECONDS,
)

if TYPE_CHECKING:
    from jupyter_recall.core.model import RunStatus

RETRY_ON = ("failed", "timed_out", "interrupted")
"""The run statuses that may be retried (``policies.retries.on``)."""

RETRY_FIELDS = ("max", "backoff", "factor", "jitter", "on")


class RetriesJSON(TypedDict):
    """``policies.retries`` as answered and stored (every field present)."""

    max: int
    backoff: float
    factor: float
    jitter: float
    on: list[str]


@dataclass(frozen=True, slots=True)
class Retries:
    """``policies.retries``: how many more attempts an occurrence gets, and when."""

    max: int
    """Attempts after the first: an occurrence runs at most ``max + 1`` times."""
    backoff: float = 10.0
    """Seconds before the first retry."""
    factor: float = 2.0
    """Each further retry waits ``factor`` times longer than the one before."""
    jitter: float = 0.0
    """Up to this fraction of the delay is added (deterministically per attempt)."""
    on: tuple[str, ...] = RETRY_ON
    """The statuses of an attempt that call for another one."""

    def __post_init__(self) -> None:
        _check_int(self.max, "max", 0, MAX_RETRIES)
        _check_number(self.backoff, "backoff", 0, MAX_SECONDS)
        _check_number(self.factor, "factor", 1, MAX_RETRY_FACTOR)
        _check_number(self.jitter, "jitter", 0, 1)
        if not self.on:
            raise ValidationError("on", "must name at least one status", accepted=list(RETRY_ON))
        for status in self.on:
            if status not in RETRY_ON:
                raise ValidationError("on", f"unknown status {status!r}", accepted=list(RETRY_ON))

    def to_dict(self) -> RetriesJSON:
        return {
            "max": self.max,
            "backoff": self.backoff,
            "factor": self.factor,
            "jitter": self.jitter,
            "on": list(self.on),
        }

    @classmethod
    def parse(cls, value: object) -> Retries | None:
        """From user or stored input: null, a count of retries, or an object of
        ``RETRY_FIELDS`` (``max`` required). Errors name ``retries.<field>``."""
        if value is None:
            return None
        if isinstance(value, int) and not isinstance(value, bool):
            return _named(lambda: cls(max=value))
        if not isinstance(value, Mapping):
            raise ValidationError(
                "retries", f"must be a count of retries, an object or null, got {value!r}"
            )
        return _named(lambda: cls._from_mapping(value))

    @classmethod
    def _from_mapping(cls, data: Mapping[object, object]) -> Retries:
        unknown = sorted(str(key) for key in data if key not in RETRY_FIELDS)
        if unknown:
            raise ValidationError(unknown[0], "unknown retry setting", accepted=list(RETRY_FIELDS))
        if "max" not in data:
            raise ValidationError("max", "is required: the number of retries after the first run")
        on = data.get("on", list(RETRY_ON))
        if not isinstance(on, (list, tuple)) or not all(isinstance(item, str) for item in on):
            raise ValidationError("on", f"must be a list of statuses, got {on!r}")
        return cls(
            max=_int(data["max"], "max"),
            backoff=_number(data.get("backoff", 10.0), "backoff"),
            factor=_number(data.get("factor", 2.0), "factor"),
            jitter=_number(data.get("jitter", 0.0), "jitter"),
            on=tuple(dict.fromkeys(on)),
        )


def _named(build: Callable[[], Retries]) -> Retries:
    """Build, naming errors ``retries.<field>``."""
    try:
        return build()
    except ValidationError as error:
        raise ValidationError(
            f"retries.{error.field}", error.message, accepted=error.accepted
        ) from None


def _int(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(name, f"must be an integer, got {value!r}")
    return value


def _number(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValidationError(name, f"must be a number, got {value!r}")
    return float(value)


def _check_int(value: int, name: str, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValidationError(name, f"must be an integer from {low:,} to {high:,}, got {value!r}")


def _check_number(value: float, name: str, low: float, high: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise ValidationError(name, f"must be a number from {low:,} to {high:,}, got {value!r}")


# --- planning ----------------------------------------------------------------------------------


def retry_fraction(job_id: str, occurrence: datetime, attempt: int) -> float:
    """A number in [0, 1) that depends only on the job, the occurrence and the attempt."""
    key = f"retry|{job_id}|{occurrence.timestamp():.6f}|{attempt}".encode()
    digest = hashlib.blake2b(key, digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def retry_delay(retries: Retries, attempt: int, fraction: float) -> float:
    """Seconds between the end of ``attempt`` and the start of the next one, at most
    ``MAX_SECONDS`` (a large factor overflows nothing)."""
    exponent = attempt - 1
    base = retries.backoff
    if base > 0 and exponent > 0:
        # Past the bound, the power alone is too long: no need to compute it (it may overflow).
        if exponent * math.log(retries.factor) > math.log(MAX_SECONDS / base):
            return float(MAX_SECONDS)
        base *= retries.factor**exponent
    return min(base * (1 + retries.jitter * fraction), float(MAX_SECONDS))


def wants_retry(retries: Retries | None, status: RunStatus, attempt: int) -> bool:
    """Whether an attempt that ended with ``status`` is followed by another one."""
    if retries is None or attempt > retries.max:
        return False
    return status.value in retries.on


def retry_at(
    retries: Retries | None,
    *,
    job_id: str,
    occurrence: datetime,
    attempt: int,
    status: RunStatus,
    ended_at: datetime,
) -> datetime | None:
    """When the next attempt of ``occurrence`` starts, or None when ``attempt`` (which ended
    at ``ended_at`` with ``status``) is the occurrence's last."""
    if retries is None or not wants_retry(retries, status, attempt):
        return None
    fraction = retry_fraction(job_id, occurrence, attempt) if retries.jitter else 0.0
    return ended_at + timedelta(seconds=retry_delay(retries, attempt, fraction))
