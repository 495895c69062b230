"""Every exception of the package is defined in the one exceptions module, ``core/errors.py``."""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

import jupyter_recall

PACKAGE = Path(jupyter_recall.__file__).parent
ERRORS = PACKAGE / "core" / "errors.py"
BUILTIN_EXCEPTIONS = {
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
}


def base_names(node: ast.ClassDef) -> set[str]:
    names = set()
    for base in node.bases:
        if isinstance(base, ast.Name):
            names.add(base.id)
        elif isinstance(base, ast.Attribute):
            names.add(base.attr)
    return names


def classes_by_module() -> dict[Path, list[ast.ClassDef]]:
    return {
        path: [
            node for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.ClassDef)
        ]
        for path in sorted(PACKAGE.rglob("*.py"))
    }


def exception_classes() -> dict[str, Path]:
    """Classes deriving, by name, from a built-in exception or from one of ours."""
    classes = classes_by_module()
    known = set(BUILTIN_EXCEPTIONS)
    found: dict[str, Path] = {}
    grew = True
    while grew:
        grew = False
        for path, nodes in classes.items():
            for node in nodes:
                if node.name not in found and base_names(node) & known:
                    found[node.name] = path
                    known.add(node.name)
                    grew = True
    return found


def test_every_exception_is_defined_in_core_errors() -> None:
    found = exception_classes()
    elsewhere = sorted(
        f"{name} in {path.relative_to(PACKAGE)}" for name, path in found.items() if path != ERRORS
    )
    assert elsewhere == []
    assert {"RecallError", "ValidationError", "KernelGone", "UsageError"} <= set(found)


def test_every_exception_but_control_flow_derives_from_recall_error() -> None:
    from jupyter_recall.core import errors

    outside = [
        name
        for name, value in vars(errors).items()
        if isinstance(value, type)
        and issubclass(value, BaseException)
        and value.__module__ == errors.__name__
        and not issubclass(value, errors.RecallError)
    ]
    assert outside == ["PromptExpired"]
