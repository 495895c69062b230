"""From a clean clone to a fresh venv without node, as a user gets the package.

A `git clone` of this repository's committed HEAD; `pip wheel` builds a wheel from the clone
(hatch-jupyter-builder runs jlpm in labextension/, as JupyterLab's extension template does);
`python -m build` then makes the sdist of the same clone and builds a wheel from that sdist. Both
wheels hold the same files, the lab extension with its install.json and settings schemas
among them. The wheel from the sdist, installed into a fresh venv (dependencies from the package
index) and run on a PATH without node, lists the lab extension enabled and OK and the server
extension enabled. jlpm reuses yarn's global mirror (~/.yarn/berry/cache), pip its own cache.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import venv
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = "share/jupyter/labextensions/jupyter-recall/"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


@dataclass(frozen=True)
class Dists:
    clone: Path
    wheel_from_clone: Path
    sdist: Path
    wheel_from_sdist: Path


def plain(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def run(command: list[str], cwd: Path, timeout: float, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=timeout,
        check=False,
    )
    output = plain(result.stdout + result.stderr)
    assert result.returncode == 0, f"{command} failed:\n{output[-6000:]}"
    return output


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> Dists:
    assert shutil.which("node"), "building the wheel needs node: the hook builds labextension/"
    base = tmp_path_factory.mktemp("packaging")
    clone = base / "clone"
    run(["git", "clone", "--quiet", str(REPO), str(clone)], base, 120)
    # The wheel first: it leaves node_modules, lib and the build in the clone, which the sdist
    # built next must leave out.
    pip_wheel = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", "from-clone"]
    run([*pip_wheel, str(clone)], base, 300)
    run([sys.executable, "-m", "build", "--outdir", str(base / "dist"), str(clone)], base, 400)
    return Dists(
        clone=clone,
        wheel_from_clone=one(base / "from-clone", "*.whl"),
        sdist=one(base / "dist", "*.tar.gz"),
        wheel_from_sdist=one(base / "dist", "*.whl"),
    )


def one(directory: Path, pattern: str) -> Path:
    (path,) = directory.glob(pattern)
    return path


def wheel_names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return {name.split(".data/data/", 1)[-1] for name in archive.namelist()}


def without_hashes(names: set[str]) -> set[str]:
    """The bundles' names without their content hash: webpack hashes the federation container
    (remoteEntry) and, seen in CI, some chunks with the absolute build path in, so those names
    change with the directory built in. Chunk ids, bundle names and every other file remain."""
    hashed = r"(/static/[\w-]+)\.[0-9a-f]{20}(\.js(?:\.map)?)$"
    return {re.sub(hashed, r"\1\2", name) for name in names}


def sdist_names(sdist: Path) -> set[str]:
    with tarfile.open(sdist) as archive:
        return {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}


def schemas(clone: Path) -> list[Path]:
    """The settings schemas (labextension/package.json's jupyterlab.schemaDir)."""
    labextension = clone / "labextension"
    package = json.loads((labextension / "package.json").read_text())
    found = sorted((labextension / package["jupyterlab"]["schemaDir"]).glob("*.json"))
    assert found, "labextension/package.json names a schemaDir without schemas"
    return found


def test_the_sdist_has_the_lab_extension_sources_and_nothing_jlpm_made(dists: Dists) -> None:
    names = sdist_names(dists.sdist)
    sources = ["package.json", "yarn.lock", ".yarnrc.yml", "install.json", "tsconfig.json"]
    sources += ["src/index.ts", "style/index.css"]
    sources += [str(p.relative_to(dists.clone / "labextension")) for p in schemas(dists.clone)]
    missing = [name for name in sources if "labextension/" + name not in names]
    assert not missing, sorted(names)
    made = ("labextension/node_modules/", "labextension/lib/", "labextension/.yarn/")
    made += ("jupyter_recall/labextension/",)
    # They are in the clone (the wheel built there), so leaving them out is the sdist's doing.
    assert all((dists.clone / prefix).is_dir() for prefix in made)
    assert not [name for name in names if name.startswith(made)], sorted(names)


def test_the_wheels_from_the_clone_and_from_the_sdist_hold_the_same_lab_extension(
    dists: Dists,
) -> None:
    from_clone = wheel_names(dists.wheel_from_clone)
    from_sdist = wheel_names(dists.wheel_from_sdist)
    # Same files, chunk for chunk (their hashes aside: see without_hashes).
    same = without_hashes(from_clone) == without_hashes(from_sdist)
    assert same, sorted(from_clone ^ from_sdist)
    expected = [SHARED + name for name in ("package.json", "install.json", "static/style.js")]
    expected += [SHARED + "schemas/jupyter-recall/" + p.name for p in schemas(dists.clone)]
    missing = [name for name in expected if name not in from_sdist]
    assert not missing, sorted(from_sdist)
    assert any(re.fullmatch(SHARED + r"static/remoteEntry\.\w+\.js", n) for n in from_sdist)
    # Only in the data directory: the package itself holds no copy of the build.
    assert not [n for n in from_sdist if n.startswith("jupyter_recall/labextension")]


def nodeless_env(prefix: Path, home: Path) -> dict[str, str]:
    """Only the venv's scripts on PATH (Debian's /usr/bin has node), and no Jupyter paths, user
    directories or Python paths of this session leaking in."""
    leaks = ("JUPYTER", "PYTHON", "VIRTUAL_ENV")
    env = {name: value for name, value in os.environ.items() if not name.startswith(leaks)}
    env.update(PATH=str(prefix / "bin"), HOME=str(home), VIRTUAL_ENV=str(prefix))
    return env


def test_the_wheel_installed_without_node_lists_both_extensions_enabled_and_ok(
    dists: Dists, tmp_path: Path
) -> None:
    prefix, home = tmp_path / "fresh", tmp_path / "home"
    home.mkdir()
    venv.EnvBuilder(with_pip=True).create(prefix)
    env = nodeless_env(prefix, home)
    python, jupyter = str(prefix / "bin" / "python"), str(prefix / "bin" / "jupyter")
    # pip's cache stays the user's: HOME is only the fresh Jupyter user's.
    env["PIP_CACHE_DIR"] = str(Path.home() / ".cache" / "pip")
    install = [python, "-m", "pip", "install", "--quiet", str(dists.wheel_from_sdist)]
    run([*install, "jupyterlab>=4"], home, 400, env)

    assert shutil.which("node", path=env["PATH"]) is None
    # From the user's home: from the clone, `python -c` would import its sources.
    probe = "import shutil, jupyter_recall; print(shutil.which('node'), jupyter_recall.__file__)"
    node, module = run([python, "-c", probe], home, 60, env).split()
    assert node == "None"
    assert Path(module).is_relative_to(prefix), module

    labextensions = run([jupyter, "labextension", "list"], home, 120, env)
    assert str(prefix / "share/jupyter/labextensions") in labextensions, labextensions
    assert re.search(
        r"jupyter-recall v\S+ enabled\s+OK \(python, jupyter_recall\)", labextensions
    ), labextensions

    server = run([jupyter, "server", "extension", "list"], home, 120, env)
    assert re.search(r"jupyter_recall\s+enabled", server), server
    assert re.search(r"jupyter_recall [\d.]+\s+OK", server), server
