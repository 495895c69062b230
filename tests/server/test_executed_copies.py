"""A notebook run's executed copy lives as long as its run: retention and the job's deletion
take it, with its checkpoints (a real server, real kernels, the server's contents manager)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat

from tests.server.rest import call
from tests.server.test_live_jobs import finished


async def eventually(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "not in time"
        await asyncio.sleep(0.05)


def files(root: Path) -> list[str]:
    return sorted(str(path.relative_to(root)) for path in root.rglob("*") if path.is_file())


async def test_executed_copies_go_with_their_runs(jp_fetch: Any, jp_serverapp: Any) -> None:
    root = Path(jp_serverapp.root_dir)
    (root / "reports").mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("print('report')")]
    nbformat.write(nb, root / "reports" / "daily.ipynb")
    body = {
        "when": "every day at 06:00",
        "action": {"type": "notebook", "path": "reports/daily.ipynb"},
        "policies": {"keep_runs": 1},
    }
    job = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201)
    run_ids = []
    for _ in range(3):
        run = await call(jp_fetch, "POST", f"api/recall/jobs/{job['id']}/trigger", expect=201)
        assert (await finished(jp_fetch, run["id"], timeout=90))["status"] == "succeeded"
        run_ids.append(run["id"])
    copies = [f"reports/daily.recall-{run_id}.ipynb" for run_id in run_ids]
    # The contents manager made a checkpoint of each copy when it was saved.
    checkpoints = [
        f"reports/.ipynb_checkpoints/daily.recall-{run_id}-checkpoint.ipynb" for run_id in run_ids
    ]
    assert files(root) == sorted(["reports/daily.ipynb", *copies, *checkpoints])

    pruned = await call(jp_fetch, "POST", "api/recall/runs/prune", {})
    assert pruned["jobs"] == {job["id"]: 2}, pruned
    kept = sorted(["reports/daily.ipynb", copies[2], checkpoints[2]])
    await eventually(lambda: files(root) == kept)

    await call(jp_fetch, "DELETE", f"api/recall/jobs/{job['id']}", expect=204)
    await eventually(lambda: files(root) == ["reports/daily.ipynb"])
