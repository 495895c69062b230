import pytest

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.payloads import (
    check_action_fits_target,
    validate_action,
    validate_options,
    validate_target,
)


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
    assert validate_action(payload) == expected


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
        validate_action(payload)
    assert info.value.field == field
    assert fragment in str(info.value)


def test_targets():
    assert validate_target({"type": "kernel", "path": "nb.ipynb"}) == {
        "type": "kernel",
        "path": "nb.ipynb",
    }
    assert validate_target({"type": "headless"}) == {"type": "headless", "kernel_name": "python3"}
    assert validate_target({"type": "server", "extra": 1}) == {"type": "server"}
    with pytest.raises(ValidationError, match=r"'path' .* or 'kernel_id'"):
        validate_target({"type": "kernel"})
    with pytest.raises(ValidationError, match="accepted: kernel, headless, server") as info:
        validate_target({"type": "cloud"})
    assert info.value.field == "target.type"


def test_action_target_combinations():
    server = validate_target({"type": "server"})
    with pytest.raises(ValidationError, match="runs in a kernel"):
        check_action_fits_target(validate_action({"type": "code", "code": "1"}), server)
    kernel = validate_target({"type": "kernel", "kernel_id": "k"})
    with pytest.raises(ValidationError, match="fresh kernel"):
        check_action_fits_target(validate_action({"type": "notebook", "path": "n.ipynb"}), kernel)
    check_action_fits_target(validate_action({"type": "notification", "message": "m"}), server)


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"exclusive": "yes"}, "options.exclusive"),
        ({"exclusive_timeout": 0}, "options.exclusive_timeout"),
        ({"exclusive_timeout": True}, "options.exclusive_timeout"),
        ({"on_missing_kernel": "retry"}, "options.on_missing_kernel"),
    ],
)
def test_invalid_options(options, field):
    with pytest.raises(ValidationError) as info:
        validate_options(options)
    assert info.value.field == field


def test_valid_options_pass_through():
    options = {"exclusive": True, "on_missing_kernel": "start", "output_channel": "log"}
    assert validate_options(options) == options
