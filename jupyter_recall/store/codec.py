"""Rows <-> records for the SQL stores.

Instants are stored as integer microseconds since the Unix epoch, UTC: they sort numerically,
compare in indexes without parsing, and convert back exactly. Reads always return aware UTC
datetimes.

JSON payloads (schedule, action, target, options, policies) carry a ``version`` key in the stored
text so that a later migration can rewrite them; the key is added on write and removed on read,
so records never see it (the schedule's own ``to_dict`` already carries its version).

Rows are the NamedTuples of ``rows.py``, built and read by column name: building and reading
them is the hot path of batch inserts and of the scheduler tick.
"""

from __future__ import annotations

import json
import json.scanner
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any, Generic, TypeVar, cast

from jupyter_recall.core.errors import StoreError, ValidationError
from jupyter_recall.core.model import (
    DEFAULT_POLICIES,
    PAYLOAD_VERSION,
    Job,
    JobKind,
    JobStatus,
    Policies,
    Run,
    RunStatus,
    RunTrigger,
)
from jupyter_recall.core.records import (
    NO_OPTIONS,
    SERVER_TARGET,
    Action,
    JobOptions,
    Target,
    action_from_json,
    target_from_stored,
)
from jupyter_recall.core.triggers.once import OnceTrigger
from jupyter_recall.core.when import SPEC_VERSION, ScheduleSpec
from jupyter_recall.store.rows import (
    JobRow,
    RunRow,
    RunStateRow,
    WatcherResultRow,
    WatcherStateRow,
)
from jupyter_recall.store.watchers import (
    CheckRecord,
    PendingCheck,
    WatcherRecord,
    bounded_result,
    json_text,
)

UTC = timezone.utc
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)

K = TypeVar("K")
V = TypeVar("V")


class _Memo(dict[K, V]):
    """A bounded memo of immutable values computed over and over: most jobs of a batch share
    their policies, schedule, creation instant..., and a dict lookup is much cheaper than
    encoding again."""

    def __init__(self, compute: Callable[[K], V], size: int = 4096) -> None:
        super().__init__()
        self._compute = compute
        self._size = size

    def __missing__(self, key: K) -> V:
        if len(self) >= self._size:
            self.clear()
        value = self[key] = self._compute(key)
        return value


# --- instants -------------------------------------------------------------------------------


def _microseconds(value: datetime) -> int:
    return (value - EPOCH) // _MICROSECOND


def _instant(value: int) -> datetime:
    return EPOCH + timedelta(microseconds=value)


_to_microseconds: _Memo[datetime, int] = _Memo(_microseconds)
_from_microseconds: _Memo[int, datetime] = _Memo(_instant)


def encode_instant(value: datetime, field: str) -> int:
    """Microseconds since the epoch; a naive datetime is refused (its zone is unknown)."""
    try:
        return _to_microseconds[value]
    except TypeError:
        raise ValidationError(field, f"must be a timezone-aware datetime, got {value!r}") from None


def encode_optional_instant(value: datetime | None, field: str) -> int | None:
    return None if value is None else encode_instant(value, field)


def decode_instant(value: int) -> datetime:
    return _from_microseconds[value]


def decode_optional_instant(value: int | None) -> datetime | None:
    return None if value is None else _from_microseconds[value]


# --- JSON payloads ----------------------------------------------------------------------------


def _not_json(value: object) -> Any:
    raise TypeError(f"{type(value).__name__} is not JSON-serialisable")


_encoder = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=_not_json
)


def _c_encoder() -> Callable[[Any], str] | None:
    """The C encoder built once: ``JSONEncoder.encode`` builds it again on every call, which
    costs more than encoding a small payload."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return None
    try:
        chunks = make(
            None, _not_json, json.encoder.encode_basestring, None, ":", ",", False, False, False
        )
    except TypeError:  # another interpreter's signature
        return None
    join = "".join

    def encode(value: Any) -> str:
        return join(chunks(value, 0))

    return encode if encode({"a": [1, "é"]}) == '{"a":[1,"é"]}' else None


_encode_json: Callable[[Any], str] = _c_encoder() or _encoder.encode
# The scanner without JSONDecoder.decode's checks for surrounding whitespace: the texts are ours.
_Scanner = Callable[[str, int], tuple[Any, int]]
_scan_json = cast(Callable[[json.JSONDecoder], _Scanner], json.scanner.make_scanner)(
    json.JSONDecoder()
)


def _decode_json(text: str) -> Any:
    try:
        return _scan_json(text, 0)[0]
    except StopIteration:  # how the scanner says "no JSON value here"
        raise StoreError(f"stored payload is not JSON: {text[:80]!r}") from None


_VERSION_PREFIX = f'{{"version":{PAYLOAD_VERSION}'
_EMPTY_PAYLOAD = _VERSION_PREFIX + "}"


def encode_payload(value: Mapping[str, Any], field: str) -> str:
    """JSON text of ``value`` with the payload version as its first key."""
    if not value:
        return _EMPTY_PAYLOAD
    if "version" in value:
        raise ValidationError(
            f"{field}.version", "is reserved: the store records the payload format version there"
        )
    try:
        text = _encode_json(value)
    except (TypeError, ValueError, RecursionError) as exc:
        raise ValidationError(field, f"must be JSON-serialisable ({exc})") from None
    return _VERSION_PREFIX + "," + text[1:]


def decode_payload(text: str, field: str) -> dict[str, Any]:
    data: dict[str, Any] = _decode_json(text)
    version = data.pop("version", None)
    if version != PAYLOAD_VERSION:
        raise StoreError(
            f"stored {field} payload has version {version!r}; this release reads "
            f"version {PAYLOAD_VERSION} (a migration is missing)"
        )
    return data


_ATOMIC = frozenset({str, int, float, bool, type(None)})
_SHARED_TEXT_LIMIT = 1024
"""Payload texts longer than this are decoded every time rather than remembered."""
R = TypeVar("R")


class _RecordDecoder(Generic[R]):
    """The record of a stored payload text. Jobs fired together share a few payload texts: a
    short one whose values are all atomic becomes a record with nothing mutable (frozen, its
    free-form values read-only), remembered and shared by every job holding that text. Others
    (a tool's nested params) are decoded for each job, which then owns its record's values."""

    def __init__(self, field: str, parse: Callable[[Any], R]) -> None:
        self._field = field
        self._parse = parse
        self._shared: _Memo[str, R | None] = _Memo(self._shareable, size=1024)

    def __call__(self, text: str) -> R:
        if len(text) <= _SHARED_TEXT_LIMIT:
            record = self._shared[text]
            if record is not None:
                return record
        return self._decode(decode_payload(text, self._field))

    def _shareable(self, text: str) -> R | None:
        data = decode_payload(text, self._field)
        flat = all(type(value) in _ATOMIC for value in data.values())
        return self._decode(data) if flat else None

    def _decode(self, data: dict[str, Any]) -> R:
        try:
            return self._parse(data)
        except ValidationError as exc:
            raise StoreError(f"stored {self._field} payload is not valid: {exc}") from None


_action_value = _RecordDecoder("action", action_from_json)
_target_value = _RecordDecoder("target", target_from_stored)
_options_value = _RecordDecoder("options", JobOptions.from_json)


def _encode_policies(policies: Policies) -> str:
    return encode_payload(policies.to_dict(), "policies")


def _decode_policies(text: str) -> Policies:
    return Policies.from_dict(decode_payload(text, "policies"))


_quote = json.encoder.encode_basestring
"""How ``_encode_json`` writes a string (``ensure_ascii=False``)."""


def _encode_schedule(schedule: ScheduleSpec) -> str:
    trigger = schedule.trigger
    if type(trigger) is OnceTrigger and schedule.anchor is None:
        # The text of ``to_dict`` written directly: one-shots are most of a burst of jobs, and
        # building then encoding the dicts costs twice as much (tests check both agree).
        return (
            f'{{"version":{SPEC_VERSION},"kind":{_quote(schedule.kind)},'
            f'"canonical":{_quote(schedule.canonical)},"tz":{_quote(schedule.tz)},'
            f'"anchor":null,"trigger":{{"type":"once","at":{_quote(trigger.at.isoformat())}}}}}'
        )
    return _encode_json(schedule.to_dict())


def _decode_schedule(text: str) -> ScheduleSpec:
    return ScheduleSpec.from_dict(_decode_json(text))


_policies_text: _Memo[Policies, str] = _Memo(_encode_policies)
_policies_value: _Memo[str, Policies] = _Memo(_decode_policies)
_schedule_value: _Memo[str, ScheduleSpec] = _Memo(_decode_schedule)

# --- enums --------------------------------------------------------------------------------------
# The enums are str subclasses, which the sqlite3 module binds as their text, but only after
# looking for an adapter (about 1 µs, as for None): job rows hold ``_value_`` instead, a plain
# attribute (``.value`` is a Python-level property).

_JOB_KINDS = {member.value: member for member in JobKind}
_JOB_STATUSES = {member.value: member for member in JobStatus}
_RUN_STATUSES = {member.value: member for member in RunStatus}
_RUN_TRIGGERS = {member.value: member for member in RunTrigger}

# --- jobs ---------------------------------------------------------------------------------------


def job_row(job: Job) -> JobRow:
    return job_rows((job,))[0]


def job_rows(jobs: Sequence[Job]) -> list[JobRow]:
    """The jobs' rows.

    The payloads that jobs share (one action object for a whole batch, the default target and
    policies...) are encoded once per call, remembered by identity: the jobs hold them, so no
    other object takes their ids during the call.
    """
    texts = dict(_SHARED_TEXTS)
    try:
        return [_job_row(job, texts) for job in jobs]
    except TypeError:
        for job in jobs:
            _check_instants(job, _JOB_INSTANTS)
        raise


_JOB_INSTANTS = ("next_occurrence", "next_fire_at", "last_run_at", "created_at", "updated_at")


def _check_instants(record: Job | Run, fields: Sequence[str]) -> None:
    """Name the field when an instant cannot be encoded (naive, or not a datetime at all)."""
    for name in fields:
        value = getattr(record, name)
        if value is not None:
            encode_instant(value, name)


def _remember(texts: dict[int, str], value: Any, encode: Callable[[Any], str]) -> str:
    text = texts[id(value)] = encode(value)
    return text


def _action_text(action: Action) -> str:
    return encode_payload(action.to_json(), "action")


def _target_text(target: Target) -> str:
    return encode_payload(target.to_json(), "target")


def _options_text(options: JobOptions) -> str:
    return encode_payload(options.to_json(), "options")


_SHARED_TEXTS = {
    id(SERVER_TARGET): _target_text(SERVER_TARGET),
    id(NO_OPTIONS): _options_text(NO_OPTIONS),
    id(DEFAULT_POLICIES): _encode_policies(DEFAULT_POLICIES),
}
"""The texts of the records every job without a target, options or policies holds, made once:
they live as long as the process, so no other object takes their ids."""


def _job_row(job: Job, texts: dict[int, str]) -> JobRow:
    us = _to_microseconds
    known = texts.get
    schedule, action, target, options, policies = (
        job.schedule,
        job.action,
        job.target,
        job.options,
        job.policies,
    )
    last_run_at, last_status = job.last_run_at, job.last_status
    next_occurrence, next_fire_at = job.next_occurrence, job.next_fire_at
    # Computed, not remembered: next occurrences are seldom shared (created_at often is).
    occurrence_us = None if next_occurrence is None else _microseconds(next_occurrence)
    if next_fire_at is next_occurrence:  # no jitter
        fire_us = occurrence_us
    else:
        fire_us = None if next_fire_at is None else us[next_fire_at]
    return JobRow(
        id=job.id,
        owner=job.owner,
        name=job.name,
        kind=job.kind._value_,
        status=job.status._value_,
        when_text=job.when,
        schedule_kind=schedule.kind,
        schedule=known(id(schedule)) or _remember(texts, schedule, _encode_schedule),
        action=known(id(action)) or _remember(texts, action, _action_text),
        target=known(id(target)) or _remember(texts, target, _target_text),
        options=known(id(options)) or _remember(texts, options, _options_text),
        policies=known(id(policies)) or _remember(texts, policies, _policies_text.__getitem__),
        session=job.session,
        next_occurrence=occurrence_us,
        next_fire_at=fire_us,
        run_count=job.run_count,
        failure_count=job.failure_count,
        last_run_at=None if last_run_at is None else us[last_run_at],
        last_run_id=job.last_run_id,
        last_status=None if last_status is None else last_status._value_,
        last_error=job.last_error,
        created_at=us[job.created_at],
        updated_at=us[job.updated_at],
        version=job.version,
        plugin_owner=job.plugin_owner,
        key=job.key,
        failure_streak=job.failure_streak,
        paused_reason=job.paused_reason,
    )


def job_from_row(row: JobRow) -> Job:
    try:
        return _job_from_row(row)
    except KeyError as exc:
        raise StoreError(f"job {row.id!r} holds an unknown value {exc}") from None


def _job_from_row(row: JobRow) -> Job:
    at = _from_microseconds
    next_occurrence, next_fire_at = row.next_occurrence, row.next_fire_at
    last_run_at, last_status = row.last_run_at, row.last_status
    return Job(
        id=row.id,
        owner=row.owner,
        name=row.name,
        kind=_JOB_KINDS[row.kind],
        status=_JOB_STATUSES[row.status],
        when=row.when_text,
        schedule=_schedule_value[row.schedule],
        action=_action_value(row.action),
        target=_target_value(row.target),
        options=_options_value(row.options),
        policies=_policies_value[row.policies],
        session=row.session,
        next_occurrence=None if next_occurrence is None else at[next_occurrence],
        next_fire_at=None if next_fire_at is None else at[next_fire_at],
        run_count=row.run_count,
        failure_count=row.failure_count,
        last_run_at=None if last_run_at is None else at[last_run_at],
        last_run_id=row.last_run_id,
        last_status=None if last_status is None else _RUN_STATUSES[last_status],
        last_error=row.last_error,
        created_at=at[row.created_at],
        updated_at=at[row.updated_at],
        version=row.version,
        plugin_owner=row.plugin_owner,
        key=row.key,
        failure_streak=row.failure_streak,
        paused_reason=row.paused_reason,
    )


# --- runs ---------------------------------------------------------------------------------------

_RUN_INSTANTS = ("scheduled_for", "created_at", "started_at", "finished_at", "retry_at")


def run_row(run: Run) -> RunRow:
    try:
        return _run_row(run)
    except TypeError:
        _check_instants(run, _RUN_INSTANTS)
        raise


def _run_row(run: Run) -> RunRow:
    us = _to_microseconds
    started_at, finished_at = run.started_at, run.finished_at
    return RunRow(
        id=run.id,
        job_id=run.job_id,
        owner=run.owner,
        scheduled_for=us[run.scheduled_for],
        trigger_kind=run.trigger._value_,
        status=run.status._value_,
        created_at=us[run.created_at],
        started_at=None if started_at is None else us[started_at],
        finished_at=None if finished_at is None else us[finished_at],
        output=run.output,
        output_dropped=0,
        error=run.error,
        engine_id=run.engine_id,
        attempt=run.attempt,
        retry_at=None if run.retry_at is None else us[run.retry_at],
    )


def run_state_row(run: Run) -> RunStateRow:
    """What changes while and after a run executes (``update_run_states``)."""
    encode = encode_optional_instant
    return RunStateRow(
        id=run.id,
        status=run.status._value_,
        started_at=encode(run.started_at, "started_at"),
        finished_at=encode(run.finished_at, "finished_at"),
        error=run.error,
        retry_at=encode(run.retry_at, "retry_at"),
    )


def run_from_row(row: RunRow) -> Run:
    try:
        return _run_from_row(row)
    except KeyError as exc:
        raise StoreError(f"run {row.id!r} holds an unknown value {exc}") from None


def _run_from_row(row: RunRow) -> Run:
    at = _from_microseconds
    started_at, finished_at, retry_at = row.started_at, row.finished_at, row.retry_at
    return Run(
        id=row.id,
        job_id=row.job_id,
        owner=row.owner,
        scheduled_for=at[row.scheduled_for],
        trigger=_RUN_TRIGGERS[row.trigger_kind],
        status=_RUN_STATUSES[row.status],
        created_at=at[row.created_at],
        started_at=None if started_at is None else at[started_at],
        finished_at=None if finished_at is None else at[finished_at],
        output=row.output,
        error=row.error,
        engine_id=row.engine_id,
        attempt=row.attempt,
        retry_at=None if retry_at is None else at[retry_at],
    )


# --- watchers ---------------------------------------------------------------------------------


def watcher_state_row(item: PendingCheck) -> WatcherStateRow:
    """The watcher's state after a check, as ``watcher_state`` holds it."""
    job_id, owner, state, check = item
    at = encode_instant(check.checked_at, "checked_at")
    return WatcherStateRow(
        job_id=job_id,
        owner=owner,
        state=json_text(state),
        checks=int(state.get("checks", check.check)),
        notifications=int(state.get("notifications", 0)),
        last_check_at=at,
        last_notified_at=at if check.notified else None,
        updated_at=at,
    )


def watcher_result_row(item: PendingCheck) -> WatcherResultRow:
    """A check as the ring ``watcher_results`` holds it (a large result clipped)."""
    job_id, owner, _, check = item
    return WatcherResultRow(
        job_id=job_id,
        check_number=check.check,
        owner=owner,
        run_id=check.run_id,
        checked_at=encode_instant(check.checked_at, "checked_at"),
        success=int(check.success),
        result=json_text(bounded_result(check.result)),
        notified=int(check.notified),
        reason=check.reason,
    )


def watcher_from_row(values: Sequence[Any]) -> WatcherRecord:
    """A watcher from a SELECT of ``WatcherStateRow``'s columns."""
    row = WatcherStateRow._make(values)
    return WatcherRecord(
        job_id=row.job_id,
        owner=row.owner,
        state=json.loads(row.state),
        checks=row.checks,
        notifications=row.notifications,
        last_check_at=decode_optional_instant(row.last_check_at),
        last_notified_at=decode_optional_instant(row.last_notified_at),
    )


def check_from_row(values: Sequence[Any]) -> CheckRecord:
    """A check from a SELECT of ``WatcherResultRow``'s columns."""
    row = WatcherResultRow._make(values)
    return CheckRecord(
        check=row.check_number,
        checked_at=decode_instant(row.checked_at),
        success=bool(row.success),
        result=json.loads(row.result),
        notified=bool(row.notified),
        reason=row.reason,
        run_id=row.run_id,
    )
