"""Imports point one way: between the package's layers, and between the kernel's subpackages.

Every import is read from the source (the AST), those inside functions included, so a cycle
cannot hide behind an import made on first call.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import jupyter_recall

PACKAGE = Path(jupyter_recall.__file__).parent

KERNEL_ORDER = (
    "connection",
    "jobs",
    "widgets",
    "calls",
    "heartbeat",
    "watchers",
    "magics",
    "agent",
    "extension",
)
"""The kernel's subpackages, lowest first: each imports only those before it."""


def imported(path: Path) -> Iterator[str]:
    """Every module an import statement of ``path`` names (``from a import b`` names ``a``
    and ``a.b``: ``b`` may be a module)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)


def modules(folder: str) -> list[Path]:
    return sorted((PACKAGE / folder).rglob("*.py"))


def kernel_part(module: str) -> str | None:
    """The kernel subpackage (or top module) a dotted name lies in."""
    parts = module.split(".")
    if parts[:2] != ["jupyter_recall", "kernel"] or len(parts) < 3:
        return None
    return parts[2] if parts[2] in KERNEL_ORDER else None


def upward_kernel_imports() -> list[str]:
    found = []
    for path in modules("kernel"):
        relative = path.relative_to(PACKAGE / "kernel").with_suffix("").parts
        if relative == ("__init__",):
            continue
        mine = KERNEL_ORDER.index(relative[0])
        for module in imported(path):
            other = kernel_part(module)
            if other is not None and KERNEL_ORDER.index(other) > mine:
                found.append(f"{path.relative_to(PACKAGE)} imports {module}")
    return found


def test_the_kernel_subpackages_import_downward_only() -> None:
    assert not upward_kernel_imports()


def test_every_kernel_module_lies_in_a_known_subpackage() -> None:
    parts = {
        path.relative_to(PACKAGE / "kernel").with_suffix("").parts[0] for path in modules("kernel")
    }
    assert parts - {"__init__"} == set(KERNEL_ORDER)


def test_an_upward_import_inside_a_function_is_found(tmp_path: Path) -> None:
    source = tmp_path / "jobs.py"
    source.write_text("def f():\n    from jupyter_recall.kernel.magics import jobs\n")
    assert [kernel_part(module) for module in imported(source)] == ["magics", "magics"]


OUTER = {
    "core": ("store", "engine", "tools", "server", "kernel", "client", "cli", "mcp", "standalone"),
    "client": ("kernel", "cli", "mcp", "server", "standalone", "store", "engine", "tools"),
    "cli": ("kernel",),
    "mcp": ("kernel", "cli"),
}
"""For a layer, the layers none of its modules may import."""


def forbidden_imports(layer: str, outer: tuple[str, ...]) -> list[str]:
    prefixes = tuple(f"jupyter_recall.{name}" for name in outer)
    return [
        f"{path.relative_to(PACKAGE)} imports {module}"
        for path in modules(layer)
        for module in imported(path)
        if module in prefixes or module.startswith(tuple(f"{p}." for p in prefixes))
    ]


def test_each_layer_imports_no_outer_layer() -> None:
    found = [line for layer, outer in OUTER.items() for line in forbidden_imports(layer, outer)]
    assert not found


def test_a_cli_module_importing_the_kernel_is_found(tmp_path: Path) -> None:
    source = tmp_path / "render.py"
    source.write_text("import jupyter_recall.kernel.jobs.api\nfrom jupyter_recall import kernel\n")
    names = list(imported(source))
    assert "jupyter_recall.kernel.jobs.api" in names
    assert "jupyter_recall.kernel" in names
