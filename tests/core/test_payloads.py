import pytest

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.limits import MAX_RUNS, MAX_SECONDS
from jupyter_recall.core.payloads import (
    check_action_fits_target,
    check_policy_bounds,
    check_text,
    merge_patch,
)
from jupyter_recall.core.records import JobOptions, action_from_json, target_from_json


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ({"type": "code", "code": "print(1)"}, {"type": "code", "code": "print(1)"}),
        (
            {"type": "instruction", "instruction": "read log", "comment": "c"},
            {"type": "instruction", "instruction": "read log", "comment": "c"},
        ),
        (
            {"type": "tool", "name": "http.get", "params": {"url": "http://x"}},
            {"type": "tool", "name": "http.get", "params": {"url": "http://x"}},
        ),
        (
            {"type": "tool", "name": "shell.run"},
            {"type": "tool", "name": "shell.run", "params": {}},
        ),
        (
            {"type": "notebook", "path": "a/b.ipynb"},
            {"type": "notebook", "path": "a/b.ipynb", "parameters": {}},
        ),
        (
            {"type": "notification", "message": "hi", "title": "T"},
            {"type": "notification", "message": "hi", "title": "T"},
        ),
    ],
)
def test_valid_actions_are_normalised(payload, expected):
    assert action_from_json(payload).to_json() == expected


@pytest.mark.parametrize(
    ("payload", "field", "fragment"),
    [
        ("print(1)", "action", "JSON object"),
        ({"type": "python"}, "action.type", "accepted: code, instruction"),
        ({}, "action.type", "unknown action type None"),
        ({"type": "code"}, "action.code", "non-empty string"),
        ({"type": "code", "code": "   "}, "action.code", "non-empty string"),
        ({"type": "tool", "name": "get"}, "action.name", "module.action"),
        ({"type": "tool", "name": "http.get", "params": [1]}, "action.params", "JSON object"),
        ({"type": "notebook", "path": "x.py"}, "action.path", ".ipynb"),
        ({"type": "notification", "message": "m", "title": 3}, "action.title", "string"),
    ],
)
def test_invalid_actions_name_the_field(payload, field, fragment):
    with pytest.raises(ValidationError) as info:
        action_from_json(payload).to_json()
    assert info.value.field == field
    assert fragment in str(info.value)


def test_targets():
    assert target_from_json({"type": "kernel", "path": "nb.ipynb"}).to_json() == {
        "type": "kernel",
        "path": "nb.ipynb",
    }
    # No kernel spec filled in: a notebook's own, else the server's default, at run time.
    assert target_from_json({"type": "headless"}).to_json() == {"type": "headless"}
    assert target_from_json({"type": "headless", "kernel_name": "ir"}).to_json() == {
        "type": "headless",
        "kernel_name": "ir",
    }
    with pytest.raises(ValidationError, match="unknown field") as unknown:
        target_from_json({"type": "server", "path": "nb.ipynb"})
    assert unknown.value.field == "target.path"
    with pytest.raises(ValidationError, match=r"'path' .* or 'kernel_id'"):
        target_from_json({"type": "kernel"}).to_json()
    with pytest.raises(ValidationError, match="accepted: kernel, headless, server") as info:
        target_from_json({"type": "cloud"}).to_json()
    assert info.value.field == "target.type"


def test_action_target_combinations():
    server = target_from_json({"type": "server"}).to_json()
    with pytest.raises(ValidationError, match="runs in a kernel"):
        check_action_fits_target(action_from_json({"type": "code", "code": "1"}).to_json(), server)
    kernel = target_from_json({"type": "kernel", "kernel_id": "k"}).to_json()
    with pytest.raises(ValidationError, match="fresh kernel"):
        check_action_fits_target(
            action_from_json({"type": "notebook", "path": "n.ipynb"}).to_json(), kernel
        )
    check_action_fits_target(
        action_from_json({"type": "notification", "message": "m"}).to_json(), server
    )


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"exclusive": "yes"}, "options.exclusive"),
        ({"exclusive_timeout": 0}, "options.exclusive_timeout"),
        ({"exclusive_timeout": True}, "options.exclusive_timeout"),
        ({"exclusive_timeout": MAX_SECONDS + 1}, "options.exclusive_timeout"),
        ({"on_missing_kernel": "retry"}, "options.on_missing_kernel"),
    ],
)
def test_invalid_options(options, field):
    with pytest.raises(ValidationError) as info:
        JobOptions.from_json(options).to_json()
    assert info.value.field == field


def test_valid_options_pass_through():
    options = {"exclusive": True, "on_missing_kernel": "start", "output_channel": "log"}
    assert JobOptions.from_json(options).to_json() == options


def test_check_text_bounds_length_and_refuses_nul():
    assert check_text("é" * 10, "name", 10) == "é" * 10
    with pytest.raises(ValidationError, match="11 characters long; at most 10") as info:
        check_text("x" * 11, "name", 10)
    assert info.value.field == "name"
    with pytest.raises(ValidationError, match="NUL") as info:
        check_text("a\x00b", "tz", 10)
    assert info.value.field == "tz"


def test_check_text_refuses_a_bidi_control_in_a_name_only():
    with pytest.raises(ValidationError, match="bidirectional control U\\+202E") as info:
        check_text("report\u202efdp.exe", "name", 200)
    assert info.value.field == "name"
    assert check_text("a\u2067b", "session", 200) == "a\u2067b"
    # Other control characters in a name are pictured in tables (core/text.clip).
    assert check_text("a\x1bb", "name", 200) == "a\x1bb"


@pytest.mark.parametrize(
    ("policies", "field"),
    [
        ({"max_runs": 0}, "max_runs"),
        ({"max_runs": MAX_RUNS + 1}, "max_runs"),
        ({"max_runs": 10**30}, "max_runs"),
        ({"jitter": -0.5}, "jitter"),
        ({"jitter": float(MAX_SECONDS) + 1}, "jitter"),
        ({"catchup_window": MAX_SECONDS * 2}, "catchup_window"),
    ],
)
def test_policy_bounds_name_the_policy_and_range(policies, field):
    with pytest.raises(ValidationError, match="must be from") as info:
        check_policy_bounds(policies)
    assert info.value.field == field


def test_policy_bounds_accept_the_ends_and_leave_types_to_policies():
    check_policy_bounds({"max_runs": 1, "jitter": 0, "catchup_window": MAX_SECONDS})
    check_policy_bounds({"max_runs": MAX_RUNS, "catchup_window": None, "jitter": "soon"})


def test_merge_patch_follows_rfc_7386():
    target = {"a": "b", "c": {"d": "e", "f": "g"}, "l": [1, 2]}
    patch = {"a": "z", "c": {"f": None}, "l": [3], "n": {"x": None, "y": 1}}
    merged = merge_patch(target, patch)
    assert merged == {"a": "z", "c": {"d": "e"}, "l": [3], "n": {"y": 1}}
    assert target == {"a": "b", "c": {"d": "e", "f": "g"}, "l": [1, 2]}  # unchanged
    assert merge_patch({"a": {"b": 1}}, {"a": 2}) == {"a": 2}
    assert merge_patch({"a": 2}, {"a": {"b": 1}}) == {"a": {"b": 1}}
    assert merge_patch({"a": 1}, {}) == {"a": 1}
