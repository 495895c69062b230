"""The built wheel, installed as a user would (a fresh venv, dependencies from the package index),
on a PATH without node: the prebuilt JupyterLab extension is listed enabled and OK, and the
server extension is enabled. Skipped only until scripts/setup has built the lab extension."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILT = REPO / "jupyter_recall" / "labextension"
SHARED = "share/jupyter/labextensions/jupyter-recall/"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(900),
    pytest.mark.skipif(
        not (BUILT / "package.json").exists(),
        reason="the lab extension is not built (scripts/setup builds it when node is present)",
    ),
]


def plain(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def build_wheel(out: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(REPO)],
        check=True,
        timeout=300,
    )
    (wheel,) = out.glob("jupyter_recall-*.whl")
    return wheel


def nodeless_env(prefix: Path, home: Path) -> dict[str, str]:
    """Only the venv's scripts on PATH (Debian's /usr/bin has node), and no Jupyter paths, user
    directories or Python paths of this session leaking in."""
    leaks = ("JUPYTER", "PYTHON", "VIRTUAL_ENV")
    env = {name: value for name, value in os.environ.items() if not name.startswith(leaks)}
    env.update(PATH=str(prefix / "bin"), HOME=str(home), VIRTUAL_ENV=str(prefix))
    return env


def run(command: list[str], env: dict[str, str], timeout: float = 120) -> str:
    # Run from the user's home: from the checkout, `python -c` would import its sources.
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env=env,
        cwd=env["HOME"],
        timeout=timeout,
        check=False,
    )
    output = plain(result.stdout + result.stderr)
    assert result.returncode == 0, output
    return output


def test_the_wheel_installed_without_node_lists_both_extensions_enabled_and_ok(tmp_path):
    wheel = build_wheel(tmp_path / "dist")
    with zipfile.ZipFile(wheel) as archive:
        shipped = {name.split(".data/data/", 1)[-1] for name in archive.namelist()}
    for name in ("package.json", "install.json", "static/style.js"):
        assert SHARED + name in shipped, sorted(shipped)
    assert any(re.fullmatch(SHARED + r"static/remoteEntry\.\w+\.js", n) for n in shipped)

    prefix, home = tmp_path / "fresh", tmp_path / "home"
    home.mkdir()
    venv.EnvBuilder(with_pip=True).create(prefix)
    env = nodeless_env(prefix, home)
    python = str(prefix / "bin" / "python")
    run([python, "-m", "pip", "install", "--quiet", str(wheel), "jupyterlab>=4"], env, 800)

    assert shutil.which("node", path=env["PATH"]) is None
    probe = "import shutil, jupyter_recall; print(shutil.which('node'), jupyter_recall.__file__)"
    node, module = run([python, "-c", probe], env).split()
    assert node == "None"
    # The wheel's copy, not the editable checkout this suite runs from.
    assert Path(module).is_relative_to(prefix), module

    labextensions = run([str(prefix / "bin" / "jupyter"), "labextension", "list"], env)
    assert str(prefix / "share/jupyter/labextensions") in labextensions, labextensions
    assert re.search(
        r"jupyter-recall v\S+ enabled\s+OK \(python, jupyter_recall\)", labextensions
    ), labextensions

    server = run([str(prefix / "bin" / "jupyter"), "server", "extension", "list"], env)
    assert re.search(r"jupyter_recall\s+enabled", server), server
    assert re.search(r"jupyter_recall [\d.]+\s+OK", server), server
