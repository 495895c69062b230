"""run_parallel: order, isolation of failures, per-module limits, bounds and bad input."""

from __future__ import annotations

import asyncio
import time

import pytest

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.tools.parallel import ConcurrencyLimits, run_parallel


@pytest.fixture
def timed(registry):
    """``timed.sleep(seconds, label)``: records (label, start, end) on the shared list."""
    spans: list[tuple[str, float, float]] = []

    @registry.register("timed.sleep")
    async def sleep(seconds: float, label: str = "") -> str:
        start = time.monotonic()
        await asyncio.sleep(seconds)
        spans.append((label, start, time.monotonic()))
        return label

    return spans


def _max_overlap(spans: list[tuple[str, float, float]]) -> int:
    events = sorted([(start, 1) for _, start, _ in spans] + [(end, -1) for _, _, end in spans])
    running = peak = 0
    for _, step in events:
        running += step
        peak = max(peak, running)
    return peak


async def test_results_come_in_input_order_and_all_start_at_once(runner, timed):
    delays = [0.3, 0.05, 0.2, 0.1]
    actions = [
        {"name": "timed.sleep", "params": {"seconds": d, "label": f"a{i}"}}
        for i, d in enumerate(delays)
    ]
    started = time.monotonic()
    results = await run_parallel(runner, actions)
    elapsed = time.monotonic() - started
    assert [r["index"] for r in results] == [0, 1, 2, 3]
    assert [r["data"] for r in results] == ["a0", "a1", "a2", "a3"]
    assert all(r["name"] == "timed.sleep" and r["success"] for r in results)
    # The slowest one's time, not the sum (0.65 s).
    assert elapsed < 0.45
    assert _max_overlap(timed) == 4


async def test_one_failure_does_not_cancel_the_others(runner, registry, timed):
    @registry.register("bad.boom")
    def boom() -> None:
        raise ValueError("nope")

    actions = [
        {"name": "timed.sleep", "params": {"seconds": 0.1, "label": "before"}},
        {"name": "bad.boom"},
        {"name": "shell.run", "params": {"command": "exit 2"}},
        {"name": "filesystem.read", "params": {"path": "../x"}},
        {"name": "timed.sleep", "params": {"seconds": 0.2, "label": "after"}},
    ]
    results = await run_parallel(runner, actions)
    assert [r["success"] for r in results] == [True, False, False, False, True]
    assert results[1] == {
        "index": 1,
        "name": "bad.boom",
        "success": False,
        "error": "bad.boom raised ValueError: nope",
    }
    assert results[2]["error"] == "shell.run: exit code 2"
    assert results[4]["data"] == "after"


async def test_per_module_limits_are_respected(runner, registry, timed):
    @registry.register("other.sleep")
    async def other(seconds: float) -> None:
        await asyncio.sleep(seconds)

    actions = [
        {"name": "timed.sleep", "params": {"seconds": 0.1, "label": str(i)}} for i in range(6)
    ] + [{"name": "other.sleep", "params": {"seconds": 0.1}} for _ in range(6)]
    started = time.monotonic()
    results = await run_parallel(runner, actions, ConcurrencyLimits({"timed": 2}))
    elapsed = time.monotonic() - started
    assert all(r["success"] for r in results)
    assert _max_overlap(timed) == 2
    # Three waves of two for `timed`; `other` is not limited and ran alongside.
    assert 0.28 < elapsed < 0.6


async def test_default_limit_of_shell_is_four(runner, root):
    command = "date +%s.%N > start.$$; sleep 0.3; date +%s.%N > end.$$"
    actions = [{"name": "shell.run", "params": {"command": command}} for _ in range(8)]
    results = await run_parallel(runner, actions)
    assert all(r["success"] for r in results), results
    spans = []
    for start in root.glob("start.*"):
        pid = start.suffix
        spans.append(("", float(start.read_text()), float((root / f"end{pid}").read_text())))
    assert len(spans) == 8
    assert _max_overlap(spans) == 4


@pytest.mark.parametrize(
    ("actions", "field", "message"),
    [
        ([], "actions", "must hold 1 to 50 actions, got 0"),
        ([{"name": "shell.run"}] * 51, "actions", "must hold 1 to 50 actions, got 51"),
        ("shell.run", "actions", "must be a list of {name, params} objects, got str"),
        ({"name": "shell.run"}, "actions", "must be a list of {name, params} objects, got dict"),
        ([{"name": "shell.run"}, "ls"], "actions[1]", "must be an object {name, params}"),
        ([{"params": {}}], "actions[0].name", "is required"),
        ([{"name": "nope.x"}], "actions[0].name", "unknown tool 'nope.x'"),
        ([{"name": "shell.run", "params": [1]}], "actions[0].params", "must be an object"),
        ([{"name": "shell.run", "args": {}}], "actions[0]", "unknown keys ['args']"),
    ],
)
async def test_bad_input_names_the_argument(runner, actions, field, message):
    with pytest.raises(ValidationError) as info:
        await run_parallel(runner, actions)
    assert info.value.field == field
    assert message in str(info.value)


async def test_fifty_is_accepted(runner, timed):
    actions = [{"name": "timed.sleep", "params": {"seconds": 0.05}} for _ in range(50)]
    results = await run_parallel(runner, actions)
    assert len(results) == 50
    assert _max_overlap(timed) == 50


def test_limits_are_checked():
    with pytest.raises(ValidationError, match=r"limits\.http: must be an integer >= 1, got 0"):
        ConcurrencyLimits({"http": 0})
    with pytest.raises(ValidationError, match="keys must be tool modules"):
        ConcurrencyLimits({"a.b": 1})


async def test_on_done_is_called_as_each_action_ends(runner, registry, timed):
    @registry.register("bad.boom")
    def boom() -> None:
        raise ValueError("nope")

    seen: list[tuple[int, bool, float]] = []
    actions = [
        {"name": "timed.sleep", "params": {"seconds": 0.2, "label": "slow"}},
        {"name": "bad.boom"},
        {"name": "timed.sleep", "params": {"seconds": 0.05, "label": "quick"}},
    ]
    results = await run_parallel(
        runner,
        actions,
        on_done=lambda index, result: seen.append((index, result["success"], time.monotonic())),
    )
    # In the order they ended, each with its own full result, before the call returns.
    assert [(index, success) for index, success, _ in seen] == [(1, False), (2, True), (0, True)]
    assert [r["success"] for r in results] == [True, False, True]


async def test_a_failing_on_done_does_not_sink_the_call(runner, timed):
    def broken(index: int, result: object) -> None:
        raise RuntimeError("display gone")

    actions = [{"name": "timed.sleep", "params": {"seconds": 0.01, "label": "x"}}]
    results = await run_parallel(runner, actions, on_done=broken)
    assert results == [{"index": 0, "name": "timed.sleep", "success": True, "data": "x"}]
