"""ToolArguments: a call's checked arguments read typed, defaults filled, misuse a bug."""

from __future__ import annotations

import pytest

from jupyter_recall.client import tool_specs
from jupyter_recall.core.errors import ValidationError


def test_checked_arguments_read_typed_with_their_defaults() -> None:
    args = tool_specs.SCHEDULE_CRON.arguments(
        {"cron": "every 15m", "tool_params": {"url": "https://example.org"}, "retries": 2.0}
    )
    assert args.text("cron") == "every 15m"
    assert args.text("action_type") == "notification"
    assert args.optional_text("label") is None
    assert args.integer("retries") == 2
    assert args.integer("max_runs") == 0
    assert args.mapping("tool_params") == {"url": "https://example.org"}
    assert args.mapping("output_config") is None
    assert tool_specs.tool_policies(args) == {"retries": 2}


def test_watch_start_numbers_and_given() -> None:
    args = tool_specs.WATCH_START.arguments({"name": "http.get", "interval": 10.0})
    assert args.integer("interval") == 10
    assert args.given() == {"name": "http.get", "interval": 10, "notify_when": "on_change"}


def test_a_watchers_interval_is_a_whole_number_as_the_server_takes_it() -> None:
    schema = tool_specs.WATCH_START.input_schema()["properties"]["interval"]
    assert (schema["type"], schema["minimum"], schema["maximum"]) == ("integer", 5, 3600)
    for given, reason in ((7.5, "must be an integer, got 7.5"), (3601, "must be <= 3600")):
        with pytest.raises(ValidationError, match=f"^interval: {reason}"):
            tool_specs.WATCH_START.arguments({"name": "http.get", "interval": given})


def test_send_notification_tags_are_texts() -> None:
    args = tool_specs.SEND_NOTIFICATION.arguments(
        {"channel": "ops", "message": "hi", "tags": ["a", "b"]}
    )
    assert args.texts("tags") == ["a", "b"]
    assert args.text("priority") == "normal"


def test_policies_only_of_arguments_the_tool_takes() -> None:
    args = tool_specs.SCHEDULE_ONCE.arguments(
        {"when": "30m", "timeout_seconds": 60, "keep_runs_for_seconds": 3600}
    )
    assert tool_specs.tool_policies(args) == {"timeout": 60, "keep_runs_for": 3600}


def test_a_reader_of_the_wrong_type_is_a_bug_of_the_tool() -> None:
    args = tool_specs.SCHEDULE_ONCE.arguments({"when": "30m"})
    with pytest.raises(TypeError, match=r"schedule_once\.when is a str"):
        args.integer("when")
    with pytest.raises(KeyError):
        args.optional_text("cron")


def test_a_required_text_left_empty_names_the_argument() -> None:
    args = tool_specs.SCHEDULE_ONCE.arguments({"when": "30m"})
    with pytest.raises(ValidationError) as raised:
        args.text("prompt")
    assert raised.value.field == "prompt"
