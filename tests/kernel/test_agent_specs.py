"""Agent tool specifications, and argument validation that answers before any request.

The client points at a port where nothing listens: a call that reached the network would come
back as a connection error without a field, so every assertion on `field` below also shows that
bad input is refused locally.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest

from jupyter_recall import agent
from jupyter_recall.kernel.connection import client
from tests.server.live_server import free_port

VALID: dict[str, dict[str, Any]] = {
    "schedule_recall": {"call_type": "immediate", "additional_context_message": "Read /tmp/a.log"},
    "manage_recall": {"action": "list"},
    "schedule_once": {"when": "in 5m", "prompt": "check"},
    "schedule_cron": {"cron": "0 9 * * *", "prompt": "report"},
    "schedule_after": {"after_job": "3f9c2a1b7d0e", "prompt": "report"},
    "schedule_cancel": {"job_id": "3f9c2a1b7d0e"},
    "schedule_list": {},
    "schedule_status": {"job_id": "3f9c2a1b7d0e"},
    "remember": {"what": "check the deploy", "when": "tomorrow at 9am"},
    # Tool calls at once and in the background (kernel/agent/calls.py).
    "run_parallel": {"actions": [{"name": "shell.run", "params": {"command": "true"}}]},
    "background_run": {"name": "shell.run"},
    "background_status": {"task_id": "bg-0"},
    "background_result": {"task_id": "bg-0"},
    "background_cancel": {"task_id": "bg-0"},
    "background_list": {},
    "background_wait": {},
    # Watchers and notifications (kernel/agent/watchers.py).
    "watch_start": {"name": "filesystem.read"},
    "watch_stop": {"watcher_id": "3f9c2a1b7d0e"},
    "watch_pause": {"watcher_id": "3f9c2a1b7d0e"},
    "watch_resume": {"watcher_id": "3f9c2a1b7d0e"},
    "watch_status": {"watcher_id": "3f9c2a1b7d0e"},
    "watch_list": {},
    "watch_history": {"watcher_id": "3f9c2a1b7d0e"},
    "send_notification": {"channel": "ops", "message": "deployed"},
    "heartbeat_start": {},
}
WRONG_TYPE = {
    "string": 42,
    "integer": "nine",
    "object": "not an object",
    "array": "not a list",
    "number": "soon",
}


@pytest.fixture(autouse=True)
def unreachable_server() -> Iterator[None]:
    url = f"http://127.0.0.1:{free_port()}/"
    client.set_client(client.Client(client.ServerInfo(url, "", "test"), timeout=2))
    yield
    client.set_client(None)


def test_specs_have_the_function_calling_shape():
    specs = agent.tool_specs()
    assert [spec["function"]["name"] for spec in specs] == list(VALID)
    for spec in specs:
        assert spec["type"] == "function"
        function = spec["function"]
        assert function["description"]
        parameters = function["parameters"]
        jsonschema.Draft202012Validator.check_schema(parameters)
        assert parameters["type"] == "object"
        assert parameters["additionalProperties"] is False
        assert set(parameters["required"]) <= set(parameters["properties"])
        # The minimal valid arguments of each tool satisfy its schema.
        jsonschema.validate(VALID[function["name"]], parameters)
    json.dumps(specs)  # JSON-serialisable as a whole


def test_recall_tools_follow_the_seed_parameters():
    (recall,) = agent.tool_specs(["schedule_recall"])
    parameters = recall["function"]["parameters"]
    assert set(parameters["properties"]) == {
        "call_type",
        "when",
        "timezone_offset",
        "interval_seconds",
        "internal_comment",
        "additional_context_message",
    }
    assert parameters["required"] == ["call_type", "additional_context_message"]
    assert parameters["properties"]["call_type"]["enum"] == ["once", "recurring", "immediate"]
    (manage,) = agent.tool_specs(["manage_recall"])
    assert manage["function"]["parameters"]["properties"]["action"]["enum"] == [
        "cancel",
        "skip",
        "list",
    ]


def test_anthropic_style_and_bad_selection():
    (spec,) = agent.tool_specs(["remember"], style="anthropic")
    assert set(spec) == {"name", "description", "input_schema"}
    with pytest.raises(agent.ValidationError, match="accepted: openai, anthropic"):
        agent.tool_specs(style="gemini")
    with pytest.raises(agent.ValidationError, match="unknown tool 'nope'"):
        agent.tool_specs(["nope"])


def _params() -> list[tuple[str, str, str]]:
    return [
        (spec["function"]["name"], name, schema["type"])
        for spec in agent.tool_specs()
        for name, schema in spec["function"]["parameters"]["properties"].items()
    ]


@pytest.mark.parametrize(("tool", "argument", "kind"), _params())
def test_every_argument_refuses_a_wrong_type(tool, argument, kind):
    result = agent.dispatch(tool, {**VALID[tool], argument: WRONG_TYPE[kind]})
    assert result["ok"] is False
    assert result["field"] == argument
    assert result["error"].startswith(f"{argument}: must be ")
    json.dumps(result)


@pytest.mark.parametrize(
    ("tool", "argument"),
    [
        (spec["function"]["name"], name)
        for spec in agent.tool_specs()
        for name in spec["function"]["parameters"]["required"]
    ],
)
def test_every_required_argument_is_required(tool, argument):
    arguments = dict(VALID[tool])
    del arguments[argument]
    result = agent.dispatch(tool, arguments)
    assert result == {"ok": False, "error": f"{argument}: required by {tool}", "field": argument}


@pytest.mark.parametrize(
    ("tool", "arguments", "field", "words"),
    [
        (
            "schedule_recall",
            {"call_type": "daily"},
            "call_type",
            "accepted: once, recurring, immediate",
        ),
        (
            "schedule_recall",
            {"call_type": "once", "interval_seconds": 60},
            "interval_seconds",
            "only for call_type 'recurring'",
        ),
        (
            "schedule_recall",
            {"call_type": "immediate", "interval_seconds": 60},
            "interval_seconds",
            "only for",
        ),
        (
            "schedule_recall",
            {"call_type": "immediate", "when": "in 5m"},
            "when",
            "not used with call_type 'immediate'",
        ),
        ("schedule_recall", {"call_type": "once"}, "when", "required for call_type 'once'"),
        (
            "schedule_recall",
            {"call_type": "recurring"},
            "interval_seconds",
            "required for call_type 'recurring'",
        ),
        (
            "schedule_recall",
            {"call_type": "recurring", "interval_seconds": 60, "when": "in 1m"},
            "when",
            "not both",
        ),
        (
            "schedule_recall",
            {"call_type": "recurring", "interval_seconds": 0},
            "interval_seconds",
            ">= 1",
        ),
        (
            "schedule_recall",
            {"call_type": "recurring", "interval_seconds": 1.5},
            "interval_seconds",
            "integer",
        ),
        (
            "schedule_recall",
            {"call_type": "recurring", "interval_seconds": True},
            "interval_seconds",
            "integer",
        ),
        (
            "schedule_recall",
            {"additional_context_message": "  "},
            "additional_context_message",
            "must not be empty",
        ),
        ("manage_recall", {"action": "delete"}, "action", "accepted: cancel, skip, list"),
        (
            "schedule_once",
            {"action_type": "email"},
            "action_type",
            "accepted: notification, llm_prompt, tool_call",
        ),
        (
            "schedule_once",
            {"action_type": "tool_call", "prompt": None},
            "tool_name",
            "required for action_type 'tool_call'",
        ),
        (
            "schedule_once",
            {"action_type": "tool_call", "tool_name": "http.get"},
            "prompt",
            "only for action_type",
        ),
        (
            "schedule_once",
            {"tool_name": "http.get"},
            "tool_name",
            "only for action_type 'tool_call'",
        ),
        (
            "schedule_once",
            {"prompt": None, "action_type": "llm_prompt"},
            "prompt",
            "required for action_type 'llm_prompt'",
        ),
        ("schedule_once", {"when": ""}, "when", "must not be empty"),
        ("schedule_cron", {"max_runs": -1}, "max_runs", ">= 0"),
        ("schedule_once", {"timeout_seconds": 1.5}, "timeout_seconds", "integer"),
        ("schedule_cancel", {"job_id": "../etc"}, "job_id", "does not match"),
        ("schedule_status", {"job_id": ""}, "job_id", "must not be empty"),
        (
            "schedule_list",
            {"status": "done"},
            "status",
            "accepted: active, paused, completed, failed, cancelled",
        ),
        ("remember", {"action": "email"}, "action", "accepted: notification, llm_prompt"),
        ("remember", {"when": "soon", "colour": "red"}, "colour", "unknown argument of remember"),
    ],
)
def test_bad_values_name_the_argument(tool, arguments, field, words):
    merged = {
        key: value for key, value in {**VALID[tool], **arguments}.items() if value is not None
    }
    result = agent.dispatch(tool, merged)
    assert result["ok"] is False, result
    assert result["field"] == field, result
    assert words in result["error"]


def test_unknown_tool_and_undecodable_arguments():
    unknown = agent.dispatch("launch_rocket", {})
    assert unknown["ok"] is False
    assert unknown["field"] == "name"
    assert unknown["accepted"] == list(VALID)
    assert agent.dispatch("schedule_list", "{not json")["field"] == "arguments"
    assert agent.dispatch("schedule_list", "[1, 2]")["field"] == "arguments"
    # Arguments as the JSON string an LLM API hands over are accepted.
    result = agent.dispatch("schedule_cancel", '{"job_id": "bad id"}')
    assert result["field"] == "job_id"


def test_connection_errors_come_back_as_results():
    result = agent.dispatch("schedule_status", {"job_id": "3f9c2a1b7d0e"})
    assert result["ok"] is False
    assert result["field"] is None
    assert "cannot reach the Jupyter server" in result["error"]
