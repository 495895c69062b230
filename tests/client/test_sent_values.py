"""What a client sends is checked where it is given, naming the field: no NUL or lone
surrogate in text that reaches a path or a URL, Unicode in every string argument and query
value, JSON in every body (``json.dumps`` failed with a bare ``TypeError`` naming nothing)."""

from __future__ import annotations

import pytest

from jupyter_recall.client.json_values import check_json
from jupyter_recall.client.remote import Client, ServerInfo, json_bytes
from jupyter_recall.client.tool_specs import SEND_NOTIFICATION
from jupyter_recall.client.toolspec import ArrayParam, NumberParam, Param
from jupyter_recall.core.errors import ValidationError

CLIENT = Client(ServerInfo("http://127.0.0.1:8888/", "", "test"))
NOT_JSON = "must be JSON (strings, numbers, booleans, null, lists and objects)"


def refusal(call, *args):
    with pytest.raises(ValidationError) as caught:
        call(*args)
    return caught.value.field, caught.value.message


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("a\x00b", "must not contain a NUL character: give text without it"),
        ("\ud800", "holds a lone UTF-16 surrogate (U+D800), which is not text: give Unicode text"),
    ],
)
def test_a_plain_argument_refuses_nul_and_lone_surrogates(value, message):
    param = Param("path", "string", "A file.", plain=True)
    assert refusal(param.check, value) == ("path", message)
    assert param.check("notes/été.md") == "notes/été.md"


def test_every_string_argument_is_unicode_and_free_text_may_hold_nul():
    param = Param("prompt", "string", "Free text.")
    assert refusal(param.check, "x\udfff")[0] == "prompt"
    assert param.check("a\x00b") == "a\x00b"


@pytest.mark.parametrize("value", [b"x", object(), {1, 2}])
def test_an_array_or_number_that_is_no_json_is_named_not_an_internal_error(value):
    shown = type(value).__name__
    field, message = refusal(ArrayParam("tags", "array", "Tags.").check, value)
    assert (field, message.startswith(f"must be an array, got {shown} ")) == ("tags", True)
    field, message = refusal(NumberParam("timeout", "number", "Seconds.").check, value)
    assert (field, message.startswith(f"must be a number, got {shown} ")) == ("timeout", True)


def test_an_object_argument_holding_no_json_names_where():
    arguments = {"channel": "ops", "message": "hi", "structured_data": {"a": [1, {2}]}}
    with pytest.raises(ValidationError) as caught:
        SEND_NOTIFICATION.arguments(arguments)
    assert caught.value.field == "structured_data.a[1]"
    assert caught.value.message == f"{NOT_JSON}, got set"


@pytest.mark.parametrize(
    ("value", "field", "message"),
    [
        ({"url": {1, 2}}, "params.url", f"{NOT_JSON}, got set"),
        ({"x": [b"x"]}, "params.x[0]", f"{NOT_JSON}, got bytes"),
        (
            {"x": {(1, 2): 3}},
            "params.x",
            "must be a JSON object: its keys are strings, got a tuple key",
        ),
    ],
)
def test_check_json_names_the_path(value, field, message):
    assert refusal(check_json, value, "params") == (field, message)
    check_json({"a": [1, 2.5, None, True, "x", (3,)], 1: {}}, "params")


def test_a_value_that_contains_itself_is_named():
    looped: dict[str, object] = {}
    looped["self"] = looped
    assert refusal(check_json, {"x": looped}, "options") == (
        "options.x.self",
        f"{NOT_JSON}, and it contains itself",
    )
    shared = [1]
    check_json({"a": shared, "b": shared}, "options")  # the same list twice is no loop


def test_a_body_holding_no_json_names_its_field():
    assert refusal(json_bytes, {"action": {"type": "code", "code": b"x"}}) == (
        "action.code",
        f"{NOT_JSON}, got bytes",
    )
    assert refusal(json_bytes, {"options": {"x": object()}})[0] == "options.x"
    assert json_bytes({"name": "\ud800"}) == b'{"name": "\\ud800"}'  # for the server to refuse


def test_a_query_value_that_is_not_unicode_is_named():
    assert refusal(CLIENT.url, "/api/recall/jobs", {"session": "\ud800"})[0] == "session"
    assert CLIENT.url("/api/recall/jobs", {"q": "a\x00"}).endswith("?q=a%00")
