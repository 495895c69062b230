"""Every module of the package is named in ``docs/architecture.md``, so the map cannot drift.

A module is named by its path in the package (``store/rows.py``), or, inside the section of its
layer (``### store``), by its path in that layer (``rows.py``, ``executors/live.py``). Package
markers (``__init__.py``) and ``_version.py`` need no entry.
"""

from __future__ import annotations

import re
from pathlib import Path

import jupyter_recall

PACKAGE = Path(jupyter_recall.__file__).parent
ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"
EXEMPT = {"__init__.py", "_version.py"}


def sections(text: str) -> dict[str, str]:
    """The text under each ``### <layer>`` heading, by the heading's first word."""
    parts = re.split(r"^(#{2,3} .*)$", text, flags=re.MULTILINE)
    found: dict[str, str] = {}
    for heading, body in zip(parts[1::2], parts[2::2], strict=True):
        if heading.startswith("### "):
            found[heading[4:].split()[0]] = body
    return found


def names(text: str, path: str) -> bool:
    return re.search(rf"(?<![\w/.]){re.escape(path)}(?![\w/])", text) is not None


def unnamed_modules(package: Path, doc: str) -> list[str]:
    by_layer = sections(doc)
    missing = []
    for module in sorted(package.rglob("*.py")):
        relative = module.relative_to(package)
        if module.name in EXEMPT or "labextension" in relative.parts:
            continue
        path = relative.as_posix()
        layer, _, inside = path.partition("/")
        if names(doc, path) or (inside and names(by_layer.get(layer, ""), inside)):
            continue
        missing.append(path)
    return missing


def test_every_module_is_named_in_the_architecture_page() -> None:
    missing = unnamed_modules(PACKAGE, ARCHITECTURE.read_text())
    assert not missing, (
        "docs/architecture.md names no module "
        + ", ".join(missing)
        + ": name each by its path (`store/rows.py`), or by its path in its layer in that "
        "layer's section (`rows.py` under `### store`), with what it is for"
    )


def test_a_module_named_only_in_another_layer_or_as_its_directory_is_unnamed(
    tmp_path: Path,
) -> None:
    for path in ("core/cron.py", "core/errors.py", "core/triggers/cron.py", "server/errors.py"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("")
    (tmp_path / "core" / "__init__.py").write_text("")
    doc = "### core\n`cron.py`, `triggers/`\n### server (REST)\n`errors.py`\n## Runtime\n"
    assert unnamed_modules(tmp_path, doc) == ["core/errors.py", "core/triggers/cron.py"]
    assert unnamed_modules(tmp_path, doc + "`core/triggers/cron.py`") == ["core/errors.py"]
