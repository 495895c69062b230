"""Escalation strategies of watchers: whether a check's result is worth a notification.

Pure: ``decide(config, state, result)`` takes the strategy's configuration, what the watcher
remembers from its previous checks and the new result, and returns whether to notify, why, and
the state to remember. Nothing here reads the clock or does I/O; the server's watcher runtime
persists the state between checks (and across restarts).

Strategies:

- ``on_change`` (default): the first check sets the baseline and notifies; later checks notify
  when the result differs from the previous one.
- ``on_error``: a check that fails after one that did not (or as the first check), and the
  first successful check after failures (recovery). Silent while all is well, and while a
  failure goes on.
- ``on_threshold``: ``notify_config.expression`` (a safe expression, ``core/expr.py``) turns
  true. It notifies on the check where it becomes true, not again while it stays true.
- ``summary``: every ``notify_config.batch_size`` checks (default 10), with the whole batch.
- ``always``: every check.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, NotRequired, TypedDict, cast

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.expr import Expression, parse_expression

DEFAULT_BATCH_SIZE = 10
MAX_BATCH_SIZE = 100
RESULT_CLIP = 2000
"""Characters of a result shown in a notification message."""
BATCH_ITEM_CLIP = 500
"""Characters of each result kept in a summary batch (it is persisted between checks)."""


class NotifyWhen(str, Enum):
    ON_CHANGE = "on_change"
    ON_ERROR = "on_error"
    ON_THRESHOLD = "on_threshold"
    SUMMARY = "summary"
    ALWAYS = "always"

    @classmethod
    def parse(cls, value: object, field_name: str = "notify_when") -> NotifyWhen:
        try:
            return cls(value)
        except ValueError:
            raise ValidationError(
                field_name, f"unknown strategy {value!r}", accepted=[m.value for m in cls]
            ) from None


STRATEGIES = tuple(member.value for member in NotifyWhen)
_CONFIG_KEYS: dict[NotifyWhen, tuple[str, ...]] = {
    NotifyWhen.ON_CHANGE: (),
    NotifyWhen.ON_ERROR: (),
    NotifyWhen.ON_THRESHOLD: ("expression",),
    NotifyWhen.SUMMARY: ("batch_size",),
    NotifyWhen.ALWAYS: (),
}


class NotifyConfigJSON(TypedDict, total=False):
    """A strategy's settings as given and given back (``notify_config``)."""

    expression: str
    batch_size: int


def notify_config_of(config: Mapping[str, Any]) -> NotifyConfigJSON:
    """A client's ``notify_config`` as sent: the server checks it (``parse_escalation``), so
    that its errors name the field the same from every client."""
    return cast(NotifyConfigJSON, dict(config))


@dataclass(frozen=True, slots=True)
class EscalationConfig:
    notify_when: NotifyWhen = NotifyWhen.ON_CHANGE
    expression: Expression | None = None
    batch_size: int = DEFAULT_BATCH_SIZE

    def notify_config(self) -> NotifyConfigJSON:
        """The configuration as given back to users (``notify_config``)."""
        if self.notify_when is NotifyWhen.ON_THRESHOLD and self.expression is not None:
            return {"expression": self.expression.text}
        if self.notify_when is NotifyWhen.SUMMARY:
            return {"batch_size": self.batch_size}
        return {}


def _batch_size(value: object) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError("notify_config.batch_size", f"must be an integer, got {value!r}")
    if not 1 <= value <= MAX_BATCH_SIZE:
        raise ValidationError(
            "notify_config.batch_size", f"must be between 1 and {MAX_BATCH_SIZE}, got {value}"
        )
    return value


def parse_escalation(notify_when: object, notify_config: object = None) -> EscalationConfig:
    """Validate a strategy and its configuration; errors name the field and what is accepted."""
    strategy = NotifyWhen.parse(notify_when if notify_when is not None else "on_change")
    config = {} if notify_config is None else notify_config
    if not isinstance(config, Mapping):
        raise ValidationError(
            "notify_config", f"must be a JSON object, got {type(config).__name__}"
        )
    allowed = _CONFIG_KEYS[strategy]
    unknown = sorted(set(config) - set(allowed))
    if unknown:
        raise ValidationError(
            f"notify_config.{unknown[0]}",
            f"not a setting of the {strategy.value!r} strategy",
            accepted=allowed,
        )
    if strategy is NotifyWhen.ON_THRESHOLD:
        if "expression" not in config:
            raise ValidationError(
                "notify_config.expression",
                "on_threshold needs a condition such as 'result.status_code != 200'",
            )
        expression = parse_expression(config["expression"], field="notify_config.expression")
        return EscalationConfig(strategy, expression=expression)
    if strategy is NotifyWhen.SUMMARY:
        size = _batch_size(config.get("batch_size", DEFAULT_BATCH_SIZE))
        return EscalationConfig(strategy, batch_size=size)
    return EscalationConfig(strategy)


# --- results ------------------------------------------------------------------------------------


_CANONICAL = json.JSONEncoder(sort_keys=True, default=str, ensure_ascii=False)
"""Shared: ``json.dumps`` with these options builds an encoder at every call, which costs about
as much as encoding a small result (every check of a watcher encodes one)."""


def to_json_text(value: Any) -> str:
    """Canonical JSON (sorted keys); values JSON cannot hold are shown as their ``str``."""
    return _CANONICAL.encode(value)


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class CheckResultJSON(TypedDict):
    """A check's result as stored and answered: ``data`` when it succeeded (and with an error
    when the tool gave some), ``error`` when it failed."""

    success: bool
    data: NotRequired[Any]
    error: NotRequired[str | None]
    clipped: NotRequired[bool]
    """Set when the store kept the result's JSON text clipped (``store/watchers.py``)."""


class BatchItem(TypedDict):
    """One check gathered towards a summary: its result, or its error, clipped."""

    check: int
    success: bool
    result: NotRequired[Any]
    error: NotRequired[Any]


class WatchStateJSON(TypedDict):
    checks: int
    notifications: int
    fingerprint: str | None
    failing: bool
    threshold_met: bool
    batch: list[BatchItem]


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One check: the tool's ``{"success": true, "data": ...}`` or ``{"success": false,
    "error": "..."}``."""

    success: bool
    data: Any = None
    error: str | None = None

    @classmethod
    def from_tool(cls, envelope: Any) -> CheckResult:
        """From a tool's answer; anything not shaped like one is a failed check saying so."""
        if not isinstance(envelope, Mapping) or not isinstance(envelope.get("success"), bool):
            shown = clip(to_json_text(envelope), 200)
            return cls(False, error=f"the tool answered {shown}, not {{success, data|error}}")
        if envelope["success"]:
            return cls(True, data=envelope.get("data"))
        # A failure may carry data too (an HTTP error's response): conditions can read it.
        error = str(envelope.get("error") or "the tool failed without a message")
        return cls(False, data=envelope.get("data"), error=error)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CheckResult:
        return cls(bool(data.get("success")), data.get("data"), data.get("error"))

    def to_json(self) -> CheckResultJSON:
        if self.success:
            return {"success": True, "data": self.data}
        if self.data is None:
            return {"success": False, "error": self.error}
        return {"success": False, "error": self.error, "data": self.data}

    def view(self) -> dict[str, Any]:
        """What ``result`` means in a threshold expression: the data's own keys, then
        ``success``, ``error`` and ``data`` (the data itself) where the data has none such."""
        envelope = {"success": self.success, "error": self.error, "data": self.data}
        if isinstance(self.data, Mapping):
            return {**envelope, **{str(k): v for k, v in self.data.items()}}
        return envelope

    def fingerprint(self) -> str:
        return hashlib.sha256(to_json_text(self.to_json()).encode()).hexdigest()[:32]

    def shown(self, limit: int = RESULT_CLIP) -> str:
        if self.success:
            return "Result: " + clip(to_json_text(self.data), limit)
        return "Error: " + clip(self.error or "", limit)


# --- state and decisions -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WatchState:
    """What a watcher remembers between checks (persisted as ``to_dict()``)."""

    checks: int = 0
    notifications: int = 0
    fingerprint: str | None = None
    """Of the previous result (on_change)."""
    failing: bool = False
    """Whether the previous check failed (on_error)."""
    threshold_met: bool = False
    """Whether the expression held at the previous check (on_threshold)."""
    batch: tuple[BatchItem, ...] = field(default=())
    """Results gathered towards the next summary."""

    def to_dict(self) -> WatchStateJSON:
        return {
            "checks": self.checks,
            "notifications": self.notifications,
            "fingerprint": self.fingerprint,
            "failing": self.failing,
            "threshold_met": self.threshold_met,
            "batch": list(self.batch),
        }

    @classmethod
    def from_dict(cls, data: WatchStateJSON) -> WatchState:
        return cls(
            checks=int(data.get("checks", 0)),
            notifications=int(data.get("notifications", 0)),
            fingerprint=data.get("fingerprint"),
            failing=bool(data.get("failing", False)),
            threshold_met=bool(data.get("threshold_met", False)),
            batch=tuple(data.get("batch", ())),
        )


@dataclass(frozen=True, slots=True)
class Decision:
    notify: bool
    reason: str
    """Why: baseline, changed, unchanged, error, still failing, recovered, ok, threshold met,
    threshold still met, below threshold, summary, batching, always."""
    state: WatchState
    batch: tuple[BatchItem, ...] = ()
    """For a summary: the checks it covers."""


def _batch_item(check: int, result: CheckResult) -> BatchItem:
    shown = result.data if result.success else result.error
    text = to_json_text(shown)
    value = shown if len(text) <= BATCH_ITEM_CLIP else clip(text, BATCH_ITEM_CLIP)
    if result.success:
        return {"check": check, "success": True, "result": value}
    return {"check": check, "success": False, "error": value}


def _on_change(state: WatchState, fingerprint: str) -> tuple[bool, str]:
    if state.fingerprint is None:
        return True, "baseline"
    if fingerprint != state.fingerprint:
        return True, "changed"
    return False, "unchanged"


def _on_error(state: WatchState, result: CheckResult) -> tuple[bool, str]:
    if not result.success:
        return (False, "still failing") if state.failing else (True, "error")
    return (True, "recovered") if state.failing else (False, "ok")


def _on_threshold(state: WatchState, met: bool) -> tuple[bool, str]:
    if not met:
        return False, "below threshold"
    return (False, "threshold still met") if state.threshold_met else (True, "threshold met")


def decide(config: EscalationConfig, state: WatchState, result: CheckResult) -> Decision:
    """Whether this check notifies, why, and the state to remember for the next one."""
    check = state.checks + 1
    fingerprint = result.fingerprint()
    met = config.expression.holds(result.view()) if config.expression is not None else False
    batch = state.batch
    summary: tuple[BatchItem, ...] = ()
    strategy = config.notify_when
    if strategy is NotifyWhen.ON_CHANGE:
        notify, reason = _on_change(state, fingerprint)
    elif strategy is NotifyWhen.ON_ERROR:
        notify, reason = _on_error(state, result)
    elif strategy is NotifyWhen.ON_THRESHOLD:
        notify, reason = _on_threshold(state, met)
    elif strategy is NotifyWhen.SUMMARY:
        batch = (*batch, _batch_item(check, result))[-config.batch_size :]
        notify = len(batch) >= config.batch_size
        reason = "summary" if notify else "batching"
        summary, batch = (batch, ()) if notify else ((), batch)
    else:
        notify, reason = True, "always"
    # Built whole (every field changes or is carried): ``replace`` costs several times more.
    new_state = WatchState(
        checks=check,
        notifications=state.notifications + (1 if notify else 0),
        fingerprint=fingerprint,
        failing=not result.success,
        threshold_met=met,
        batch=batch,
    )
    return Decision(notify, reason, new_state, summary)


# --- messages -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WatcherInfo:
    """What a notification says about the watcher that sent it."""

    id: str
    label: str
    tool: str
    interval: float


def _interval_text(seconds: float) -> str:
    return f"{int(seconds)}s" if float(seconds).is_integer() else f"{seconds}s"


def notification_text(
    watcher: WatcherInfo,
    config: EscalationConfig,
    decision: Decision,
    result: CheckResult,
) -> tuple[str, str]:
    """The title and message of a watcher notification."""
    state = decision.state
    title = f"Watcher {watcher.label or watcher.tool}: {decision.reason}"
    lines = [
        f'[WATCHER UPDATE] watcher_id={watcher.id}, label="{watcher.label}", tool={watcher.tool}',
        f"Check #{state.checks} (interval: {_interval_text(watcher.interval)}, "
        f"{state.notifications} notification(s) so far, strategy: "
        f"{config.notify_when.value}): {decision.reason}",
    ]
    if config.expression is not None:
        lines.append(f"Condition: {config.expression}")
    if decision.batch:
        batch = clip(to_json_text(list(decision.batch)), RESULT_CLIP * 4)
        lines.append(f"Summary ({len(decision.batch)} checks): {batch}")
    else:
        lines.append(result.shown())
    return title, "\n".join(lines)
