"""notebooks/agent_recall.ipynb runs top to bottom in a kernel started by the live server.

The kernel is the server's own (a notebook session), so recalls fire in it exactly as they would
for a user in JupyterLab; nbclient drives it through a client of ours, never through its own
kernel setup.
"""

from __future__ import annotations

import asyncio
import re
import shutil
from pathlib import Path

import nbformat
from jupyter_client.asynchronous import AsyncKernelClient
from nbclient import NotebookClient

from tests.kernel.conftest import HEARTBEAT_PATIENCE

NOTEBOOKS = Path(__file__).parents[2] / "notebooks"
NOTEBOOK = NOTEBOOKS / "agent_recall.ipynb"
ON_TIME = 2.0
"""Seconds after it was due within which the quick start's job must have run (it fires within
milliseconds; the rest is slack for a loaded machine)."""


async def execute(nb: nbformat.NotebookNode, connection_file: Path) -> None:
    client = AsyncKernelClient()
    client.load_connection_file(str(connection_file))
    client.hb_channel.time_to_dead = HEARTBEAT_PATIENCE
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=60)
        runner = NotebookClient(nb, timeout=120, kernel_name="python3")
        runner.kc = client
        runner.reset_execution_trackers()
        for index, cell in enumerate(nb.cells):
            await runner.async_execute_cell(
                cell, index, execution_count=runner.code_cells_executed + 1
            )
    finally:
        client.stop_channels()


def outputs_text(nb: nbformat.NotebookNode) -> str:
    """The outputs' text, consecutive chunks of one stream joined as a frontend shows them.

    One ``print`` is several writes, and the kernel's output thread may flush between two of
    them: "succeeded built" can arrive as the stream messages "succeeded" and " built".
    """
    parts = []
    for cell in nb.cells:
        stream = None
        for output in cell.get("outputs", []):
            if output.output_type != "stream":
                stream = None
                parts.append(output.get("data", {}).get("text/plain", ""))
            elif output.name == stream:
                parts[-1] += output.text
            else:
                stream = output.name
                parts.append(output.text)
    return "\n".join(parts)


def run_notebook(server, path: Path) -> nbformat.NotebookNode:
    """Execute a copy of the notebook in a kernel of its own session on the server."""
    shutil.copy(path, server.root / path.name)
    session = server.request(
        "POST",
        "/api/sessions",
        {"path": path.name, "type": "notebook", "kernel": {"name": "python3"}},
    )
    try:
        connection_file = server.runtime / f"kernel-{session['kernel']['id']}.json"
        server.wait_for(connection_file.exists, timeout=30)
        nb = nbformat.read(path, as_version=4)
        asyncio.run(execute(nb, connection_file))
    finally:
        server.request("DELETE", f"/api/sessions/{session['id']}")
        server.delete_all_jobs()
    return nb


def errors_of(nb: nbformat.NotebookNode) -> list[dict]:
    return [o for cell in nb.cells for o in cell.get("outputs", []) if o.output_type == "error"]


def test_quickstart_notebook_runs(server):
    nb = run_notebook(server, NOTEBOOKS / "quickstart.ipynb")
    assert errors_of(nb) == []
    text = outputs_text(nb)
    assert "('succeeded', 'x is 41\\n')" in text, "the Python API's job ran in this kernel"
    assert "hourly check: 41" in text, "run_now of the recurring job ran the cell body"
    assert "paused job " in text, "the magic paused it"
    assert "resumed job " in text, "the magic resumed it"
    assert "(('succeeded', 'False\\n'), 'succeeded')" in text, "a fresh kernel, a notification"
    assert "succeeded True\n" in text, "the tool job listed the folder with the report"
    assert "report for the quick start" in text, "the notebook job ran with its parameters"
    assert "[recall] executed copy: quickstart_report.recall-" in text
    assert "('timed_out', 'timed_out: still running after its limit of 2 s')" in text
    assert "paused after 2 consecutive failed occurrences" in text
    assert "RuntimeError: the disk is full" in text
    assert "([(1, 'failed'), (2, 'failed'), (3, 'succeeded')], 1)" in text, "three attempts"
    assert "('kept', 1, 'run_count unchanged', True)" in text
    assert "publish | after " in text
    assert " finishes | [('succeeded', 'published')]" in text, "the chain ran to its last step"
    assert "cannot parse 'next blue moon'" in text, "the parse error lists what is accepted"
    # Its last cell deletes its jobs, so a second run of it finds none of the first's.
    assert [job["name"] for job in server.jobs() if "quickstart" in job["session"]] == []
    # ... and the report it wrote, with the executed copies of its runs.
    assert sorted(path.name for path in server.root.glob("quickstart_report*")) == []
    # The main claim: the job's code ran in this kernel on time, while a cell kept it busy.
    claim = re.search(r"ran (-?\d+\.\d+) s later, (\w+) the busy cell", text)
    assert claim is not None, text
    assert claim[2] == "during", claim[0]
    assert 0 <= float(claim[1]) < ON_TIME, claim[0]


def test_agent_recall_notebook_runs(server):
    nb = run_notebook(server, NOTEBOOK)
    text = outputs_text(nb)
    assert "agent: I will look at it in the background" in text
    assert "agent: The build finished: compiling... / linking... / done" in text
    assert "already has a pending recall" in text
    assert "'field': 'call_type'" in text
    assert "<table" in str(nb.cells[-1].outputs[0]["data"]["text/html"])
    assert errors_of(nb) == []
