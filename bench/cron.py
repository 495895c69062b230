"""Cron: speed of next-100 against cronsim and croniter, and agreement with the reference.

Run from the repository root with the project's Python (cronsim and, for the comparison with the
croniter-based implementation of earlier versions, croniter must be installed):

    python bench/cron.py [--runs 7] [--compare 2400] [--json]

Speed: for each expression of a fixed set, the next 100 fire times after a fixed instant in a
DST zone (Europe/Paris), as the scheduler asks them (one ``next_after`` at a time, from the
parsed expression: parsing is cached in every implementation, so it is left out of the loop);
the median of ``--runs`` runs, per expression, and the ratios to jupyter_recall.

Agreement: ``--compare`` random expressions (each in one of four zones, see
``tests/core/cron_reference.py``), next 8 fire times against cronsim's calendar and the documented
DST rules, for jupyter_recall and for the croniter-based trigger it replaced.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cronsim import CronSim

from jupyter_recall.core.cron import parse_cron
from jupyter_recall.core.triggers.cron import next_cron_after
from jupyter_recall.core.triggers.wallclock import instant_to_wall, wall_to_instant
from tests.core.cron_reference import cases, cronsim_refuses, mismatches

UTC = timezone.utc
ZONE = "Europe/Paris"
START = datetime(2026, 3, 20, 12, 0, tzinfo=UTC)  # the next 100 cross a DST change
EXPRESSIONS = (
    "*/15 9-17 * * 1-5",
    "0 9 * * *",
    "30 2 * * *",
    "0 0 1 * *",
    "0 9 * * 1#1",
    "0 0 29 2 *",
    "*/5 * * * *",
    "0 12 1-7 * 1",
)


def recall_next_100(expression: str) -> list[datetime]:
    cron, zone = parse_cron(expression), ZoneInfo(ZONE)
    times, current = [], START
    for _ in range(100):
        found = next_cron_after(cron, zone, current)
        if found is None:
            break
        times.append(found)
        current = found
    return times


def cronsim_next_100(expression: str) -> list[datetime]:
    walker = CronSim(expression, START.astimezone(ZoneInfo(ZONE)))
    return [next(walker) for _ in range(100)]


def croniter_next_100(expression: str) -> list[datetime]:
    from croniter import croniter

    walker = croniter(expression, START.astimezone(ZoneInfo(ZONE)), ret_type=datetime)
    return [walker.get_next(datetime) for _ in range(100)]


def croniter_trigger(expression: str, after: datetime, zone_name: str, n: int) -> list[datetime]:
    """The trigger of earlier versions: croniter walks wall times, mapped by the same rules."""
    from croniter import CroniterBadDateError, croniter

    zone = ZoneInfo(zone_name)
    times: list[datetime] = []
    walker = croniter(
        expression,
        instant_to_wall(after, zone),
        ret_type=datetime,
        day_or=True,
        max_years_between_matches=30,
    )
    while len(times) < n:
        try:
            instant = wall_to_instant(walker.get_next(datetime), zone)
        except CroniterBadDateError:
            break
        if instant > after and (not times or instant > times[-1]):
            times.append(instant)
    return times


def recall_trigger(expression: str, after: datetime, zone_name: str, n: int) -> list[datetime]:
    cron, zone = parse_cron(expression), ZoneInfo(zone_name)
    times: list[datetime] = []
    current: datetime | None = after
    while current is not None and len(times) < n:
        current = next_cron_after(cron, zone, current)
        if current is not None:
            times.append(current)
    return times


def median_ms(function: Callable[[str], list[datetime]], expression: str, runs: int) -> float:
    function(expression)  # warm caches (parsing, zone files) in every implementation
    samples = []
    for _ in range(runs):
        began = time.perf_counter()
        function(expression)
        samples.append((time.perf_counter() - began) * 1000)
    return statistics.median(samples)


def speed(runs: int) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for expression in EXPRESSIONS:
        row: dict[str, object] = {"expression": expression}
        recall = median_ms(recall_next_100, expression, runs)
        row["recall_ms"] = round(recall, 3)
        for name, function in (("cronsim", cronsim_next_100), ("croniter", croniter_next_100)):
            try:
                other = median_ms(function, expression, runs)
            except Exception as exc:  # one that cannot run an expression says so in the table
                row[f"{name}_ms"] = f"fails: {type(exc).__name__}"
                continue
            row[f"{name}_ms"] = round(other, 3)
            row[f"{name}_over_recall"] = round(other / recall, 2)
        rows.append(row)
    return rows


def agreement(count: int) -> dict[str, object]:
    batch = [case for case in cases(seed=17, count=count) if not cronsim_refuses(case.expression)]
    result: dict[str, object] = {"expressions": len(batch), "zones": 4, "next": 8}
    result["recall_mismatches"] = len(mismatches(recall_trigger, batch, 8))
    result["croniter_trigger_mismatches"] = len(mismatches(croniter_trigger, batch, 8))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--compare", type=int, default=2400)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = {"speed": speed(args.runs), "agreement": agreement(args.compare)}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    for row in report["speed"]:
        print("  ".join(f"{key}={value}" for key, value in row.items()))
    print("agreement:", report["agreement"])


if __name__ == "__main__":
    main()
