"""Typed, read-only records of the REST documents a client holds: a job, a watcher.

Each field the API documents is a typed property; the record is also a read-only mapping of the
document as answered (``job["status"]``, ``dict(job)``), fields this client does not know
included, and hashable by its id (a set of jobs, a dict keyed by
watcher). The kernel's ``Job`` and ``Watcher`` add their actions (``kernel/jobs/api.py``,
``kernel/watchers/watch.py``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Generic, TypeVar

from jupyter_recall.client.documents import (
    ActionDocument,
    AfterDocument,
    JobDocument,
    PoliciesDocument,
    TargetDocument,
    WatcherCheckDocument,
    WatcherDocument,
)

D = TypeVar("D", JobDocument, WatcherDocument)


class _Record(Mapping[str, Any], Generic[D]):
    """A document held read-only: a mapping of its fields, with no attribute to set."""

    __slots__ = ("_fields",)
    _fields: D
    """The document as answered: fields this client does not know are kept too."""
    noun = "record"
    """What the record is, in error messages."""

    def __init__(self, fields: Mapping[str, Any]) -> None:
        object.__setattr__(self, "_fields", dict(fields))

    def __getitem__(self, key: str) -> Any:
        if key not in self._fields:
            raise KeyError(key)
        # Any key: the fields this client does not know are the document's too.
        return self._fields.get(key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)

    @property
    def id(self) -> str:
        """The record's id on the server."""
        raise NotImplementedError

    def __hash__(self) -> int:
        # By the server's id, so that records can be members of sets and keys of dicts. It
        # agrees with the mapping's ==: records with the same fields have the same id.
        return hash((self.noun, self.id))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(
            f"{self.noun} fields are read-only; change a {self.noun} through the API"
        )

    def to_dict(self) -> D:
        """Its fields as the server answered them, a copy (JSON as the REST API writes it)."""
        return self._fields.copy()

    def _hold(self, fields: Mapping[str, Any]) -> None:
        """Hold a newer answer for the same record (its actions answer it)."""
        object.__setattr__(self, "_fields", dict(fields))


class JobRecord(_Record[JobDocument]):
    """A job as the REST API describes it (``id``, ``name``, ``kind``, ``status``, ``when``,
    ``description``, ``next_fire_at``, ``run_count``, ``last_status``, ...)."""

    __slots__ = ()
    noun = "job"

    def __init__(self, document: JobDocument | Mapping[str, Any]) -> None:
        super().__init__(document)

    @property
    def id(self) -> str:
        return str(self._fields["id"])

    @property
    def name(self) -> str:
        return str(self._fields.get("name") or "")

    @property
    def kind(self) -> str:
        return str(self._fields.get("kind") or "job")

    @property
    def owner(self) -> str | None:
        return self._text("owner")

    @property
    def when(self) -> str:
        return str(self._fields.get("when") or "")

    @property
    def canonical(self) -> str | None:
        return self._text("canonical")

    @property
    def schedule_kind(self) -> str | None:
        return self._text("schedule_kind")

    @property
    def description(self) -> str:
        return str(self._fields.get("description") or "")

    @property
    def tz(self) -> str | None:
        return self._text("tz")

    @property
    def status(self) -> str | None:
        return self._text("status")

    @property
    def pending(self) -> bool:
        return bool(self._fields.get("pending"))

    @property
    def action(self) -> ActionDocument | None:
        action: ActionDocument | None = self._fields.get("action")
        return action

    @property
    def target(self) -> TargetDocument | None:
        target: TargetDocument | None = self._fields.get("target")
        return target

    @property
    def session(self) -> str | None:
        return self._text("session")

    @property
    def policies(self) -> PoliciesDocument:
        policies: PoliciesDocument | None = self._fields.get("policies")
        return policies if policies is not None else PoliciesDocument()

    @property
    def options(self) -> Mapping[str, Any]:
        options: Mapping[str, Any] = self._fields.get("options") or {}
        return options

    @property
    def next_fire_at(self) -> str | None:
        return self._text("next_fire_at")

    @property
    def next_occurrence(self) -> str | None:
        return self._text("next_occurrence")

    @property
    def created_at(self) -> str | None:
        return self._text("created_at")

    @property
    def updated_at(self) -> str | None:
        return self._text("updated_at")

    @property
    def run_count(self) -> int:
        return int(self._fields.get("run_count") or 0)

    @property
    def failure_count(self) -> int:
        return int(self._fields.get("failure_count") or 0)

    @property
    def failure_streak(self) -> int:
        return int(self._fields.get("failure_streak") or 0)

    @property
    def paused_reason(self) -> str | None:
        return self._text("paused_reason")

    @property
    def after(self) -> AfterDocument | None:
        after: AfterDocument | None = self._fields.get("after")
        return after

    @property
    def last_run_at(self) -> str | None:
        return self._text("last_run_at")

    @property
    def last_run_id(self) -> str | None:
        return self._text("last_run_id")

    @property
    def last_status(self) -> str | None:
        return self._text("last_status")

    @property
    def last_error(self) -> str | None:
        return self._text("last_error")

    @property
    def plugin_owner(self) -> str | None:
        return self._text("plugin_owner")

    @property
    def key(self) -> str | None:
        return self._text("key")

    @property
    def warnings(self) -> tuple[str, ...]:
        return tuple(self._fields.get("warnings") or ())

    @property
    def allowed_actions(self) -> tuple[str, ...]:
        return tuple(self._fields.get("allowed_actions") or ())

    def _text(self, key: str) -> str | None:
        value = self._fields.get(key)
        return None if value is None else str(value)


class WatcherRecord(_Record[WatcherDocument]):
    """A watcher as the server describes it (``watcher_id``, ``tool_name``, ``status``,
    ``checks``, ``notifications``, ``last_result``, ...)."""

    __slots__ = ()
    noun = "watcher"

    def __init__(self, document: WatcherDocument | Mapping[str, Any]) -> None:
        super().__init__(document)

    @property
    def id(self) -> str:
        return str(self._fields["watcher_id"])

    @property
    def watcher_id(self) -> str:
        return self.id

    @property
    def tool_name(self) -> str:
        return str(self._fields.get("tool_name") or "")

    @property
    def label(self) -> str:
        return str(self._fields.get("label") or "")

    @property
    def interval(self) -> int:
        return int(self._fields.get("interval") or 0)

    @property
    def notify_when(self) -> str:
        return str(self._fields.get("notify_when") or "")

    @property
    def status(self) -> str:
        return str(self._fields.get("status") or "")

    @property
    def checks(self) -> int:
        return int(self._fields.get("checks") or 0)

    @property
    def notifications(self) -> int:
        return int(self._fields.get("notifications") or 0)

    @property
    def session(self) -> str | None:
        value = self._fields.get("session")
        return None if value is None else str(value)

    @property
    def last_result(self) -> WatcherCheckDocument | None:
        result: WatcherCheckDocument | None = self._fields.get("last_result")
        return result
