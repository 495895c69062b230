"""``run_parallel``: up to 50 tool calls at once, results in input order.

Every action starts at once; per-module concurrency limits (``{"http": 10, "shell": 4}``) make
the extra ones of a module wait for a free slot. One failure never cancels the others: each
result is that call's own ``{index, name, success, data | error}``. The total time is the
slowest action's (plus queueing behind a module's limit).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.tools.registry import ToolRegistry, ToolResult, ToolRunner, failed

DoneCallback = Callable[[int, ToolResult], Any]
"""``on_done(index, result)``: called as each action ends (a progress display)."""

MAX_ACTIONS = 50
DEFAULT_LIMITS: dict[str, int] = {"http": 10, "shell": 4}
ACTION_KEYS = ("name", "params")


@dataclass(frozen=True)
class Action:
    index: int
    name: str
    params: dict[str, Any]

    @property
    def module(self) -> str:
        return self.name.partition(".")[0]


def _check_action(index: int, item: object, registry: ToolRegistry) -> Action:
    where = f"actions[{index}]"
    if not isinstance(item, Mapping):
        raise ValidationError(where, f"must be an object {{name, params}}, got {item!r}")
    unknown = sorted(set(item) - set(ACTION_KEYS))
    if unknown:
        raise ValidationError(where, f"unknown keys {unknown}", accepted=ACTION_KEYS)
    if "name" not in item:
        raise ValidationError(f"{where}.name", "is required")
    name = registry.get(item["name"], f"{where}.name").name
    params = item.get("params")
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        raise ValidationError(f"{where}.params", f"must be an object, got {params!r}")
    return Action(index, name, dict(params))


def check_actions(actions: object, registry: ToolRegistry) -> list[Action]:
    """Every action checked before any starts: errors name the argument (``actions[3].name``)."""
    if isinstance(actions, (str, bytes, Mapping)) or not isinstance(actions, Sequence):
        raise ValidationError(
            "actions", f"must be a list of {{name, params}} objects, got {type(actions).__name__}"
        )
    if not 1 <= len(actions) <= MAX_ACTIONS:
        raise ValidationError(
            "actions", f"must hold 1 to {MAX_ACTIONS} actions, got {len(actions)}"
        )
    return [_check_action(index, item, registry) for index, item in enumerate(actions)]


def check_limits(limits: object, field_name: str = "limits") -> dict[str, int]:
    if not isinstance(limits, Mapping):
        raise ValidationError(field_name, f"must be an object {{module: n}}, got {limits!r}")
    checked: dict[str, int] = {}
    for module, limit in limits.items():
        if not isinstance(module, str) or not module.isidentifier():
            raise ValidationError(field_name, f"keys must be tool modules, got {module!r}")
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValidationError(
                f"{field_name}.{module}", f"must be an integer >= 1, got {limit!r}"
            )
        checked[module] = limit
    return checked


class ConcurrencyLimits:
    """Per-module limits, shared by every call on one event loop (semaphores are per loop)."""

    def __init__(self, limits: Mapping[str, int] | None = None) -> None:
        self._lock = threading.Lock()
        self._limits = check_limits(DEFAULT_LIMITS if limits is None else limits)
        self._semaphores: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[str, asyncio.Semaphore]
        ] = weakref.WeakKeyDictionary()

    @property
    def limits(self) -> dict[str, int]:
        with self._lock:
            return dict(self._limits)

    def set(self, limits: Mapping[str, int]) -> None:
        """Replace the limits; calls already waiting keep the old ones."""
        checked = check_limits(limits)
        with self._lock:
            self._limits = checked
            self._semaphores = weakref.WeakKeyDictionary()

    def slot(self, module: str) -> contextlib.AbstractAsyncContextManager[Any]:
        loop = asyncio.get_running_loop()
        with self._lock:
            limit = self._limits.get(module)
            if limit is None:
                return contextlib.nullcontext()
            per_loop = self._semaphores.setdefault(loop, {})
            if module not in per_loop:
                per_loop[module] = asyncio.Semaphore(limit)
            return per_loop[module]


async def run_actions(
    runner: ToolRunner,
    actions: Sequence[Action],
    limits: ConcurrencyLimits,
    *,
    allow_approval: bool = True,
    on_done: DoneCallback | None = None,
) -> list[ToolResult]:
    """Every action at once; ``on_done(index, result)`` as each ends (its failure is ignored:
    a display must not sink the call)."""

    async def one(action: Action) -> ToolResult:
        try:
            async with limits.slot(action.module):
                result = await runner.run_tool(
                    action.name, action.params, allow_approval=allow_approval
                )
        except Exception as error:  # a bug in one action must not sink the others
            result = failed(f"{action.name}: {type(error).__name__}: {error}")
        full: ToolResult = {"index": action.index, "name": action.name, **result}
        if on_done is not None:
            with contextlib.suppress(Exception):
                on_done(action.index, full)
        return full

    return list(await asyncio.gather(*(one(action) for action in actions)))


async def run_parallel(
    runner: ToolRunner,
    actions: object,
    limits: ConcurrencyLimits | Mapping[str, int] | None = None,
    *,
    allow_approval: bool = True,
    on_done: DoneCallback | None = None,
) -> list[ToolResult]:
    """Check ``actions`` (ValidationError naming the argument), run them all at once, and
    return one result per action, in input order."""
    checked = check_actions(actions, runner.registry)
    if not isinstance(limits, ConcurrencyLimits):
        limits = ConcurrencyLimits(limits)
    return await run_actions(
        runner, checked, limits, allow_approval=allow_approval, on_done=on_done
    )
