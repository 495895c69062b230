"""Fuzzed threshold expressions: any text either parses into the safe grammar or is refused with
a ValidationError naming it, and nothing is ever compiled, executed, imported or opened."""

from __future__ import annotations

import ast
import sys
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_recall.core import expr
from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.expr import parse_expression

SETTINGS = settings(max_examples=300, deadline=None)

# --- an audit hook that records code execution while a parse is under way ----------------------

WATCHED_EVENTS = {
    "exec",
    "compile",
    "import",
    "open",
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "subprocess.Popen",
    "ctypes.dlopen",
    "builtins.input",
    "socket.connect",
}


AUDITING: list[bool] = [False]
AUDITED: list[str] = []


def _hook(event: str, args: Any) -> None:
    if AUDITING[0] and event in WATCHED_EVENTS:
        AUDITED.append(event)


sys.addaudithook(_hook)


def parse_audited(text: str) -> expr.Expression | ValidationError:
    AUDITED.clear()
    AUDITING[0] = True
    try:
        return parse_expression(text)
    except ValidationError as error:
        return error
    finally:
        AUDITING[0] = False
        assert not AUDITED, f"parsing {text!r} raised audit events {AUDITED}"


def check_outcome(text: str, outcome: expr.Expression | ValidationError) -> None:
    if isinstance(outcome, ValidationError):
        assert outcome.field == "expression"
        if text.strip() and len(text) <= expr.MAX_LENGTH:
            assert repr(text) in str(outcome)
        return
    assert isinstance(outcome.condition, (expr.Compare, expr.Not, expr.And, expr.Or))
    for sample in JSON_SAMPLES:
        assert isinstance(outcome.holds(sample), bool)
    assert parse_expression(str(outcome)).condition == outcome.condition


JSON_SAMPLES: list[Any] = [
    None,
    0,
    "text",
    [1, "a", None],
    {"a": 1, "b": {"c": [True, 2.5, "x"]}, "status_code": 500, "0": "zero"},
]

# --- random text -------------------------------------------------------------------------------

GRAMMAR_PIECES = [
    "result",
    ".",
    "a",
    "b",
    "0",
    "12",
    "-3.5e2",
    "==",
    "!=",
    ">",
    "<",
    ">=",
    "<=",
    "=",
    "!",
    "and",
    "or",
    "not",
    "null",
    "true",
    "false",
    "(",
    ")",
    "'q'",
    '"dq"',
    "'",
    '"',
    "\\",
    " ",
    "__import__",
    "os",
    "[",
    "]",
    ",",
    "lambda",
    ":",
]


@SETTINGS
@given(st.text(max_size=80))
def test_arbitrary_text_parses_or_is_refused(text):
    check_outcome(text, parse_audited(text))


@SETTINGS
@given(st.lists(st.sampled_from(GRAMMAR_PIECES), max_size=25).map("".join))
def test_near_grammar_text_parses_or_is_refused(text):
    check_outcome(text, parse_audited(text))


@SETTINGS
@given(st.lists(st.sampled_from(GRAMMAR_PIECES), max_size=25).map(" ".join))
def test_near_grammar_words_parse_or_are_refused(text):
    check_outcome(text, parse_audited(text))


# --- random Python ASTs rendered as text ---------------------------------------------------------

NAMES = st.sampled_from(
    ["result", "os", "__import__", "eval", "open", "x", "__builtins__", "__class__"]
)
CONSTANTS = st.one_of(
    st.integers(-1000, 1000),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
    st.sampled_from([None, True, False]),
)


LOAD = st.just(ast.Load())
NO_ARGUMENTS = st.builds(
    ast.arguments,
    posonlyargs=st.just([]),
    args=st.just([]),
    kwonlyargs=st.just([]),
    kw_defaults=st.just([]),
    defaults=st.just([]),
)


def _python_nodes(children: st.SearchStrategy[ast.expr]) -> st.SearchStrategy[ast.expr]:
    comparisons = st.sampled_from([ast.Eq(), ast.NotEq(), ast.Lt(), ast.Gt(), ast.In(), ast.Is()])
    pairs = st.lists(children, min_size=1, max_size=1)
    return st.one_of(
        st.builds(ast.Attribute, value=children, attr=NAMES, ctx=LOAD),
        st.builds(
            ast.Call, func=children, args=st.lists(children, max_size=2), keywords=st.just([])
        ),
        st.builds(ast.Subscript, value=children, slice=children, ctx=LOAD),
        st.builds(
            ast.Compare,
            left=children,
            ops=st.lists(comparisons, min_size=1, max_size=1),
            comparators=pairs,
        ),
        st.builds(
            ast.BoolOp,
            op=st.sampled_from([ast.And(), ast.Or()]),
            values=st.lists(children, min_size=2, max_size=3),
        ),
        st.builds(
            ast.UnaryOp, op=st.sampled_from([ast.Not(), ast.USub(), ast.Invert()]), operand=children
        ),
        st.builds(
            ast.BinOp, left=children, op=st.sampled_from([ast.Add(), ast.Pow()]), right=children
        ),
        st.builds(ast.List, elts=st.lists(children, max_size=2), ctx=LOAD),
        st.builds(ast.Lambda, args=NO_ARGUMENTS, body=children),
    )


PYTHON_EXPRESSIONS = st.recursive(
    st.one_of(
        st.builds(ast.Name, id=NAMES, ctx=st.just(ast.Load())),
        st.builds(ast.Constant, value=CONSTANTS),
    ),
    _python_nodes,
    max_leaves=12,
).map(lambda node: ast.unparse(ast.fix_missing_locations(node)))


@SETTINGS
@given(PYTHON_EXPRESSIONS)
def test_python_expressions_parse_or_are_refused(text):
    check_outcome(text, parse_audited(text))


def test_code_that_would_leave_a_trace_does_not(tmp_path):
    marker = tmp_path / "executed"
    attempts = [
        f"__import__('os').system('touch {marker}')",
        f"result.a == open('{marker}', 'w')",
        f"result.a == 1 or __import__('pathlib').Path('{marker}').touch()",
        f"result.a == exec(\"open('{marker}', 'w')\")",
    ]
    for text in attempts:
        outcome = parse_audited(text)
        assert isinstance(outcome, ValidationError)
    assert not marker.exists()


# --- random trees of the grammar -----------------------------------------------------------------

SEGMENTS = st.lists(
    st.one_of(st.sampled_from(["a", "b", "c", "status_code", "_x1"]), st.integers(0, 3)),
    max_size=4,
)
OPERANDS = st.one_of(
    st.builds(expr.Path, SEGMENTS.map(tuple)),
    st.builds(
        expr.Literal,
        st.one_of(
            st.integers(-(10**6), 10**6),
            st.floats(allow_nan=False, allow_infinity=False, width=32),
            st.text(max_size=10),
            st.sampled_from([None, True, False]),
        ),
    ),
)
COMPARISONS = st.builds(expr.Compare, st.sampled_from(expr.OPERATORS), OPERANDS, OPERANDS)
CONDITIONS = st.recursive(
    COMPARISONS,
    lambda children: st.one_of(
        st.builds(expr.Not, children),
        st.builds(expr.And, st.lists(children, min_size=2, max_size=3).map(tuple)),
        st.builds(expr.Or, st.lists(children, min_size=2, max_size=3).map(tuple)),
    ),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(CONDITIONS)
def test_rendered_trees_parse_back_to_themselves(condition):
    text = str(condition)
    if len(text) > expr.MAX_LENGTH:
        return
    parsed = parse_audited(text)
    assert not isinstance(parsed, ValidationError), parsed
    assert parsed.condition == condition
    for sample in JSON_SAMPLES:
        assert parsed.holds(sample) is condition.holds(sample)
