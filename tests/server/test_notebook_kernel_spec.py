"""A notebook action runs in the notebook's own kernel spec unless its target names one."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest

from tests.server.rest import call
from tests.server.test_live_jobs import finished, first_run

SPEC = "other-python"


@pytest.fixture
def other_spec(jp_data_dir: Path) -> str:
    """A second Python kernel spec, told apart by the variable its kernels get."""
    spec_dir = jp_data_dir / "kernels" / SPEC
    spec_dir.mkdir(parents=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Other Python",
        "language": "python",
        "env": {"RECALL_TEST_SPEC": SPEC},
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    return SPEC


def spec_notebook(root_dir: str, name: str, kernel_name: str) -> str:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": kernel_name, "display_name": kernel_name}
    nb.cells = [nbformat.v4.new_code_cell("import os\nprint(os.environ.get('RECALL_TEST_SPEC'))")]
    nbformat.write(nb, Path(root_dir) / name)
    return name


async def run_notebook(jp_fetch: Any, path: str, target: dict[str, str]) -> dict[str, Any]:
    body = {"when": "now", "action": {"type": "notebook", "path": path}, "target": target}
    job = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201)
    assert job["target"] == target  # nothing filled in for the notebook
    run = await finished(jp_fetch, (await first_run(jp_fetch, job["id"]))["id"], timeout=90)
    assert run["status"] == "succeeded", run
    return run


@pytest.mark.parametrize("target", [{"type": "headless"}, {"type": "server"}])
async def test_a_notebook_runs_in_its_own_kernel_spec(
    jp_fetch: Any, jp_serverapp: Any, other_spec: str, target: dict[str, str]
) -> None:
    path = spec_notebook(jp_serverapp.root_dir, "own.ipynb", other_spec)
    run = await run_notebook(jp_fetch, path, target)
    assert f"(1 cells)\n{other_spec}\n[recall]" in run["output"], run


async def test_a_kernel_name_in_the_target_comes_before_the_notebooks(
    jp_fetch: Any, jp_serverapp: Any, other_spec: str
) -> None:
    path = spec_notebook(jp_serverapp.root_dir, "told.ipynb", other_spec)
    run = await run_notebook(jp_fetch, path, {"type": "headless", "kernel_name": "python3"})
    assert "(1 cells)\nNone\n[recall]" in run["output"], run


async def test_code_without_a_kernel_name_runs_in_the_servers_default_kernel_spec(
    jp_fetch: Any, jp_serverapp: Any, other_spec: str
) -> None:
    jp_serverapp.kernel_manager.default_kernel_name = other_spec
    body = {
        "when": "now",
        "action": {"type": "code", "code": "import os\nprint(os.environ.get('RECALL_TEST_SPEC'))"},
        "target": {"type": "headless"},
    }
    job = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201)
    run = await finished(jp_fetch, (await first_run(jp_fetch, job["id"]))["id"], timeout=90)
    assert (run["status"], run["output"]) == ("succeeded", f"{other_spec}\n"), run


async def test_a_notebook_whose_kernel_spec_is_missing_fails_its_run_naming_it(
    jp_fetch: Any, jp_serverapp: Any
) -> None:
    path = spec_notebook(jp_serverapp.root_dir, "gone.ipynb", "no-such-spec")
    target = {"type": "headless"}
    body = {"when": "now", "action": {"type": "notebook", "path": path}, "target": target}
    job = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201)
    run = await finished(jp_fetch, (await first_run(jp_fetch, job["id"]))["id"], timeout=90)
    assert (run["status"], run["error"]) == (
        "failed",
        "the notebook's kernelspec: this server has no kernel spec named 'no-such-spec'; its "
        "kernel specs: echo, python3; give target.kernel_name to run it in another",
    ), run
    # No kernel started, no cell ran: no executed copy.
    assert "executed copy" not in run["output"], run
    assert sorted(p.name for p in Path(jp_serverapp.root_dir).iterdir()) == ["gone.ipynb"]


async def test_code_whose_kernel_spec_was_removed_fails_its_run_naming_it(
    jp_fetch: Any, jp_serverapp: Any, other_spec: str, jp_data_dir: Path
) -> None:
    body = {
        "when": "in 1 hour",
        "action": {"type": "code", "code": "1"},
        "target": {"type": "headless", "kernel_name": other_spec},
    }
    job = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201)
    (jp_data_dir / "kernels" / other_spec / "kernel.json").unlink()
    (jp_data_dir / "kernels" / other_spec).rmdir()
    await call(jp_fetch, "POST", f"api/recall/jobs/{job['id']}/trigger", expect=201)
    run = await finished(jp_fetch, (await first_run(jp_fetch, job["id"]))["id"], timeout=90)
    assert (run["status"], run["error"]) == (
        "failed",
        f"target.kernel_name: this server has no kernel spec named {other_spec!r}; its kernel "
        "specs: echo, python3",
    ), run
