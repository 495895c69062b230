import dataclasses

import pytest

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.records import (
    SERVER_TARGET,
    CodeAction,
    HeadlessTarget,
    InstructionAction,
    JobOptions,
    KernelTarget,
    NotebookAction,
    NotificationAction,
    ToolAction,
    action_from_json,
    check_fits,
    check_options_fit,
    target_from_json,
    target_from_stored,
)


@pytest.mark.parametrize(
    ("payload", "record"),
    [
        ({"type": "code", "code": "x = 1"}, CodeAction("x = 1")),
        (
            {"type": "instruction", "instruction": "look", "comment": "why"},
            InstructionAction("look", comment="why"),
        ),
        (
            {"type": "tool", "name": "http.get", "params": {"url": "u"}},
            ToolAction("http.get", {"url": "u"}),
        ),
        ({"type": "notebook", "path": "/a/b.ipynb"}, NotebookAction("/a/b.ipynb")),
        (
            {"type": "notification", "message": "m", "channel": "log", "priority": "high"},
            NotificationAction("m", channel="log", priority="high"),
        ),
    ],
)
def test_actions_parse_to_their_record_and_back(payload, record):
    parsed = action_from_json(payload)
    assert parsed == record
    assert type(parsed) is type(record)
    assert action_from_json(parsed.to_json()) == parsed
    assert parsed.to_json()["type"] == payload["type"] == parsed.type


def test_records_are_frozen_and_copy_their_mappings():
    params = {"url": "u"}
    tool = action_from_json({"type": "tool", "name": "http.get", "params": params})
    params["url"] = "changed"
    assert isinstance(tool, ToolAction)
    assert tool.params == {"url": "u"}
    attribute = "name"
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(tool, attribute, "other.name")


def test_targets_parse_to_their_record_and_back():
    kernel = target_from_json({"type": "kernel", "path": "/nb.ipynb"})
    assert kernel == KernelTarget(path="/nb.ipynb")
    assert (kernel.relative_path, kernel.label) == ("nb.ipynb", "/nb.ipynb")
    assert target_from_json({"type": "headless"}) == HeadlessTarget(kernel_name=None)
    assert HeadlessTarget().to_json() == {"type": "headless"}
    assert target_from_json({"type": "server"}) is SERVER_TARGET
    assert target_from_stored({"type": "server", "extra": 1}) is SERVER_TARGET
    with pytest.raises(ValidationError, match="unknown field") as unknown:
        target_from_json({"type": "server", "extra": 1})
    assert (unknown.value.field, unknown.value.accepted) == ("target.extra", ("type",))
    for record in (kernel, HeadlessTarget("ir", cwd="d"), SERVER_TARGET):
        assert target_from_json(record.to_json()) == record


def test_options_keep_every_value_and_type_the_executors_ones():
    submitted = {"exclusive": True, "exclusive_timeout": 5, "watcher": {"tool": "a.b"}}
    options = JobOptions.from_json(submitted)
    assert (options.exclusive, options.exclusive_timeout, options.on_missing_kernel) == (
        True,
        5.0,
        "fail",
    )
    assert options.to_json() == submitted
    assert JobOptions.from_json({}) == JobOptions()
    with pytest.raises(ValidationError) as info:
        JobOptions.from_json({"on_missing_kernel": "later"})
    assert info.value.field == "options.on_missing_kernel"
    assert "start, skip, fail" in str(info.value)


def test_combinations_that_cannot_run_name_the_target_type():
    with pytest.raises(ValidationError) as info:
        check_fits(CodeAction("x"), SERVER_TARGET)
    assert info.value.field == "target.type"
    with pytest.raises(ValidationError, match="fresh kernel"):
        check_fits(NotebookAction("a.ipynb"), KernelTarget(kernel_id="k"))
    check_fits(NotebookAction("a.ipynb"), SERVER_TARGET)


FULL_ACTIONS = [
    {"type": "code", "code": "x"},
    {"type": "instruction", "instruction": "look", "comment": "why"},
    {"type": "tool", "name": "http.get", "params": {"url": "u"}},
    {"type": "notebook", "path": "a.ipynb", "parameters": {"n": 1}},
    {"type": "notification", "message": "m", "title": "t", "channel": "log", "priority": "low"},
]


@pytest.mark.parametrize("payload", FULL_ACTIONS, ids=lambda payload: payload["type"])
def test_an_actions_unknown_field_is_refused_and_what_it_writes_reads_back(payload):
    # The stores decode actions with action_from_json: every field to_json writes is accepted.
    record = action_from_json(payload)
    assert record.to_json() == payload
    assert action_from_json(record.to_json()) == record
    with pytest.raises(ValidationError) as info:
        action_from_json({**payload, "zzz": 1})
    assert info.value.field == "action.zzz"
    assert list(info.value.accepted or ()) == list(payload)


def test_a_notification_is_checked_at_creation_not_when_a_stored_one_is_decoded():
    stored = {"type": "notification", "message": "m", "priority": "urgent"}
    legacy = action_from_json(stored)  # a job an older release accepted still lists
    with pytest.raises(ValidationError) as info:
        check_fits(legacy, SERVER_TARGET)
    assert (info.value.field, info.value.accepted) == (
        "action.priority",
        ("low", "normal", "high", "critical"),
    )
    for field, limit in (("message", 10_000), ("title", 200)):
        action = action_from_json({"type": "notification", "message": "m", field: "x" * limit})
        check_fits(action, SERVER_TARGET)
        action = dataclasses.replace(action, **{field: "x" * (limit + 1)})
        with pytest.raises(ValidationError, match=f"longer than {limit}") as info:
            check_fits(action, SERVER_TARGET)
        assert info.value.field == f"action.{field}"


def test_the_notifiers_options_are_checked_at_creation_not_when_decoded():
    for key, value in (("output_channel", 5), ("output_channel", " "), ("output_config", "zz")):
        stored = JobOptions.from_json({key: value})  # an older release's job still lists
        with pytest.raises(ValidationError) as info:
            check_options_fit(stored, SERVER_TARGET)
        assert info.value.field == f"options.{key}"
    kept = {"output_channel": "ops", "output_config": {"url": "u"}, "output_chanel": 1}
    check_options_fit(JobOptions.from_json(kept), SERVER_TARGET)
    check_options_fit(JobOptions.from_json({"output_channel": None}), SERVER_TARGET)


@pytest.mark.parametrize(
    ("written", "stored"),
    [
        ("nb.ipynb", "nb.ipynb"),
        ("./sub/nb.ipynb", "sub/nb.ipynb"),
        ("sub//nb.ipynb", "sub/nb.ipynb"),
        ("sub/./other/../nb.ipynb", "sub/nb.ipynb"),
        ("/nb.ipynb", "/nb.ipynb"),
        ("//sub/nb.ipynb", "/sub/nb.ipynb"),
    ],
)
def test_a_notebook_path_is_stored_in_the_sessions_form(written: str, stored: str) -> None:
    assert target_from_json({"type": "kernel", "path": written}) == KernelTarget(path=stored)
    action = action_from_json({"type": "notebook", "path": written})
    assert action.to_json()["path"] == stored


@pytest.mark.parametrize(
    "outside", ["..", "../nb.ipynb", "sub/../../nb.ipynb", "/../nb.ipynb", "."]
)
def test_a_path_that_leaves_the_root_is_refused(outside: str) -> None:
    with pytest.raises(ValidationError, match="under the server's root directory") as refused:
        target_from_json({"type": "kernel", "path": outside})
    assert refused.value.field == "target.path"
    with pytest.raises(ValidationError) as refused:
        target_from_json({"type": "headless", "cwd": outside})
    assert refused.value.field == "target.cwd"


@pytest.mark.parametrize(
    ("action", "target", "field"),
    [
        (CodeAction("1"), KernelTarget(path="a\x00b.ipynb"), "target.path"),
        (CodeAction("1"), KernelTarget(path="\ud800.ipynb"), "target.path"),
        (CodeAction("1"), HeadlessTarget("python3", cwd="sub\x00"), "target.cwd"),
        (NotebookAction("a\x00.ipynb"), HeadlessTarget(), "action.path"),
    ],
)
def test_a_path_no_file_can_have_does_not_fit(action, target, field):
    with pytest.raises(ValidationError) as info:
        check_fits(action, target)
    assert info.value.field == field


def test_a_stored_target_with_such_a_path_still_lists():
    # Stored before creation refused it: decoded as it is, refused when run or changed.
    target = target_from_stored({"type": "kernel", "path": "a\x00b.ipynb"})
    assert target == KernelTarget(path="a\x00b.ipynb")
    assert action_from_json({"type": "notebook", "path": "n\x00.ipynb"}).headline == "n.ipynb"


@pytest.mark.parametrize(
    ("action", "headline"),
    [
        (CodeAction("\x00"), ""),
        (CodeAction("\n\x00\n  x\t= 1\u202e  \nrest"), "x = 1"),
        (InstructionAction("\u2066look\u2069 up"), "look up"),
        (ToolAction("http.get"), "http.get"),
        (NotificationAction("\x1b[2Jfake"), "[2Jfake"),
    ],
)
def test_a_default_name_is_a_line_without_control_or_bidi_characters(action, headline):
    assert action.headline == headline
