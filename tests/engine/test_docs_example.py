"""docs/engine.md's first example runs as written (it is the page's way in): its imports, its
records and its calls are the engine's."""

from __future__ import annotations

import asyncio
import re
import textwrap
from pathlib import Path

import pytest

ENGINE_MD = Path(__file__).resolve().parents[2] / "docs" / "engine.md"


def first_example() -> str:
    match = re.search(r"```python\n(.*?)```", ENGINE_MD.read_text(encoding="utf-8"), re.S)
    assert match is not None
    return match.group(1)


def test_the_first_example_of_engine_md_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    imports, body = [], []
    for line in first_example().splitlines():
        (imports if line.startswith(("from ", "import ")) else body).append(line)
    # Its `async with` is top-level as in a notebook cell: run inside a coroutine here.
    source = "\n".join(imports) + "\nasync def main():\n" + textwrap.indent("\n".join(body), "    ")
    namespace: dict[str, object] = {}
    exec(compile(source, str(ENGINE_MD), "exec"), namespace)
    main = namespace["main"]
    assert callable(main)
    monkeypatch.chdir(tmp_path)  # its store file, jobs.sqlite, lands here
    asyncio.run(main())
    printed = capsys.readouterr().out
    assert printed.endswith("every day at 09:00 (Europe/Paris)\n"), printed
    assert (tmp_path / "jobs.sqlite").exists()
