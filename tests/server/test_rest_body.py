"""server/body.py on its own: what a request body may be, and the field named when it is not."""

from __future__ import annotations

import json

import pytest

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.limits import MAX_BODY_BYTES, MAX_DEPTH, MAX_INTEGER_DIGITS
from jupyter_recall.server.body import decode_body, json_type


def refused(raw: bytes) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        decode_body(raw)
    return info.value


def test_an_empty_body_is_an_empty_object():
    assert decode_body(b"") == {}
    assert decode_body(b"  \n") == {}


def test_a_good_body_comes_back_as_it_was_sent():
    document = {"when": "in 1h", "name": "café ☕ 𝄞", "n": -3, "x": 1.5, "a": [None, True]}
    assert decode_body(json.dumps(document).encode()) == document
    assert decode_body(json.dumps(document, ensure_ascii=False).encode()) == document


@pytest.mark.parametrize(
    ("raw", "field", "says"),
    [
        (b"\xff\xfe{}", "body", "not UTF-8 text (byte 0)"),
        (b'{"a": "\xe9"}', "body", "byte 7"),
        (b"{", "body", "not valid JSON"),
        (b"[1]", "body", "got an array"),
        (b"null", "body", "got null"),
        (b'"text"', "body", "got a string"),
        (b'{"a": NaN}', "body", "NaN"),
        (b'{"a": Infinity}', "body", "Infinity"),
        (b'{"a": -1e400}', "body", "finite"),
        (b'{"a": "\\ud800"}', "a", "surrogate"),
        (b'{"\\udfff": 1}', "\udfff", "surrogate"),
        (b'{"a": [{"b": ["\\udbff"]}]}', "a[0].b[0]", "surrogate"),
        (b"[" * 5000 + b"]" * 5000, "body", "nested too deeply"),
        (b"\xef\xbb\xbf{}", "body", "Unexpected UTF-8 BOM"),
    ],
)
def test_bad_bodies_name_where(raw, field, says):
    error = refused(raw)
    assert error.field == field
    assert says in error.message


def test_escapes_and_many_shallow_brackets_are_walked_and_accepted():
    # Either one makes decode_body walk the document (a body without both is not walked).
    escaped = {"a": "café 𝄞", "b": [[]] * (MAX_DEPTH + 5)}
    raw = json.dumps(escaped).encode()
    assert b"\\u" in raw
    assert decode_body(raw) == escaped


def test_depth_counts_objects_and_arrays():
    at_limit = "[" * (MAX_DEPTH - 1) + "1" + "]" * (MAX_DEPTH - 1)
    assert decode_body(f'{{"a": {at_limit}}}'.encode())["a"]
    error = refused(f'{{"a": [{at_limit}]}}'.encode())
    assert error.field == "a" + "[0]" * (MAX_DEPTH - 1)
    assert str(MAX_DEPTH) in error.message


def test_integer_digits_are_bounded_on_the_text():
    longest = "9" * MAX_INTEGER_DIGITS
    assert decode_body(f'{{"n": -{longest}}}'.encode()) == {"n": -int(longest)}
    error = refused(f'{{"n": {longest}9}}'.encode())
    assert (error.field, f"at most {MAX_INTEGER_DIGITS} digits" in error.message) == ("body", True)
    # Past Python's own limit for int() of a string (4,300 digits): still a ValidationError.
    assert refused(b'{"n": ' + b"1" * 50_000 + b"}").field == "body"


def test_size_is_bounded_before_decoding():
    error = refused(b" " * (MAX_BODY_BYTES + 1))
    assert error.field == "body"
    assert f"{MAX_BODY_BYTES:,} bytes" in error.message


@pytest.mark.parametrize(
    ("value", "name"),
    [
        (None, "null"),
        (True, "a boolean"),
        (1, "a number"),
        (1.5, "a number"),
        ("", "a string"),
        ([], "an array"),
        ({}, "an object"),
    ],
)
def test_json_type_names(value, name):
    assert json_type(value) == name
