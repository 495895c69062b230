"""Dependencies, pure: the ``after`` text and JSON forms, which outcomes match, and the
planning of upstream ends through catch-up, coalesce, max_runs and overlap."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from jupyter_recall.core.dependency import (
    After,
    AfterOn,
    UpstreamEnd,
    parse_after,
    plan_dependents,
)
from jupyter_recall.core.errors import ParseError, ValidationError
from jupyter_recall.core.model import Coalesce, Overlap, Policies, RunStatus
from jupyter_recall.core.policy import InFlight
from jupyter_recall.core.schedule import ScheduleSpec
from jupyter_recall.core.when import parse_when

UTC = timezone.utc
NOW = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
IDLE = InFlight()
DEFAULTS = Policies()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("after 3f9c2a1b7d0e succeeds", After("3f9c2a1b7d0e", AfterOn.SUCCEEDED)),
        ("after 3f9c2a1b7d0e fails", After("3f9c2a1b7d0e", AfterOn.FAILED)),
        ("after 3f9c2a1b7d0e finishes", After("3f9c2a1b7d0e", AfterOn.FINISHED)),
        ("  After  abc   Succeeded ", After("abc", AfterOn.SUCCEEDED)),
        ("after abc failed", After("abc", AfterOn.FAILED)),
        ("after abc finished", After("abc", AfterOn.FINISHED)),
    ],
)
def test_the_text_form(text: str, expected: After) -> None:
    assert parse_after(text) == expected


@pytest.mark.parametrize(
    "text",
    ["after", "after abc", "after abc starts", "after a/b succeeds", "after abc succeeds now"],
)
def test_a_broken_dependency_lists_the_forms(text: str) -> None:
    with pytest.raises(ParseError) as error:
        parse_after(text)
    assert error.value.field == "when"
    assert "after <job id> finishes" in str(error.value)


def test_other_texts_are_not_dependencies() -> None:
    assert parse_after("every 5 minutes") is None
    assert parse_after("afterwards") is None


def test_parse_when_makes_an_after_schedule_that_round_trips() -> None:
    spec = parse_when("after abc fails", now=NOW, tz="Europe/Paris")
    assert spec.kind == "after"
    assert spec.canonical == "after abc fails"
    assert spec.describe() == "after abc fails"
    assert spec.after is not None
    assert spec.after.after == After("abc", AfterOn.FAILED)
    assert spec.first_fire_time() is None
    assert spec.next_after(NOW) is None
    assert spec.is_recurring
    assert ScheduleSpec.from_dict(spec.to_dict()) == spec


def test_the_json_form() -> None:
    assert After.from_json({"job": "abc"}) == After("abc", AfterOn.SUCCEEDED)
    assert After.from_json({"job": "abc", "on": "finished"}).to_json() == {
        "job": "abc",
        "on": "finished",
    }
    assert After("abc", AfterOn.FAILED).text == "after abc fails"


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ("abc", "after"),
        ({}, "after.job"),
        ({"job": 3}, "after.job"),
        ({"job": "a b"}, "after.job"),
        ({"job": "abc", "on": "started"}, "after.on"),
        ({"job": "abc", "when": "now"}, "after.when"),
    ],
)
def test_bad_json_names_the_field(data: object, field: str) -> None:
    with pytest.raises(ValidationError) as error:
        After.from_json(data)
    assert error.value.field == field


def test_the_option_form() -> None:
    assert After.from_option("abc") == After("abc", AfterOn.SUCCEEDED)
    assert After.from_option("abc:failed") == After("abc", AfterOn.FAILED)
    with pytest.raises(ValidationError) as error:
        After.from_option("abc:soon")
    assert error.value.field == "after.on"
    assert list(error.value.accepted) == ["succeeded", "failed", "finished"]


@pytest.mark.parametrize(
    ("on", "matching"),
    [
        (AfterOn.SUCCEEDED, {RunStatus.SUCCEEDED}),
        (AfterOn.FAILED, {RunStatus.FAILED, RunStatus.TIMED_OUT}),
        (
            AfterOn.FINISHED,
            {
                RunStatus.SUCCEEDED,
                RunStatus.FAILED,
                RunStatus.TIMED_OUT,
                RunStatus.INTERRUPTED,
                RunStatus.CANCELLED,
            },
        ),
    ],
)
def test_which_outcomes_match(on: AfterOn, matching: set[RunStatus]) -> None:
    assert {status for status in RunStatus if on.matches(status)} == matching


def ends(*minutes_ago: float, status: RunStatus = RunStatus.SUCCEEDED) -> list[UpstreamEnd]:
    return [
        UpstreamEnd(f"r{n}", status, NOW - timedelta(minutes=ago))
        for n, ago in enumerate(minutes_ago)
    ]


def plan(
    upstream: list[UpstreamEnd],
    *,
    run_count: int = 0,
    in_flight: InFlight = IDLE,
    on: AfterOn = AfterOn.SUCCEEDED,
    policies: Policies = DEFAULTS,
    catching_up: bool = True,
) -> list[tuple[str, str]]:
    planned = plan_dependents(
        upstream,
        on=on,
        policies=policies,
        catching_up=catching_up,
        run_count=run_count,
        in_flight=in_flight,
        now=NOW,
    )
    return [(item.upstream.run_id, item.status.value) for item in planned.runs]


def test_one_end_runs_and_ends_that_do_not_match_pass_silently() -> None:
    assert plan(ends(0)) == [("r0", "running")]
    assert plan(ends(0, status=RunStatus.FAILED)) == []
    assert plan(ends(0, status=RunStatus.FAILED), on=AfterOn.FINISHED) == [("r0", "running")]


def test_ends_beyond_the_window_are_missed_and_several_coalesce() -> None:
    assert plan(ends(120), policies=Policies(catchup_window=60.0)) == [("r0", "missed")]
    assert plan(ends(3, 2, 1)) == [("r0", "missed"), ("r1", "missed"), ("r2", "running")]
    assert plan(ends(3, 2, 1), policies=Policies(coalesce=Coalesce.ALL, overlap=Overlap.ALLOW)) == [
        ("r0", "running"),
        ("r1", "running"),
        ("r2", "running"),
    ]
    assert plan(ends(2, 1), policies=Policies(coalesce=Coalesce.NONE)) == [
        ("r0", "missed"),
        ("r1", "missed"),
    ]


def test_ends_heard_as_they_happen_all_run_however_close() -> None:
    assert plan(ends(3, 2, 1), catching_up=False) == [
        ("r0", "running"),
        ("r1", "running"),
        ("r2", "running"),
    ]
    # The window still applies, and so does overlap (a run of each end queues behind the first).
    assert plan(ends(120, 1), catching_up=False, policies=Policies(catchup_window=60.0)) == [
        ("r0", "missed"),
        ("r1", "running"),
    ]


def test_max_runs_and_overlap() -> None:
    replay = Policies(coalesce=Coalesce.ALL, max_runs=3, overlap=Overlap.ALLOW)
    assert plan(ends(2, 1), run_count=2, policies=replay) == [("r0", "running")]
    assert plan(ends(1), in_flight=InFlight(running=1)) == [("r0", "skipped")]
    buffered = Policies(coalesce=Coalesce.ALL, overlap=Overlap.BUFFER_ONE)
    assert plan(ends(2, 1), policies=buffered) == [
        ("r0", "running"),
        ("r1", "running"),
    ]
    assert plan(ends(2, 1), policies=buffered, in_flight=InFlight(1, 0)) == [
        ("r0", "running"),
        ("r1", "skipped"),
    ]
    done = plan_dependents(
        ends(1),
        on=AfterOn.SUCCEEDED,
        policies=Policies(max_runs=1),
        run_count=0,
        in_flight=InFlight(),
        now=NOW,
    )
    assert done.exhausted
    assert done.run_count == 1
