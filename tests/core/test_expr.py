"""Threshold expressions: what the grammar accepts, how conditions evaluate, how errors read."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from jupyter_recall.core import expr
from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.expr import parse_expression

HTTP = {"status_code": 503, "body": "down", "headers": {"x-ok": "no"}}
PROGRESS = {"data": {"progress": 100, "stage": "done"}, "items": [{"name": "a"}, {"name": "b"}]}


@pytest.mark.parametrize(
    ("text", "result", "expected"),
    [
        ("result.status_code != 200", HTTP, True),
        ("result.status_code == 503", HTTP, True),
        ("result.status_code >= 500", HTTP, True),
        ("result.status_code < 500", HTTP, False),
        ("result.status_code <= 503", HTTP, True),
        ("result.status_code > 503", HTTP, False),
        ("result.body == 'down'", HTTP, True),
        ('result.body == "down"', HTTP, True),
        ("result.headers.x-ok == 'no'", HTTP, None),
        ("result.data.progress >= 100", PROGRESS, True),
        ("result.data.stage == 'done' and result.data.progress == 100", PROGRESS, True),
        ("result.data.stage == 'busy' or result.data.progress == 100", PROGRESS, True),
        ("not result.data.progress == 100", PROGRESS, False),
        ("not (result.data.progress < 50 or result.data.stage != 'done')", PROGRESS, True),
        ("result.items.1.name == 'b'", PROGRESS, True),
        ("result.items.7.name == null", PROGRESS, True),
        ("result.missing == null", PROGRESS, True),
        ("result.missing != null", PROGRESS, False),
        ("result.data.missing.deeper == null", PROGRESS, True),
        ("result.data.progress == 100.0", PROGRESS, True),
        ("result.data.progress > -1.5e2", PROGRESS, True),
        ("result.data.progress == result.data.progress", PROGRESS, True),
        ("result == null", None, True),
        ("result > 3", 4, True),
        ("result == 'text'", "text", True),
    ],
)
def test_conditions_evaluate_on_json_results(text, result, expected):
    if expected is None:
        with pytest.raises(ValidationError):
            parse_expression(text)
        return
    assert parse_expression(text).holds(result) is expected


@pytest.mark.parametrize(
    ("text", "result", "expected"),
    [
        # JSON booleans are not numbers, unlike Python's.
        ("result.flag == 1", {"flag": True}, False),
        ("result.flag == true", {"flag": True}, True),
        ("result.flag != false", {"flag": True}, True),
        ("result.count == 0", {"count": False}, False),
        # Orderings across kinds are false, never an error.
        ("result.count > 3", {"count": "10"}, False),
        ("result.count < 3", {"count": None}, False),
        ("result.count >= 3", {}, False),
        ("result.name > 'a'", {"name": "b"}, True),
        ("result.list == 3", {"list": [1, 2, 3]}, False),
        # A string is not a list to index into.
        ("result.name.0 == 'a'", {"name": "abc"}, False),
        ("result.1 == 'x'", {"1": "x"}, True),
    ],
)
def test_json_semantics(text, result, expected):
    assert parse_expression(text).holds(result) is expected


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("result.a==1", "result.a == 1"),
        ("  result.a   !=  'x' ", 'result.a != "x"'),
        ("result.a == 1 and (result.b == 2 or result.c == 3)", None),
        ("not not result.a == null", None),
        ("result.a == true or result.b == false", None),
        ("result.items.0.name == 'it''s'", None),
    ],
)
def test_canonical_text_reparses_to_the_same_tree(text, canonical):
    try:
        parsed = parse_expression(text)
    except ValidationError:
        assert canonical is None
        return
    if canonical is not None:
        assert str(parsed) == canonical
    assert parse_expression(str(parsed)).condition == parsed.condition


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "must not be empty"),
        ("   ", "must not be empty"),
        ("result.a", "expected an operator"),
        ("result.a = 1", "unexpected character '='"),
        ("result.a == ", "expected a path"),
        ("status == 200", "paths start with 'result'"),
        ("result.a == None", "paths start with 'result'"),
        ("result.a == 'open", "unterminated string"),
        ("result.a == '\\x41'", "unknown escape"),
        ("result.a == 1 result.b == 2", "expected and, or or the end"),
        ("(result.a == 1", "expected ')'"),
        ("result.a == 1)", "expected and, or or the end"),
        ("result. == 1", "expected a key name or a list index"),
        ("result.a == 1e999", "too large"),
        ("__import__('os').system('true')", "paths start with 'result'"),
        ("result.__class__ == 1 and eval('1')", "paths start with 'result'"),
        ("result.a == [1]", "unexpected character '['"),
        ("result.a + 1 == 2", "unexpected character '+'"),
        ("lambda: 1", "paths start with 'result'"),
        ("(" * 40 + "result.a == 1" + ")" * 40, "nested deeper than 32 levels"),
        ("result.a == 1 and " * 100 + "result.a == 1", "longer than 1000 characters"),
    ],
)
def test_errors_name_the_field_the_expression_and_the_accepted_forms(text, reason):
    with pytest.raises(ValidationError) as caught:
        parse_expression(text, field="notify_config.expression")
    error = caught.value
    assert error.field == "notify_config.expression"
    assert reason in str(error)
    if text.strip() and len(text) <= expr.MAX_LENGTH:
        assert repr(text) in str(error)
    assert any("== != > < >= <=" in form for form in error.accepted)


def test_non_string_expressions_are_refused():
    with pytest.raises(ValidationError, match="must be a string"):
        parse_expression(42)


def test_error_position_points_at_the_fault():
    with pytest.raises(ValidationError, match="at position 12"):
        parse_expression("result.a == ~1")


def test_the_module_never_reaches_for_a_python_evaluator():
    source = Path(expr.__file__).read_text()
    tree = ast.parse(source)
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    # re.compile builds our own token patterns; it is not a Python code compiler.
    attributes = {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and not (isinstance(node.value, ast.Name) and node.value.id == "re")
    }
    imported = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    }
    forbidden = {"eval", "exec", "compile", "literal_eval", "__import__", "getattr"}
    assert not forbidden & (names | attributes | imported)
    assert "ast" not in imported
