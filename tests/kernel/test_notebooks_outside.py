"""The example notebooks executed outside JupyterLab: by nbclient, `jupyter nbconvert --execute`
and papermill, in kernels they start themselves (not the server's).

With a server running (found in the runtime directory, or through $JUPYTER_RECALL_URL and
$JUPYTER_RECALL_TOKEN), a notebook that needs nothing of its kernel but a server runs to the end;
one whose jobs or recalls run in its own kernel stops in its first cell saying what to do. With no
server, every notebook stops in its first cell saying how to start one. (Inside a kernel the
server started, each notebook runs to the end: test_example_notebook.py and the *_notebook.py
tests.)
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from tests.kernel.test_example_notebook import NOTEBOOKS, errors_of
from tests.server.live_server import TOKEN

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

BIN = Path(sys.executable).parent
NBCONVERT = ("jupyter", "nbconvert", "--to", "notebook", "--execute")
NEED_THE_SERVERS_KERNEL = ("agent_recall", "watchers", "quickstart")
"""Their jobs, recalls or watched tools run in the notebook's own kernel."""
EVERY_NOTEBOOK = sorted(path.stem for path in NOTEBOOKS.glob("*.ipynb"))
NOT_THE_SERVERS = "this kernel was not started by the Jupyter server at"
NO_SERVER = "no Jupyter server found for this kernel"


def _environment(runtime: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER_RECALL_")}
    env.update(JUPYTER_RUNTIME_DIR=str(runtime), PATH=f"{BIN}{os.pathsep}{env['PATH']}", **extra)
    return env


def _copy(name: str, workdir: Path) -> Path:
    workdir.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy(NOTEBOOKS / f"{name}.ipynb", workdir / f"{name}.ipynb"))


def with_nbclient(
    name: str, workdir: Path, env: dict[str, str], monkeypatch
) -> nbformat.NotebookNode:
    return run_nbclient(_copy(name, workdir), env, monkeypatch)


def run_nbclient(source: Path, env: dict[str, str], monkeypatch) -> nbformat.NotebookNode:
    """nbclient in this process (its kernel inherits the environment given); it stops at the
    first cell that fails, as nbconvert and papermill do."""
    for key in [k for k in os.environ if k.startswith("JUPYTER_RECALL_")]:
        monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    nb = nbformat.read(source, as_version=4)
    client = NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(source.parent)}}
    )
    with contextlib.suppress(CellExecutionError):  # the notebook says where it stopped
        client.execute()
    return nb


def with_nbconvert(name: str, workdir: Path, env: dict[str, str]) -> tuple[int, str, Path]:
    """`jupyter nbconvert --execute`: its exit status, its stderr and the executed notebook."""
    source = _copy(name, workdir)
    done = subprocess.run(
        [*NBCONVERT, "--output", "executed.ipynb", str(source)],
        capture_output=True,
        text=True,
        env=env,
        cwd=workdir,
        timeout=300,
        check=False,
    )
    return done.returncode, done.stderr, workdir / "executed.ipynb"


def with_papermill(
    name: str, workdir: Path, env: dict[str, str]
) -> tuple[int, nbformat.NotebookNode]:
    """papermill: its exit status and the executed notebook (written even when a cell fails)."""
    source = _copy(name, workdir)
    done = subprocess.run(
        ["papermill", str(source), str(workdir / "executed.ipynb"), "--cwd", str(workdir)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    return done.returncode, nbformat.read(workdir / "executed.ipynb", as_version=4)


def stopped_at(nb: nbformat.NotebookNode) -> tuple[int, str]:
    """The index among code cells of the last cell executed, and what it wrote on stderr and
    as errors (IPython shows a UsageError as one stderr line, not as an error output)."""
    code_cells = [cell for cell in nb.cells if cell.cell_type == "code"]
    ran = [index for index, cell in enumerate(code_cells) if cell.get("execution_count")]
    last = ran[-1]
    text = "".join(
        output.get("text", "") if output.output_type == "stream" else output.get("evalue", "")
        for output in code_cells[last].outputs
        if output.get("name") == "stderr" or output.output_type == "error"
    )
    return last, text


def assert_stopped_in_the_first_cell(nb: nbformat.NotebookNode, *words: str) -> str:
    index, text = stopped_at(nb)
    assert index == 0, f"stopped at code cell {index}: {text}"
    assert "UsageError: jupyter_recall: " in text, text
    for word in words:
        assert word in text, text
    return text


# --- a server is running, found in the runtime directory ---------------------------------------


@pytest.mark.parametrize("name", NEED_THE_SERVERS_KERNEL)
def test_nbclient_stops_a_notebook_that_needs_the_servers_kernel(
    name, server, tmp_path, monkeypatch
):
    nb = with_nbclient(name, tmp_path, _environment(server.runtime), monkeypatch)
    error = assert_stopped_in_the_first_cell(nb, NOT_THE_SERVERS, server.url, "JupyterLab")
    assert "run it in a kernel the server starts" in error


def test_papermill_stops_a_notebook_that_needs_the_servers_kernel(server, tmp_path):
    code, nb = with_papermill("watchers", tmp_path, _environment(server.runtime))
    assert code != 0
    assert_stopped_in_the_first_cell(nb, NOT_THE_SERVERS)


def test_nbconvert_runs_a_notebook_that_needs_only_a_server(server, tmp_path):
    code, stderr, executed = with_nbconvert(
        "tools_parallel", tmp_path, _environment(server.runtime)
    )
    assert code == 0, stderr
    nb = nbformat.read(executed, as_version=4)
    assert errors_of(nb) == []
    first = next(cell for cell in nb.cells if cell.cell_type == "code")
    said = "".join(output.get("text", "") for output in first.outputs)
    assert NOT_THE_SERVERS in said, "the first cell says what this kernel can and cannot do"
    assert "fresh headless kernel by default" in said


def test_code_from_an_outside_kernel_runs_headless_and_recalls_are_refused(
    server, tmp_path, monkeypatch
):
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell("%load_ext jupyter_recall\nimport jupyter_recall"),
        nbformat.v4.new_code_cell("%schedule --name outside in 1h: print('x')"),
        nbformat.v4.new_code_cell(
            "for refused in (lambda: jupyter_recall.schedule('in 1h', 'x', target='kernel'),\n"
            "                lambda: jupyter_recall.recall('in 1h', 'check')):\n"
            "    try:\n        refused()\n"
            "    except jupyter_recall.ValidationError as error:\n        print(error)"
        ),
    ]
    nbformat.write(notebook, tmp_path / "outside.ipynb")
    try:
        nb = run_nbclient(tmp_path / "outside.ipynb", _environment(server.runtime), monkeypatch)
        assert errors_of(nb) == []
        (job,) = [job for job in server.jobs() if job["name"] == "outside"]
        assert job["target"] == {"type": "headless"}  # the server's default kernel spec
        code, recall = nb.cells[2].outputs[0]["text"].splitlines()
        assert code.startswith(f"target: {NOT_THE_SERVERS}")
        assert "cannot run code in it" in code
        assert "give target='headless' to run the code in a fresh kernel" in code
        assert "cannot run recalls in it" in recall
        assert "run the code in a fresh kernel" not in recall
        assert server.jobs(kind="recall") == []
    finally:
        server.delete_all_jobs()


# --- a server named by $JUPYTER_RECALL_URL and $JUPYTER_RECALL_TOKEN ---------------------------


def test_papermill_with_the_server_in_the_environment(server, tmp_path):
    empty = tmp_path / "runtime"
    empty.mkdir()
    env = _environment(empty, JUPYTER_RECALL_URL=server.url + "/", JUPYTER_RECALL_TOKEN=TOKEN)
    code, nb = with_papermill("tools_parallel", tmp_path / "work", env)
    assert code == 0
    assert errors_of(nb) == []


# --- no server at all ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", EVERY_NOTEBOOK)
def test_without_a_server_every_notebook_stops_in_its_first_cell(name, tmp_path, monkeypatch):
    empty = tmp_path / "runtime"
    empty.mkdir()
    nb = with_nbclient(name, tmp_path / "work", _environment(empty), monkeypatch)
    assert_stopped_in_the_first_cell(nb, NO_SERVER, str(empty), "Start one", "papermill")


def test_nbconvert_without_a_server_fails_with_the_message(tmp_path):
    empty = tmp_path / "runtime"
    empty.mkdir()
    code, stderr, _ = with_nbconvert("tools_parallel", tmp_path / "work", _environment(empty))
    assert code != 0
    assert f"jupyter_recall: {NO_SERVER}" in stderr
    assert "UsageError" in stderr
