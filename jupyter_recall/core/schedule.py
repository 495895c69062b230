"""What a parsed time expression is: :class:`ScheduleSpec`, its fire times, its words and its
JSON form (``to_dict`` / ``from_dict``, as the store keeps it). ``core.when`` builds specs.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Literal, TypedDict

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.triggers.after import AfterTrigger
from jupyter_recall.core.triggers.base import Trigger, TriggerJSON
from jupyter_recall.core.triggers.cron import CronTrigger
from jupyter_recall.core.triggers.interval import IntervalTrigger
from jupyter_recall.core.triggers.once import OnceTrigger
from jupyter_recall.core.triggers.weeks import WeeksTrigger
from jupyter_recall.core.tz import normalize_tz, resolve_tz
from jupyter_recall.core.when_words import DAY_NAMES, describe_days

UTC = timezone.utc
SPEC_VERSION = 1

ScheduleKind = Literal["once", "interval", "cron", "immediate", "after"]


class ScheduleJSON(TypedDict):
    """What ``ScheduleSpec.to_dict`` writes (a job's stored ``schedule``)."""

    version: int
    kind: ScheduleKind
    canonical: str
    tz: str
    anchor: str | None
    trigger: TriggerJSON


@dataclass(frozen=True, slots=True)
class ScheduleSpec:
    """A parsed schedule: when something fires, as pure functions of explicit instants.

    ``anchor`` is the parse-time ``now`` for interval and cron specs (interval occurrences are
    ``anchor + k * interval``; a cron's first fire time is its first occurrence after the
    anchor); once and immediate specs carry their instant in the trigger and have no anchor.
    """

    kind: ScheduleKind
    canonical: str
    tz: str
    trigger: Trigger
    anchor: datetime | None = None

    @property
    def is_recurring(self) -> bool:
        return self.kind in ("interval", "cron", "after")

    @property
    def after(self) -> AfterTrigger | None:
        """The dependency of a job fired by another job's runs (kind ``after``), else None."""
        return self.trigger if isinstance(self.trigger, AfterTrigger) else None

    def first_fire_time(self) -> datetime | None:
        if isinstance(self.trigger, OnceTrigger):
            return self.trigger.at
        if isinstance(self.trigger, AfterTrigger):
            return None
        if self.anchor is None:  # pragma: no cover - construction guarantees an anchor
            raise ValueError(f"{self.kind} schedule without an anchor")
        return self.trigger.next_after(self.anchor)

    def next_after(self, after: datetime) -> datetime | None:
        """The earliest fire time strictly after ``after`` (aware UTC), or None if none remain.

        A recurring schedule has no occurrence at or before its anchor (the parse-time ``now``).
        """
        _aware("after", after)
        if self.anchor is not None and after < self.anchor:
            after = self.anchor
        return self.trigger.next_after(after)

    def next_fire_times(self, n: int, after: datetime | None = None) -> list[datetime]:
        """Up to ``n`` fire times: from the first fire time, or strictly after ``after``."""
        times: list[datetime] = []
        current = self.first_fire_time() if after is None else self.next_after(after)
        while current is not None and len(times) < n:
            times.append(current)
            current = self.trigger.next_after(current)
        return times

    def describe(self) -> str:
        """Human words for UI cards, e.g. ``every day at 09:00 (Europe/Paris)``."""
        trigger = self.trigger
        if self.kind == "immediate":
            return "immediately"
        if type(trigger) is OnceTrigger:  # most jobs: asked before the other triggers
            return self._describe_once(trigger.at)
        if isinstance(trigger, IntervalTrigger):
            return f"every {_describe_seconds(trigger.seconds)}"
        if isinstance(trigger, CronTrigger):
            return f"{_describe_cron(trigger.expression)} ({self.tz})"
        if isinstance(trigger, WeeksTrigger):
            return f"{_describe_weeks(trigger)} ({self.tz})"
        if isinstance(trigger, AfterTrigger):
            return trigger.after.text
        # Another implementation of the Trigger protocol: described by its first fire time.
        fire = self.first_fire_time()
        assert fire is not None
        return self._describe_once(fire)

    def _describe_once(self, fire: datetime) -> str:
        local = fire.astimezone(resolve_tz(self.tz))
        stamp = local.strftime("%Y-%m-%d %H:%M:%S" if local.second else "%Y-%m-%d %H:%M")
        return f"once at {stamp} ({self.tz})"

    def to_dict(self) -> ScheduleJSON:
        return {
            "version": SPEC_VERSION,
            "kind": self.kind,
            "canonical": self.canonical,
            "tz": self.tz,
            "anchor": None if self.anchor is None else self.anchor.isoformat(),
            "trigger": self.trigger.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: ScheduleJSON) -> ScheduleSpec:
        """From a stored schedule; a malformed one is refused naming ``schedule``."""
        try:
            return _spec_from_dict(data)
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, ValidationError):
                raise
            raise ValidationError("schedule", f"not a valid schedule payload ({exc!r})") from None


def _spec_from_dict(data: ScheduleJSON) -> ScheduleSpec:
    version = data.get("version")
    if version != SPEC_VERSION:
        raise ValidationError(
            "schedule.version", f"unsupported version {version!r}", accepted=[str(SPEC_VERSION)]
        )
    kind = data["kind"]
    if kind not in _TRIGGER_TYPES_OF_KIND:
        raise ValidationError("schedule.kind", f"unknown kind {kind!r}", accepted=_KINDS)
    trigger_data = data["trigger"]
    expected_types = _TRIGGER_TYPES_OF_KIND[kind]
    if trigger_data["type"] not in expected_types:
        raise ValidationError(
            "schedule.trigger.type",
            f"a {kind} schedule has a {' or '.join(map(repr, expected_types))} trigger, "
            f"got {trigger_data['type']!r}",
            accepted=expected_types,
        )
    anchor_text = data.get("anchor")
    anchor = None if anchor_text is None else datetime.fromisoformat(anchor_text).astimezone(UTC)
    if (anchor is None) == (kind in ("interval", "cron")):
        raise ValidationError(
            "schedule.anchor", "an anchor goes with interval and cron schedules only"
        )
    return ScheduleSpec(
        kind=kind,
        canonical=str(data["canonical"]),
        tz=normalize_tz(data["tz"]),
        trigger=_trigger_from_dict(trigger_data),
        anchor=anchor,
    )


# A "cron" schedule is any wall-clock calendar: a cron expression, or every N weeks on some days.
_TRIGGER_TYPES_OF_KIND: dict[str, tuple[str, ...]] = {
    "once": ("once",),
    "immediate": ("once",),
    "interval": ("interval",),
    "cron": ("cron", "weeks"),
    "after": ("after",),
}
_KINDS: tuple[ScheduleKind, ...] = ("once", "interval", "cron", "immediate", "after")


def _trigger_from_dict(data: TriggerJSON) -> Trigger:
    if data["type"] == "once":
        return OnceTrigger.from_dict(data)
    if data["type"] == "interval":
        return IntervalTrigger.from_dict(data)
    if data["type"] == "cron":
        return CronTrigger.from_dict(data)
    if data["type"] == "weeks":
        return WeeksTrigger.from_dict(data)
    return AfterTrigger.from_dict(data)


def _aware(name: str, value: datetime) -> datetime:
    if not isinstance(value, datetime) or value.tzinfo is None:
        raise ValidationError(name, f"must be a timezone-aware datetime, got {value!r}")
    return value


def _describe_seconds(seconds: int) -> str:
    parts = []
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60), ("second", 1)):
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count} {unit}{'s' if count > 1 else ''}")
    if len(parts) == 1 and parts[0].startswith("1 "):
        return parts[0][2:]
    return " ".join(parts)


def _describe_cron(expression: str) -> str:
    """Words for the expressions the phrases produce; ``cron …`` for any other."""
    minute, hour, dom, month, dow = expression.split()
    if not minute.isdigit() or month != "*":
        return f"cron {expression}"
    if hour == "*" and dom == "*" and dow == "*":
        return f"every hour at minute {int(minute):02d}"
    if not hour.isdigit():
        return f"cron {expression}"
    days = _describe_days_of(dom, dow)
    return f"cron {expression}" if days is None else f"{days} at {int(hour):02d}:{int(minute):02d}"


_NTH_NAMES = {"1": "first", "2": "second", "3": "third", "4": "fourth", "5": "fifth"}


def _describe_days_of(dom: str, dow: str) -> str | None:
    if dow == "*":
        if dom == "*":
            return "every day"
        if dom == "L":
            return "on the last day of every month"
        return f"on day {int(dom)} of every month" if dom.isdigit() else None
    if dom != "*":
        return None
    if dow == "1-5":
        return "every weekday"
    if dow == "0,6":
        return "every Saturday and Sunday"
    day, sep, nth = dow.partition("#")
    if day.endswith("L") and day[:-1].isdigit():
        return f"on the last {DAY_NAMES[int(day[:-1]) % 7].title()} of every month"
    if sep and day.isdigit() and nth in _NTH_NAMES:
        return f"on the {_NTH_NAMES[nth]} {DAY_NAMES[int(day) % 7].title()} of every month"
    if all(part.isdigit() for part in dow.split(",")):
        return f"every {_titled(describe_days(int(part) % 7 for part in dow.split(',')))}"
    return None


def _titled(days: str) -> str:
    """``Monday, Wednesday and Friday`` for ``monday, wednesday and friday``."""
    return " ".join(word if word == "and" else word.title() for word in days.split())


def _describe_weeks(trigger: WeeksTrigger) -> str:
    days = _titled(describe_days((day + 1) % 7 for day in trigger.days))
    return f"every {trigger.weeks} weeks on {days} at {trigger.hour:02d}:{trigger.minute:02d}"
