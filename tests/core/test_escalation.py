"""Escalation strategies, table-tested: a sequence of check results and the notifications."""

from __future__ import annotations

import pytest

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.escalation import (
    CheckResult,
    NotifyWhen,
    WatcherInfo,
    WatchState,
    decide,
    notification_text,
    parse_escalation,
)


def ok(data):
    return CheckResult(True, data=data)


def err(message):
    return CheckResult(False, error=message)


def run(config, results):
    """The reasons of every check, with a ``!`` where it notified; and the final state."""
    state = WatchState()
    seen = []
    for result in results:
        decision = decide(config, state, result)
        seen.append(("!" if decision.notify else "") + decision.reason)
        state = decision.state
    return seen, state


@pytest.mark.parametrize(
    ("notify_when", "notify_config", "results", "expected"),
    [
        (
            "on_change",
            None,
            [ok(1), ok(1), ok(2), ok(2), err("boom"), err("boom"), ok(2)],
            ["!baseline", "unchanged", "!changed", "unchanged", "!changed", "unchanged",
             "!changed"],
        ),
        (
            "on_change",
            {},
            [ok({"a": 1, "b": 2}), ok({"b": 2, "a": 1}), ok({"a": 1, "b": 3})],
            ["!baseline", "unchanged", "!changed"],
        ),
        ("on_change", None, [err("down"), err("down")], ["!baseline", "unchanged"]),
        (
            "on_error",
            None,
            [ok(1), ok(2), err("down"), err("still down"), err("down"), ok(3), ok(3), err("x")],
            ["ok", "ok", "!error", "still failing", "still failing", "!recovered", "ok", "!error"],
        ),
        ("on_error", None, [err("down at start"), ok(1)], ["!error", "!recovered"]),
        (
            "on_threshold",
            {"expression": "result.status_code != 200"},
            [
                ok({"status_code": 200}),
                ok({"status_code": 500}),
                ok({"status_code": 503}),
                ok({"status_code": 200}),
                ok({"status_code": 502}),
            ],
            ["below threshold", "!threshold met", "threshold still met", "below threshold",
             "!threshold met"],
        ),
        (
            "on_threshold",
            {"expression": "result.data.progress >= 100"},
            [ok({"data": {"progress": 50}}), ok({"data": {"progress": 100}})],
            ["below threshold", "!threshold met"],
        ),
        (
            "on_threshold",
            {"expression": "result.progress >= 100"},
            [ok({"progress": 99.5}), ok({"progress": 100})],
            ["below threshold", "!threshold met"],
        ),
        (
            "on_threshold",
            {"expression": "result.success == false"},
            [ok(1), err("boom"), err("boom"), ok(1)],
            ["below threshold", "!threshold met", "threshold still met", "below threshold"],
        ),
        (
            "on_threshold",
            {"expression": "result.data == 'done'"},
            [ok("busy"), ok("done")],
            ["below threshold", "!threshold met"],
        ),
        (
            "summary",
            {"batch_size": 3},
            [ok(1), ok(2), ok(3), ok(4), err("x"), ok(6), ok(7)],
            ["batching", "batching", "!summary", "batching", "batching", "!summary", "batching"],
        ),
        ("summary", {"batch_size": 1}, [ok(1), ok(1)], ["!summary", "!summary"]),
        ("always", None, [ok(1), ok(1), err("x")], ["!always", "!always", "!always"]),
    ],
)  # fmt: skip
def test_strategies(notify_when, notify_config, results, expected):
    config = parse_escalation(notify_when, notify_config)
    seen, state = run(config, results)
    assert seen == expected
    assert state.checks == len(results)
    assert state.notifications == sum(reason.startswith("!") for reason in expected)


def test_default_strategy_is_on_change():
    assert parse_escalation(None).notify_when is NotifyWhen.ON_CHANGE


def test_summary_carries_the_batch_and_starts_a_new_one():
    config = parse_escalation("summary", {"batch_size": 2})
    state = WatchState()
    first = decide(config, state, ok({"n": 1}))
    assert first.batch == ()
    second = decide(config, first.state, err("boom"))
    assert second.batch == (
        {"check": 1, "success": True, "result": {"n": 1}},
        {"check": 2, "success": False, "error": "boom"},
    )
    assert second.state.batch == ()


def test_summary_clips_large_results_it_keeps():
    config = parse_escalation("summary", {"batch_size": 5})
    decision = decide(config, WatchState(), ok("x" * 5000))
    kept = decision.state.batch[0]["result"]
    assert isinstance(kept, str)
    assert len(kept) == 500


def test_state_round_trips_through_json_dicts():
    config = parse_escalation("summary", {"batch_size": 4})
    _, state = run(config, [ok(1), err("e")])
    assert WatchState.from_dict(state.to_dict()) == state


def test_results_from_tools():
    assert CheckResult.from_tool({"success": True, "data": {"a": 1}}) == ok({"a": 1})
    assert CheckResult.from_tool({"success": False, "error": "nope"}) == err("nope")
    http_error = CheckResult.from_tool(
        {"success": False, "error": "HTTP 503", "data": {"status_code": 503}}
    )
    assert http_error.to_json() == {
        "success": False,
        "error": "HTTP 503",
        "data": {"status_code": 503},
    }
    assert CheckResult.from_json(http_error.to_json()) == http_error
    assert parse_escalation(
        "on_threshold", {"expression": "result.status_code >= 500"}
    ).expression.holds(http_error.view())
    odd = CheckResult.from_tool({"status": 200})
    assert not odd.success
    assert "not {success, data|error}" in odd.error
    assert CheckResult.from_json(ok([1]).to_json()) == ok([1])


def test_expression_view_prefers_the_datas_own_keys():
    view = ok({"data": {"x": 1}, "status_code": 200}).view()
    assert view["data"] == {"x": 1}
    assert view["status_code"] == 200
    assert view["success"] is True
    assert ok([1, 2]).view()["data"] == [1, 2]


@pytest.mark.parametrize(
    ("notify_when", "notify_config", "field", "message"),
    [
        ("sometimes", None, "notify_when", "unknown strategy 'sometimes'"),
        ("on_threshold", None, "notify_config.expression", "needs a condition"),
        ("on_threshold", {"expression": "x > 1"}, "notify_config.expression", "'x > 1'"),
        ("summary", {"batch_size": 0}, "notify_config.batch_size", "between 1 and 100"),
        ("summary", {"batch_size": 101}, "notify_config.batch_size", "between 1 and 100"),
        ("summary", {"batch_size": "5"}, "notify_config.batch_size", "must be an integer"),
        ("on_change", {"expression": "result.a == 1"}, "notify_config.expression", "not a setting"),
        ("always", [], "notify_config", "must be a JSON object"),
    ],
)
def test_bad_configuration_names_the_field(notify_when, notify_config, field, message):
    with pytest.raises(ValidationError) as caught:
        parse_escalation(notify_when, notify_config)
    assert caught.value.field == field
    assert message in str(caught.value)


def test_unknown_strategy_lists_the_strategies():
    with pytest.raises(ValidationError) as caught:
        parse_escalation("sometimes")
    assert caught.value.accepted == ("on_change", "on_error", "on_threshold", "summary", "always")


def test_notify_config_is_given_back_as_written():
    assert parse_escalation("on_threshold", {"expression": "result.a>1"}).notify_config() == {
        "expression": "result.a>1"
    }
    assert parse_escalation("summary", {}).notify_config() == {"batch_size": 10}
    assert parse_escalation("on_error").notify_config() == {}


def test_notification_text_names_watcher_check_and_result():
    config = parse_escalation("on_error")
    watcher = WatcherInfo("a1b2c3", "API health", "http.get", 30)
    state = WatchState(checks=41, notifications=2)
    decision = decide(config, state, err("Connection refused"))
    title, message = notification_text(watcher, config, decision, err("Connection refused"))
    assert title == "Watcher API health: error"
    assert message.splitlines() == [
        '[WATCHER UPDATE] watcher_id=a1b2c3, label="API health", tool=http.get',
        "Check #42 (interval: 30s, 3 notification(s) so far, strategy: on_error): error",
        "Error: Connection refused",
    ]


def test_notification_text_of_a_summary_and_a_threshold():
    config = parse_escalation("summary", {"batch_size": 2})
    watcher = WatcherInfo("w", "", "shell.run", 2.5)
    first = decide(config, WatchState(), ok(1))
    second = decide(config, first.state, ok(2))
    _, message = notification_text(watcher, config, second, ok(2))
    assert "interval: 2.5s" in message
    assert 'Summary (2 checks): [{"check": 1, "result": 1, "success": true}' in message
    config = parse_escalation("on_threshold", {"expression": "result.n>1"})
    decision = decide(config, WatchState(), ok({"n": 2}))
    title, message = notification_text(watcher, config, decision, ok({"n": 2}))
    assert title == "Watcher shell.run: threshold met"
    assert "Condition: result.n > 1" in message
    assert 'Result: {"n": 2}' in message
