"""Primitives benchmark: ``run_parallel`` wall time and its overhead over ``asyncio.gather``.

1. ``--actions`` (50) calls of a registered async tool that sleeps ``--seconds`` (0.5 s), through
   ``jupyter_recall.run_parallel`` exactly as a cell calls it (private loop, policy check,
   per-module limits, result shaping). Target: the slowest action's time, at most 0.55 s.
2. Per-call overhead: the same coroutines with ``asyncio.gather`` and with
   ``run_parallel_async``, side by side on one loop, with a tool that does not sleep (pure
   overhead) and with the sleeping one; medians of ``--repeats`` runs.
3. CPU used by ``--watchers`` (1,000) watchers at a 5 s interval over ``--watch-seconds`` (60),
   measured by ``bench/watchers.py`` (in this process, after the two above; see that file).
   Target: under 10 % of one core. ``--watchers 0`` leaves it out.

    python bench/primitives.py --json

Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SLEEP_TOOL = "bench.sleep"
NOOP_TOOL = "bench.noop"


def _register(seconds: float) -> None:
    import jupyter_recall

    @jupyter_recall.tool(SLEEP_TOOL)
    async def sleep(seconds: float = seconds) -> float:
        await asyncio.sleep(seconds)
        return seconds

    @jupyter_recall.tool(NOOP_TOOL)
    async def noop() -> None:
        return None


def _actions(tool: str, count: int) -> list[dict[str, Any]]:
    return [{"name": tool, "params": {}} for _ in range(count)]


def parallel_wall(count: int, seconds: float, repeats: int) -> dict[str, Any]:
    """Wall time of run_parallel called from synchronous code (a cell)."""
    import jupyter_recall

    jupyter_recall.run_parallel(_actions(NOOP_TOOL, 1))  # warm: loop thread, registry, policies
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        results = jupyter_recall.run_parallel(_actions(SLEEP_TOOL, count))
        times.append(time.perf_counter() - started)
        assert all(result["success"] for result in results), results
    return {
        "actions": count,
        "action_seconds": seconds,
        "median_s": round(statistics.median(times), 4),
        "max_s": round(max(times), 4),
        "target_s": 0.55,
        "within_target": statistics.median(times) <= 0.55,
    }


async def _side_by_side(count: int, seconds: float, repeats: int) -> dict[str, Any]:
    import jupyter_recall

    async def plain_sleep() -> float:
        await asyncio.sleep(seconds)
        return seconds

    async def plain_noop() -> None:
        return None

    figures: dict[str, Any] = {}
    for label, plain, tool in (("noop", plain_noop, NOOP_TOOL), ("sleep", plain_sleep, SLEEP_TOOL)):
        gather_times, parallel_times = [], []
        for _ in range(repeats):
            started = time.perf_counter()
            await asyncio.gather(*(plain() for _ in range(count)))
            gather_times.append(time.perf_counter() - started)
            started = time.perf_counter()
            await jupyter_recall.run_parallel_async(_actions(tool, count))
            parallel_times.append(time.perf_counter() - started)
        gather_s, parallel_s = statistics.median(gather_times), statistics.median(parallel_times)
        figures[label] = {
            "gather_median_s": round(gather_s, 6),
            "run_parallel_median_s": round(parallel_s, 6),
            "overhead_per_call_us": round((parallel_s - gather_s) / count * 1e6, 1),
        }
    return figures


def overhead(count: int, seconds: float, repeats: int) -> dict[str, Any]:
    return asyncio.run(_side_by_side(count, seconds, repeats))


def watcher_cpu(watchers: int, seconds: float) -> dict[str, Any]:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from watchers import measure  # bench/watchers.py, beside this file

    with tempfile.TemporaryDirectory(prefix="watchers-") as tmp:
        return asyncio.run(measure(watchers, 5, seconds, Path(tmp)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--actions", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=0.5)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--watchers", type=int, default=1000, help="0: no watcher figure")
    parser.add_argument("--watch-seconds", type=float, default=60.0)
    parser.add_argument("--json", action="store_true", help="one JSON line on stdout")
    args = parser.parse_args()
    # No server to ask for policies: the kernel's own apply (none here), without discovery.
    os.environ.setdefault("JUPYTER_RECALL_URL", "http://127.0.0.1:9/")
    _register(args.seconds)
    result = {
        "run_parallel": parallel_wall(args.actions, args.seconds, args.repeats),
        "overhead_vs_gather": overhead(args.actions, args.seconds, args.repeats),
    }
    if args.watchers > 0:
        result["watchers"] = watcher_cpu(args.watchers, args.watch_seconds)
    print(json.dumps(result) if args.json else json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
