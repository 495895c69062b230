"""The longest string arguments of the agent tools: advertised (``maxLength``), enforced by the
specification before any request, and the same numbers as the server's own bounds."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from jupyter_recall.client import tool_specs
from jupyter_recall.client.ids import ID_LENGTH
from jupyter_recall.client.toolspec import Param, failure
from jupyter_recall.core import limits
from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.limits import ID_PATTERN
from jupyter_recall.engine.notify import MAX_MESSAGE, MAX_TITLE
from jupyter_recall.kernel.agent.tools import TOOLS
from jupyter_recall.mcp.tools import MCP_TOOLS
from jupyter_recall.server.listing import MAX_CURSOR


def test_the_bounds_are_the_servers() -> None:
    assert tool_specs.CURSOR_LENGTH == MAX_CURSOR
    assert tool_specs.MESSAGE_LENGTH == MAX_MESSAGE
    assert tool_specs.NAME_LENGTH == MAX_TITLE
    assert ID_PATTERN.endswith(f"{{1,{ID_LENGTH}}}")


def test_a_string_past_its_bound_is_refused_naming_it() -> None:
    spec = MCP_TOOLS["job_list"].spec
    assert spec.input_schema()["properties"]["cursor"]["maxLength"] == 2000
    assert spec.arguments({"cursor": "c" * 2000}).text("cursor") == "c" * 2000
    with pytest.raises(ValidationError) as raised:
        spec.arguments({"cursor": "c" * 2001})
    assert failure(raised.value, spec) == {
        "ok": False,
        "error": "cursor: is 2,001 characters long; at most 2,000 are accepted",
        "field": "cursor",
    }


def test_a_long_value_is_clipped_in_a_pattern_or_enum_error() -> None:
    for param in (
        Param("id", "string", "An id.", pattern="[a-z]+"),
        Param("kind", "string", "A kind.", enum=("a", "b")),
    ):
        with pytest.raises(ValidationError) as raised:
            param.check("#" * 5000)
        assert len(str(raised.value)) < 200, raised.value


def test_every_id_and_query_argument_is_bounded() -> None:
    # What goes in a URL (ids in paths, filters and cursors in query strings) has a bound.
    in_urls = {"job_id", "run_id", "watcher_id", "approval_id", "after_job", "notebook", "cursor"}
    for tool in MCP_TOOLS.values():
        for name, schema in tool.input_schema()["properties"].items():
            if name in in_urls:
                assert "maxLength" in schema, (tool.name, name)


POLICY_MAXIMA = {
    "max_runs": limits.MAX_RUNS,
    "timeout_seconds": limits.MAX_SECONDS,
    "retries": limits.MAX_RETRIES,
    "pause_after_failures": limits.MAX_PAUSE_AFTER_FAILURES,
    "keep_runs": limits.MAX_KEEP_RUNS,
    "keep_runs_for_seconds": limits.MAX_SECONDS,
}


def required_arguments(schema: Any) -> dict[str, object]:
    """Valid values of a tool's required arguments: the first of an enum, else a job's id or a
    time, whichever its pattern takes."""
    values: dict[str, object] = {}
    for name in schema.get("required", []):
        prop = schema["properties"][name]
        values[name] = prop["enum"][0] if "enum" in prop else "0123456789ab"
    return values


@pytest.mark.parametrize("surface", ["kernel", "mcp"])
def test_every_policy_argument_advertises_the_servers_maximum(surface: str) -> None:
    shared = tool_specs.OVER_MCP if surface == "mcp" else tool_specs.IN_KERNEL
    seen = set()
    for spec in shared.all:
        properties = spec.input_schema()["properties"]
        for name in POLICY_MAXIMA.keys() & properties.keys():
            seen.add(name)
            assert properties[name]["maximum"] == POLICY_MAXIMA[name], (spec.name, name)
            with pytest.raises(ValidationError) as raised:
                spec.arguments(
                    {**required_arguments(spec.input_schema()), name: POLICY_MAXIMA[name] + 1}
                )
            assert raised.value.field == name
            assert str(raised.value).startswith(f"{name}: must be from 0 to ")
    assert seen == POLICY_MAXIMA.keys()


KERNEL_TEXT_BOUNDS = [
    ("schedule_recall", "when", tool_specs.WHEN_LENGTH),
    ("schedule_recall", "timezone_offset", tool_specs.TZ_LENGTH),
    ("manage_recall", "session_id", tool_specs.PATH_LENGTH),
    ("remember", "when", tool_specs.WHEN_LENGTH),
    ("heartbeat_start", "every", tool_specs.WHEN_LENGTH),
    ("heartbeat_start", "path", tool_specs.PATH_LENGTH),
]


@pytest.mark.parametrize(("tool", "name", "bound"), KERNEL_TEXT_BOUNDS)
def test_the_kernel_tools_texts_are_bounded_before_any_request(
    tool: str, name: str, bound: int
) -> None:
    spec = TOOLS[tool].described
    assert spec.input_schema()["properties"][name]["maxLength"] == bound
    too_long = {**required_arguments(spec.input_schema()), name: "x" * (bound + 1)}
    with pytest.raises(ValidationError) as raised:
        spec.arguments(too_long)
    assert raised.value.field == name


def test_a_session_refused_by_the_server_is_named_as_session_id() -> None:
    # The session becomes the listing's ``path`` filter: the server's refusal names that.
    refused = ValidationError("path", "makes the request's URL too long")
    answer = failure(refused, TOOLS["manage_recall"].described)
    assert answer["field"] == "session_id"
    assert answer["error"].startswith("session_id: ")


def test_a_tag_that_is_no_text_is_refused_naming_tags() -> None:
    spec = tool_specs.OVER_MCP.send_notification
    with pytest.raises(ValidationError) as raised:
        spec.arguments({**required_arguments(spec.input_schema()), "tags": ["ok", "\ud800"]})
    assert raised.value.field == "tags"
    assert "lone UTF-16 surrogate" in str(raised.value)


def test_a_tool_name_pattern_matches_the_whole_name_as_the_check_does() -> None:
    schema = TOOLS["background_run"].described.input_schema()
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid({"name": "http.get"})
    assert not validator.is_valid({"name": "x http.get y"})
