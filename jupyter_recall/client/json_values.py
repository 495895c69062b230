"""The check that a value a client sends is JSON, naming where it is not (``params.url``,
``actions[2]``), before ``json.dumps`` fails with a bare ``TypeError`` naming no field."""

from __future__ import annotations

from jupyter_recall.core.errors import ValidationError

JSON_KINDS = "strings, numbers, booleans, null, lists and objects"
"""What a JSON value is made of, as the errors say it."""

_SCALARS = (str, int, float, type(None))
"""What ``json.dumps`` writes as it is (``bool`` is an ``int``)."""


def check_json(value: object, field: str) -> None:
    """Refuse a ``value`` that ``json.dumps`` cannot write, naming the path inside it
    (``field.key``, ``field[0]``) of the first thing that is no JSON (a set, bytes, an object)
    or that contains itself. Keys are strings (or numbers, booleans, null, which JSON writes
    as strings)."""
    _check(value, field, set())


def _check(value: object, path: str, within: set[int]) -> None:
    if isinstance(value, _SCALARS):
        return
    if isinstance(value, dict):
        children = [(_key_path(path, key), item) for key, item in value.items()]
    elif isinstance(value, (list, tuple)):
        children = [(f"{path}[{index}]", item) for index, item in enumerate(value)]
    else:
        raise ValidationError(path, f"must be JSON ({JSON_KINDS}), got {type(value).__name__}")
    if id(value) in within:
        raise ValidationError(path, f"must be JSON ({JSON_KINDS}), and it contains itself")
    within.add(id(value))
    for child_path, child in children:
        _check(child, child_path, within)
    within.discard(id(value))


def _key_path(path: str, key: object) -> str:
    if not isinstance(key, _SCALARS):
        raise ValidationError(
            path, f"must be a JSON object: its keys are strings, got a {type(key).__name__} key"
        )
    return f"{path}.{key}"
