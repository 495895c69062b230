"""core.cron against an independent implementation: cronsim, over thousands of random expressions.

The expressions mix names, equal-end ranges, steps, lists covering a whole field, ``L``, ``LW``,
``nL`` and ``n#k``; each is compared in one of four zones (UTC and three with DST, one of them
with a 30-minute shift), from a start that is often just before a DST change. See
``cron_reference.py`` for the reference. The sizes keep the run to a few seconds.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from jupyter_recall.core.triggers.cron import CronTrigger
from tests.core.cron_reference import (
    cases,
    cronsim_aware_times,
    cronsim_refuses,
    has_fixed_time,
    mismatches,
)

EXPRESSIONS = 2400
NEXT = 8


def ours(expression: str, after: datetime, zone: str, n: int) -> list[datetime]:
    trigger = CronTrigger(expression, zone)
    times: list[datetime] = []
    current: datetime | None = after
    while current is not None and len(times) < n:
        current = trigger.next_after(current)
        if current is not None:
            times.append(current)
    return times


def test_next_fire_times_agree_with_cronsim_and_the_dst_rules():
    batch = [
        case for case in cases(seed=17, count=EXPRESSIONS) if not cronsim_refuses(case.expression)
    ]
    assert len(batch) > EXPRESSIONS * 0.95
    found = mismatches(ours, batch, NEXT)
    assert found == [], f"{len(found)} of {len(batch)} differ, e.g. {found[:5]}"


def test_fixed_time_expressions_agree_with_cronsim_own_dst_handling():
    batch = [
        case
        for case in cases(seed=71, count=EXPRESSIONS // 2)
        if has_fixed_time(case.expression) and not cronsim_refuses(case.expression)
    ]
    assert len(batch) > 200
    differ = [
        case
        for case in batch
        if ours(case.expression, case.after, case.zone, NEXT)
        != cronsim_aware_times(case.expression, case.after, case.zone, NEXT)
    ]
    assert differ == []


def test_what_cronsim_refuses_never_fires_here():
    refused = [c for c in cases(seed=17, count=EXPRESSIONS) if cronsim_refuses(c.expression)]
    for case in refused:
        assert ours(case.expression, case.after, case.zone, 1) == [], case


@pytest.mark.parametrize(
    "expression",
    ["13-13 * * * *", "0 0 * * MON-MON", "0 0 1 APR-APR *", "0 0 1-31 * 1", "0 0 */2 * 1-1"],
)
def test_the_cases_croniter_got_wrong(expression):
    after = datetime.fromisoformat("2026-05-10T10:00:00+00:00")
    batch_result = ours(expression, after, "Europe/Paris", 20)
    reference = mismatches(ours, [*_one(expression, after)], 20)
    assert batch_result
    assert reference == []


def _one(expression: str, after: datetime):
    from tests.core.cron_reference import Case

    for zone in ("UTC", "Europe/Paris"):
        yield Case(expression, zone, after + timedelta(days=1))
