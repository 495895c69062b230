"""``dict[str, Any]`` only for what is free-form by nature: records are typed (frozen
dataclasses, ``TypedDict`` documents, unions of them; issue #18).

Each file of the package that still writes ``dict[str, Any]`` is listed below with how many
times and why its mappings are free-form. Counted from the source: a new one in a file not
listed, or one more in a listed file, fails; so does a listed file that has none left (lower
its count, or drop it, when a mapping becomes a record).
"""

from __future__ import annotations

from pathlib import Path

import jupyter_recall

PACKAGE = Path(jupyter_recall.__file__).parent
FREE_FORM = "dict[str, Any]"
TOOL_PARAMS = "a tool's params: free-form, each tool checks its own"

ALLOWED: dict[str, tuple[int, str]] = {
    "client/documents.py": (
        8,
        "what users write in a document: tool params, notebook parameters, job options (an "
        "open object in openapi.yaml), a notification's structured data",
    ),
    "client/toolspec.py": (1, "ToolArguments.mapping: a JSON object argument (params, settings)"),
    "core/documents.py": (1, "a notification's structured data: the sender's own"),
    "core/escalation.py": (1, "a check's view for threshold expressions: the tool's data keys"),
    "core/records.py": (
        6,
        "tool params and notebook parameters (record and JSON), optional_object's free-form "
        "object, job options kept as given",
    ),
    "engine/notify.py": (1, "a notification's structured data"),
    "kernel/agent/answers.py": (1, TOOL_PARAMS + " (a background task's)"),
    "kernel/calls/primitives.py": (3, TOOL_PARAMS + " (merged from keywords, a background call)"),
    "kernel/connection/notifications.py": (1, "a notification's structured data"),
    "kernel/magics/parallel.py": (1, TOOL_PARAMS),
    "kernel/magics/watch.py": (2, TOOL_PARAMS + " (a watcher's, parsed from the magic's words)"),
    "kernel/widgets/base.py": (2, "ipywidgets' widget state, as ipywidgets returns it"),
    "server/body.py": (3, "a request body's raw JSON before its record parses it"),
    "server/executors/gateway_channels.py": (
        1,
        "jupyter_server's GatewayClient connection args: keyword arguments of tornado's "
        "HTTPRequest from an untyped method",
    ),
    "server/executors/instruction.py": (1, "job options kept as given"),
    "server/executors/iopub.py": (
        3,
        "jupyter_client's messages (Session.msg, deserialize type them dict[str, Any]) and a "
        "request's content, which each msg_type defines",
    ),
    "server/executors/notebook.py": (
        3,
        "notebook parameters, and nbformat's notebook JSON for its untyped from_dict",
    ),
    "server/handlers.py": (2, "a request body's raw JSON before its record parses it"),
    "server/serialize.py": (1, "job options kept as given (an open object in openapi.yaml)"),
    "server/watcher_runtime.py": (1, TOOL_PARAMS),
    "server/watchers.py": (1, TOOL_PARAMS),
    "store/codec.py": (3, "a stored payload's raw JSON before its record parses it"),
    "store/export_lines.py": (
        2,
        "an export line's raw JSON, and a row of any table as column -> value",
    ),
    "tools/approval.py": (2, TOOL_PARAMS + " (of the call waiting for approval)"),
    "tools/background.py": (3, TOOL_PARAMS + " (of a background task)"),
    "tools/parallel.py": (1, TOOL_PARAMS),
    "tools/registry.py": (3, TOOL_PARAMS),
}


def occurrences(package: Path) -> dict[str, int]:
    """How many times each module of ``package`` writes ``dict[str, Any]``, by its path."""
    found = {}
    for module in sorted(package.rglob("*.py")):
        count = module.read_text(encoding="utf-8").count(FREE_FORM)
        if count:
            found[module.relative_to(package).as_posix()] = count
    return found


def departures(found: dict[str, int], allowed: dict[str, tuple[int, str]]) -> list[str]:
    """What differs from the allow-list: unlisted files, more than listed, stale entries."""
    problems = []
    for path, count in found.items():
        if path not in allowed:
            problems.append(f"{path}: {count} {FREE_FORM} in a file not listed (type it)")
        elif count > allowed[path][0]:
            problems.append(f"{path}: {count} {FREE_FORM}, {allowed[path][0]} allowed")
    problems += [f"{path}: listed, none left" for path in allowed if path not in found]
    return problems


def test_dict_str_any_is_left_only_where_free_form() -> None:
    assert departures(occurrences(PACKAGE), ALLOWED) == []


def test_the_package_keeps_fewer_than_60() -> None:
    assert sum(count for count, _ in ALLOWED.values()) < 60
    assert sum(occurrences(PACKAGE).values()) < 60


def test_every_file_listed_says_why() -> None:
    assert all(count > 0 and reason.strip() for count, reason in ALLOWED.values())


def test_a_new_one_in_a_file_not_listed_fails(tmp_path: Path) -> None:
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "model.py").write_text("Job = dict[str, Any]\n")
    (tmp_path / "core" / "records.py").write_text("x: dict[str, Any]\ny: dict[str, Any]\n")
    allowed = {"core/records.py": (1, "why"), "core/gone.py": (1, "why")}
    assert departures(occurrences(tmp_path), allowed) == [
        f"core/model.py: 1 {FREE_FORM} in a file not listed (type it)",
        f"core/records.py: 2 {FREE_FORM}, 1 allowed",
        "core/gone.py: listed, none left",
    ]
