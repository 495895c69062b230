"""Table tests of the pure firing policies (catch-up, coalesce, overlap, jitter, end conditions),
on real schedules from ``parse_when``."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jupyter_recall.core.model import (
    Coalesce,
    JobStatus,
    Overlap,
    Policies,
    RunStatus,
)
from jupyter_recall.core.policy import (
    COUNT_LIMIT,
    MAX_ROWS_PER_PASS,
    DueJob,
    InFlight,
    NextFire,
    exhausted_status,
    fire_time,
    jitter_fraction,
    latest_due,
    overlap_split,
    plan_firing,
    plan_resume,
    plan_skip,
    schedule_next,
    walk,
    within_end,
)
from jupyter_recall.core.when import ScheduleSpec, parse_when

UTC = timezone.utc
T0 = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)
MIN = timedelta(minutes=1)


def every(text: str) -> ScheduleSpec:
    return parse_when(text, now=T0, tz="UTC")


TEN_MIN = every("every 10 minutes")  # T0+10m, T0+20m, ...


def occ(k: int) -> datetime:
    """The k-th occurrence of TEN_MIN."""
    return T0 + k * 10 * MIN


def statuses(plan_runs: tuple[object, ...]) -> list[tuple[str, str]]:
    return [(run.status.value, run.trigger.value) for run in plan_runs]  # type: ignore[attr-defined]


# --- jitter -------------------------------------------------------------------------------------


def test_jitter_fraction_is_deterministic_and_varies() -> None:
    a = jitter_fraction("job1", occ(1))
    assert a == jitter_fraction("job1", occ(1))
    assert 0 <= a < 1
    others = {jitter_fraction("job1", occ(k)) for k in range(2, 50)}
    others |= {jitter_fraction(f"job{k}", occ(1)) for k in range(2, 50)}
    assert len(others) == 96


def test_fire_time_without_jitter_is_the_occurrence() -> None:
    assert fire_time("j", occ(1), occ(2), 0.0) == occ(1)


@pytest.mark.parametrize(
    ("jitter", "gap", "bound"),
    [
        (30.0, timedelta(minutes=10), timedelta(seconds=30)),
        (3600.0, timedelta(minutes=10), timedelta(minutes=10)),
        (5.0, None, timedelta(seconds=5)),
    ],
)
def test_fire_time_stays_within_min_of_jitter_and_gap(
    jitter: float, gap: timedelta | None, bound: timedelta
) -> None:
    offsets = []
    for k in range(200):
        following = None if gap is None else occ(1) + gap
        offset = fire_time(f"job{k}", occ(1), following, jitter) - occ(1)
        assert timedelta(0) <= offset < bound
        offsets.append(offset)
    # Spread over the bound, not bunched up at one end.
    assert min(offsets) < bound / 4
    assert max(offsets) > bound * 3 / 4


@given(
    job_id=st.text(min_size=1, max_size=12),
    gap_us=st.integers(min_value=1, max_value=10**9),
    jitter=st.floats(min_value=0.000001, max_value=10**6),
)
def test_fire_time_is_always_strictly_before_the_following_occurrence(
    job_id: str, gap_us: int, jitter: float
) -> None:
    following = occ(1) + timedelta(microseconds=gap_us)
    fired = fire_time(job_id, occ(1), following, jitter)
    assert occ(1) <= fired < following


# --- end conditions ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("policies", "run_count", "expected"),
    [
        (Policies(), 0, occ(3)),
        (Policies(max_runs=3), 2, occ(3)),
        (Policies(max_runs=3), 3, None),
        (Policies(end_at=occ(3)), 0, occ(3)),
        (Policies(end_at=occ(3) - timedelta(microseconds=1)), 0, None),
    ],
)
def test_within_end(policies: Policies, run_count: int, expected: datetime | None) -> None:
    assert within_end(occ(3), policies, run_count) == expected


def test_schedule_next_applies_jitter_below_the_following_occurrence() -> None:
    nxt = schedule_next(TEN_MIN, "j", occ(1), Policies(jitter=3600), 0)
    assert nxt.occurrence == occ(1)
    assert nxt.fire_at is not None
    assert occ(1) <= nxt.fire_at < occ(2)
    assert schedule_next(TEN_MIN, "j", occ(1), Policies(max_runs=1), 1) == NextFire()


# --- walking ------------------------------------------------------------------------------------


def test_latest_due_finds_the_last_occurrence_after_a_year() -> None:
    horizon = T0 + timedelta(days=365, seconds=7)
    latest = latest_due(TEN_MIN, occ(1), horizon)
    assert latest == occ(365 * 24 * 6)
    cron = every("*/15 * * * *")
    first = cron.first_fire_time()
    assert first is not None
    assert latest_due(cron, first, T0 + timedelta(days=40, minutes=14)) == T0 + timedelta(days=40)
    assert latest_due(TEN_MIN, occ(1), occ(1) + MIN) == occ(1)


def test_walk_lists_up_to_the_limit_and_summarises_the_rest() -> None:
    listed, rest = walk(TEN_MIN, occ(1), occ(10), 4)
    assert listed == [occ(1), occ(2), occ(3), occ(4)]
    assert rest is not None
    assert (rest.first, rest.last, rest.total, rest.at_least) == (occ(5), occ(10), 6, False)
    listed, rest = walk(TEN_MIN, occ(1), occ(3), 4)
    assert listed == [occ(1), occ(2), occ(3)]
    assert rest is None
    far = occ(COUNT_LIMIT + 50)
    _, rest = walk(TEN_MIN, occ(1), far, 2)
    assert rest is not None
    assert (rest.total, rest.at_least, rest.last) == (COUNT_LIMIT, True, far)


# --- firing plans ---------------------------------------------------------------------------

FIRST = occ(1)
NOTHING_IN_FLIGHT = InFlight()


def due(
    schedule: ScheduleSpec = TEN_MIN,
    occurrence: datetime = FIRST,
    *,
    run_count: int = 0,
    in_flight: InFlight = NOTHING_IN_FLIGHT,
    **policies: object,
) -> DueJob:
    return DueJob(
        id="job",
        schedule=schedule,
        occurrence=occurrence,
        policies=Policies(**policies),  # type: ignore[arg-type]
        run_count=run_count,
        in_flight=in_flight,
    )


def test_on_time_occurrence_runs_with_trigger_schedule() -> None:
    plan = plan_firing(due(), occ(1) + timedelta(milliseconds=3))
    assert statuses(plan.runs) == [("running", "schedule")]
    assert plan.runs[0].scheduled_for == occ(1)
    assert plan.next == NextFire(occ(2), occ(2))
    assert plan.run_count == 1


def test_late_wake_up_within_the_window_is_not_a_miss() -> None:
    plan = plan_firing(due(), occ(1) + 5 * MIN)
    assert statuses(plan.runs) == [("running", "schedule")]
    assert plan.next.occurrence == occ(2)


def test_one_shot_beyond_the_window_is_missed_and_exhausted() -> None:
    once = parse_when("in 1 hour", now=T0, tz="UTC")
    at = T0 + timedelta(hours=1)
    plan = plan_firing(due(once, at, catchup_window=600), at + timedelta(hours=2))
    assert statuses(plan.runs) == [("missed", "catchup")]
    assert "2h late" in (plan.runs[0].error or "")
    assert "catch-up window 600s" in (plan.runs[0].error or "")
    assert plan.next.exhausted
    assert plan.run_count == 0


@pytest.mark.parametrize(
    ("coalesce", "expected"),
    [
        (Coalesce.LATEST, [("missed", "catchup")] * 5 + [("running", "catchup")]),
        (Coalesce.ALL, [("running", "catchup")] * 6),
        (Coalesce.NONE, [("missed", "catchup")] * 6),
    ],
)
def test_downtime_within_the_window_follows_coalesce(
    coalesce: Coalesce, expected: list[tuple[str, str]]
) -> None:
    now = occ(6) + 2 * MIN  # occurrences 1..6 were missed
    plan = plan_firing(due(coalesce=coalesce), now)
    assert statuses(plan.runs) == expected
    assert [run.scheduled_for for run in plan.runs] == [occ(k) for k in range(1, 7)]
    assert plan.next.occurrence == occ(7)


def test_downtime_beyond_the_window_records_old_occurrences_as_missed() -> None:
    now = occ(6) + 2 * MIN
    plan = plan_firing(due(catchup_window=15 * 60), now)
    # Within 15 min (+1 s tolerance): occurrences 5 and 6; the rest is beyond the window.
    errors = [run.error or "" for run in plan.runs]
    assert statuses(plan.runs) == [("missed", "catchup")] * 5 + [("running", "catchup")]
    assert all("beyond the catch-up window 900s" in e for e in errors[:4])
    assert "coalesced into the catch-up run" in errors[4]
    assert plan.runs[-1].scheduled_for == occ(6)


def test_all_occurrences_beyond_the_window_fire_nothing() -> None:
    now = occ(6) + 9 * MIN
    plan = plan_firing(due(catchup_window=60), now)
    assert statuses(plan.runs) == [("missed", "catchup")] * 6
    assert plan.next.occurrence == occ(7)


def test_no_window_replays_everything() -> None:
    now = occ(30)
    plan = plan_firing(due(catchup_window=None, coalesce=Coalesce.ALL), now)
    assert statuses(plan.runs) == [("running", "catchup")] * 30


def test_enumeration_is_bounded_and_summarised_after_a_long_downtime() -> None:
    now = T0 + timedelta(days=365, minutes=1)
    plan = plan_firing(due(), now)
    runs = plan.runs
    missed = [run for run in runs if run.status is RunStatus.MISSED]
    # 100 individual rows + 1 summary before the window; the budget is spent, so the 5
    # occurrences coalesced inside the window get 1 row + 1 summary; then the run.
    assert len(missed) == MAX_ROWS_PER_PASS + 1 + 2
    summary = missed[MAX_ROWS_PER_PASS]
    assert summary.scheduled_for == occ(MAX_ROWS_PER_PASS + 1)
    assert f"at least {COUNT_LIMIT} more occurrences between" in (summary.error or "")
    assert "missed 4 more occurrences" in (missed[-1].error or "")
    assert "coalesced" in (missed[-1].error or "")
    assert statuses(runs[-1:]) == [("running", "catchup")]
    assert runs[-1].scheduled_for == occ(365 * 24 * 6)
    assert plan.next.occurrence == occ(365 * 24 * 6 + 1)
    assert len({run.scheduled_for for run in runs}) == len(runs)


def test_all_replays_at_most_one_pass_worth_and_summarises_the_rest() -> None:
    now = occ(150)
    plan = plan_firing(due(catchup_window=None, coalesce=Coalesce.ALL), now)
    running = [run for run in plan.runs if run.status is RunStatus.RUNNING]
    assert len(running) == MAX_ROWS_PER_PASS
    (summary,) = [run for run in plan.runs if run.status is RunStatus.MISSED]
    assert summary.scheduled_for == occ(MAX_ROWS_PER_PASS + 1)
    assert "missed 50 more occurrences" in (summary.error or "")
    assert plan.next.occurrence == occ(151)


def test_max_runs_caps_a_replay_and_ends_the_schedule() -> None:
    plan = plan_firing(due(run_count=2, max_runs=3, coalesce=Coalesce.ALL), occ(4))
    assert statuses(plan.runs) == [("running", "catchup")]
    assert plan.run_count == 3
    assert plan.next.exhausted


def test_end_at_bounds_the_due_occurrences_and_the_schedule() -> None:
    plan = plan_firing(due(end_at=occ(2), coalesce=Coalesce.ALL), occ(5))
    assert [run.scheduled_for for run in plan.runs] == [occ(1), occ(2)]
    assert plan.next.exhausted


@pytest.mark.parametrize(
    ("overlap", "in_flight", "expected"),
    [
        (Overlap.SKIP, InFlight(), ("running", "schedule")),
        (Overlap.SKIP, InFlight(running=1), ("skipped", "schedule")),
        (Overlap.BUFFER_ONE, InFlight(running=1), ("running", "schedule")),
        (Overlap.BUFFER_ONE, InFlight(running=2, waiting=1), ("skipped", "schedule")),
        (Overlap.ALLOW, InFlight(running=3, waiting=0), ("running", "schedule")),
    ],
)
def test_overlap_decides_a_due_occurrence_while_a_run_is_in_flight(
    overlap: Overlap, in_flight: InFlight, expected: tuple[str, str]
) -> None:
    plan = plan_firing(due(overlap=overlap, in_flight=in_flight), occ(1))
    assert statuses(plan.runs) == [expected]
    assert plan.run_count == (1 if expected[0] == "running" else 0)
    assert plan.next.occurrence == occ(2)
    if expected[0] == "skipped":
        assert f"overlap={overlap.value}" in (plan.runs[0].error or "")


@pytest.mark.parametrize(
    ("overlap", "in_flight", "count", "expected"),
    [
        (Overlap.SKIP, InFlight(), 3, (3, 0)),
        (Overlap.SKIP, InFlight(running=1), 3, (0, 3)),
        (Overlap.BUFFER_ONE, InFlight(), 3, (3, 0)),
        (Overlap.BUFFER_ONE, InFlight(running=1), 3, (1, 2)),
        (Overlap.BUFFER_ONE, InFlight(running=2, waiting=1), 3, (0, 3)),
        (Overlap.ALLOW, InFlight(running=5, waiting=2), 3, (3, 0)),
        (Overlap.SKIP, InFlight(running=1), 0, (0, 0)),
    ],
)
def test_overlap_split(
    overlap: Overlap, in_flight: InFlight, count: int, expected: tuple[int, int]
) -> None:
    assert overlap_split(overlap, in_flight, count) == expected


def test_jittered_job_is_due_at_its_fire_time_but_keyed_by_its_occurrence() -> None:
    plan = plan_firing(due(jitter=120), occ(1) + 3 * MIN)
    assert plan.runs[0].scheduled_for == occ(1)
    assert plan.next.occurrence == occ(2)
    assert plan.next.fire_at is not None
    assert occ(2) <= plan.next.fire_at < occ(2) + 2 * MIN


def test_cron_downtime_over_a_dst_change() -> None:
    daily = parse_when("every day at 09:00", now=T0, tz="Europe/Paris")
    first = daily.first_fire_time()
    assert first is not None
    now = datetime(2026, 4, 2, 12, 0, tzinfo=UTC)  # after the March DST change
    plan = plan_firing(due(daily, first, catchup_window=None, coalesce=Coalesce.LATEST), now)
    last = plan.runs[-1]
    assert last.status is RunStatus.RUNNING
    assert last.scheduled_for == datetime(2026, 4, 2, 7, 0, tzinfo=UTC)  # 09:00 CEST
    assert len(plan.runs) == 26 + 28 + 31 + 2  # 6 Jan to 2 Apr, one row each
    assert plan.next.occurrence == datetime(2026, 4, 3, 7, 0, tzinfo=UTC)


# --- user operations ------------------------------------------------------------------------


def test_skip_takes_the_planned_occurrence_when_it_is_ahead() -> None:
    skip = plan_skip(TEN_MIN, "j", planned=occ(3), now=occ(2), policies=Policies(), run_count=0)
    assert skip is not None
    assert (skip.skipped, skip.next.occurrence) == (occ(3), occ(4))


def test_skip_counts_from_now_when_the_planned_occurrence_passed() -> None:
    skip = plan_skip(
        TEN_MIN, "j", planned=occ(1), now=occ(5) + MIN, policies=Policies(), run_count=0
    )
    assert skip is not None
    assert (skip.skipped, skip.next.occurrence) == (occ(6), occ(7))


def test_skip_of_the_last_occurrence_exhausts_and_nothing_left_is_none() -> None:
    skip = plan_skip(
        TEN_MIN, "j", planned=occ(3), now=occ(2), policies=Policies(end_at=occ(3)), run_count=0
    )
    assert skip is not None
    assert skip.next.exhausted
    assert (
        plan_skip(
            TEN_MIN, "j", planned=None, now=occ(4), policies=Policies(end_at=occ(3)), run_count=0
        )
        is None
    )


@pytest.mark.parametrize(
    ("planned", "now", "catch_up", "expected"),
    [
        (occ(2), occ(5) + MIN, False, occ(6)),
        (occ(2), occ(5) + MIN, True, occ(2)),
        (occ(7), occ(5) + MIN, False, occ(7)),
        (occ(6), occ(6), False, occ(6)),
        (None, occ(5), True, None),
    ],
)
def test_resume(
    planned: datetime | None, now: datetime, catch_up: bool, expected: datetime | None
) -> None:
    nxt = plan_resume(
        TEN_MIN,
        "j",
        planned=planned,
        now=now,
        policies=Policies(),
        run_count=0,
        catch_up=catch_up,
    )
    assert nxt.occurrence == expected


def test_resume_with_catch_up_then_fires_per_the_catch_up_policy() -> None:
    nxt = plan_resume(
        TEN_MIN,
        "j",
        planned=occ(2),
        now=occ(5) + MIN,
        policies=Policies(),
        run_count=0,
        catch_up=True,
    )
    assert nxt.occurrence is not None
    plan = plan_firing(due(occurrence=nxt.occurrence), occ(5) + MIN)
    assert statuses(plan.runs) == [("missed", "catchup")] * 3 + [("running", "catchup")]


@pytest.mark.parametrize(
    ("recurring", "last", "expected"),
    [
        (True, RunStatus.FAILED, JobStatus.COMPLETED),
        (True, None, JobStatus.COMPLETED),
        (False, RunStatus.SUCCEEDED, JobStatus.COMPLETED),
        (False, RunStatus.FAILED, JobStatus.FAILED),
        (False, RunStatus.MISSED, JobStatus.FAILED),
        (False, RunStatus.INTERRUPTED, JobStatus.FAILED),
        (False, RunStatus.CANCELLED, JobStatus.CANCELLED),
    ],
)
def test_exhausted_status(recurring: bool, last: RunStatus | None, expected: JobStatus) -> None:
    assert exhausted_status(recurring, last) == expected
