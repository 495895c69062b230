"""Notebook actions: execute a whole ``.ipynb`` headless with parameters, keep the executed copy.

Parameters are injected papermill-style: a cell tagged ``injected-parameters`` right after the
cell tagged ``parameters`` (or first, if there is none), so the notebook's own defaults are
overridden. The executed copy is saved next to the notebook as ``<name>.recall-<run id>.ipynb``,
also when a cell fails, so the failure can be read in context. It lives as long as its run: when
the run is deleted (retention, or its job deleted), ``ExecutedCopies`` deletes it.
"""

from __future__ import annotations

import asyncio
import logging
import posixpath
from collections.abc import Callable
from typing import Any

import anyio
import anyio.lowlevel
import nbformat
from jupyter_client.kernelspec import NoSuchKernel
from jupyter_core.utils import ensure_async
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, DeadKernelError
from nbformat import NotebookNode

from jupyter_recall.core.errors import KernelGone
from jupyter_recall.core.model import Run
from jupyter_recall.engine.executors import OutputSink, RunOutcome
from jupyter_recall.engine.retention import DeletedRuns
from jupyter_recall.server.executors.context import ServerManagers
from jupyter_recall.server.executors.fresh import FreshKernels
from jupyter_recall.server.executors.iopub import ErrorContent, error_summary, strip_ansi
from jupyter_recall.server.executors.payloads import (
    HeadlessTarget,
    NotebookAction,
    resolve_under,
)

log = logging.getLogger(__name__)

# nbformat is untyped; these aliases give its two constructors the types they have.
_new_code_cell: Callable[..., NotebookNode] = nbformat.v4.new_code_cell
_notebook_from_dict: Callable[[dict[str, Any]], NotebookNode] = nbformat.from_dict

PARAMETERS_TAG = "parameters"
INJECTED_TAG = "injected-parameters"


def parameters_source(parameters: dict[str, Any]) -> str:
    """Python assignments for JSON values (their ``repr`` is a valid Python literal)."""
    lines = ["# Parameters injected by jupyter_recall"]
    lines += [f"{name} = {value!r}" for name, value in parameters.items()]
    return "\n".join(lines)


def inject_parameters(nb: NotebookNode, parameters: dict[str, Any]) -> None:
    """Insert the injected-parameters cell; a no-op without parameters."""
    if not parameters:
        return
    cell = _new_code_cell(source=parameters_source(parameters))
    cell.metadata["tags"] = [INJECTED_TAG]
    position = 0
    for index, existing in enumerate(nb.cells):
        if PARAMETERS_TAG in existing.get("metadata", {}).get("tags", []):
            position = index + 1
            break
    nb.cells.insert(position, cell)


def executed_copy_path(path: str, run_id: str) -> str:
    """``dir/nb.ipynb`` -> ``dir/nb.recall-<run id>.ipynb``."""
    stem = path[: -len(".ipynb")] if path.endswith(".ipynb") else path
    return f"{stem}.recall-{run_id}.ipynb"


def outputs_text(cell: NotebookNode) -> str:
    """The text of a cell's outputs, as they would read in a terminal."""
    parts: list[str] = []
    for out in cell.get("outputs", []):
        kind = out.get("output_type")
        if kind == "stream":
            parts.append(str(out.get("text", "")))
        elif kind in ("execute_result", "display_data"):
            text = out.get("data", {}).get("text/plain")
            if text:
                parts.append(f"{text}\n")
        elif kind == "error":
            parts.append("\n".join(strip_ansi(line) for line in out.get("traceback", [])) + "\n")
    return "".join(parts)


async def _load(managers: ServerManagers, path: str) -> NotebookNode:
    model = await ensure_async(managers.contents_manager.get(path, content=True, type="notebook"))
    return _notebook_from_dict(model["content"])


async def _save(managers: ServerManagers, nb: NotebookNode, path: str) -> None:
    model = {"type": "notebook", "format": "json", "content": nb}
    await ensure_async(managers.contents_manager.save(model, path))


def _kernel_name(nb: NotebookNode, target: HeadlessTarget) -> str | None:
    if target.kernel_name:
        return target.kernel_name
    name = nb.metadata.get("kernelspec", {}).get("name")
    return str(name) if name else None


class ExecutedCopies:
    """Deletes the executed copies of notebook runs deleted from the store, through the
    contents manager (which takes their checkpoints too, and follows its ``delete_to_trash``)."""

    def __init__(self, managers: ServerManagers) -> None:
        self._managers = managers
        self._deleting: set[asyncio.Task[None]] = set()

    def runs_deleted(self, deleted: DeletedRuns) -> None:
        """A listener of ``Scheduler.on_runs_deleted``."""
        action = deleted.job.action
        if not isinstance(action, NotebookAction):
            return
        paths = [executed_copy_path(action.path, run_id) for run_id in deleted.run_ids]
        task = asyncio.ensure_future(self._delete(paths))
        self._deleting.add(task)
        task.add_done_callback(self._deleting.discard)

    async def _delete(self, paths: list[str]) -> None:
        contents = self._managers.contents_manager
        for path in paths:
            try:
                # A run that started no kernel left no copy; the user may have removed one.
                if await ensure_async(contents.file_exists(path)):
                    await ensure_async(contents.delete(path))
            except Exception as error:
                log.warning("jupyter_recall: could not delete executed copy %s: %s", path, error)

    async def aclose(self) -> None:
        """Wait for the deletions under way."""
        await asyncio.gather(*self._deleting, return_exceptions=True)


async def run_notebook(
    managers: ServerManagers,
    action: NotebookAction,
    target: HeadlessTarget,
    run: Run,
    output: OutputSink,
    *,
    fresh: FreshKernels,
    variables: dict[str, str],
    startup_timeout: float,
) -> RunOutcome:
    try:
        nb = await _load(managers, action.path)
    except Exception as unreadable:
        return RunOutcome(error=f"action.path: cannot read notebook {action.path!r}: {unreadable}")
    inject_parameters(nb, action.parameters)
    copy_path = executed_copy_path(action.path, run.id)
    cwd = resolve_under(
        managers.root_dir, target.cwd or posixpath.dirname(action.path), "target.cwd"
    )
    output.write(f"[recall] executing {action.path} ({len(nb.cells)} cells)\n")
    kernel_name = _kernel_name(nb, target)
    error: str | None = None
    started = False
    try:
        async with fresh.kernel(
            kernel_name, cwd=cwd, variables=variables, startup_timeout=startup_timeout
        ) as kernel:
            started = True
            error = await _execute_cells(
                nb, kernel.manager, output, startup_timeout=startup_timeout
            )
    except NoSuchKernel as missing:
        where = "target.kernel_name" if target.kernel_name else "the notebook's kernelspec"
        fix = "" if target.kernel_name else "; give target.kernel_name to run it in another"
        error = await no_such_spec(managers, missing.name, where) + fix
    except TimeoutError:
        error = f"headless kernel did not start within {startup_timeout:g} s"
    except KernelGone as gone:
        error = str(gone)
    except anyio.get_cancelled_exc_class():
        if started:
            output.write("[recall] run stopped: its headless kernel is shut down\n")
        raise
    finally:
        # Saved also when the run fails or is stopped: the partial outputs show where it was.
        # Not when no kernel started: no cell ran.
        if started:
            with anyio.CancelScope(shield=True):
                await _save(managers, nb, copy_path)
            output.write(f"[recall] executed copy: {copy_path}\n")
    return RunOutcome(error=error)


async def no_such_spec(managers: ServerManagers, name: str, where: str) -> str:
    """The error of a run whose kernel spec is not (or no longer) on the server, naming where
    the name came from and the specs there are."""
    try:
        specs = await ensure_async(managers.kernel_spec_manager.get_all_specs())
        there = f"; its kernel specs: {', '.join(sorted(specs))}"
    except Exception:  # a gateway that does not answer: the name is what matters
        there = ""
    return f"{where}: this server has no kernel spec named {name!r}{there}"


async def _execute_cells(
    nb: NotebookNode, manager: Any, output: OutputSink, *, startup_timeout: float
) -> str | None:
    """Execute every cell in order; the error of the first failing cell, or None.

    ``manager`` is the kernel's own manager from the launcher's multi-kernel manager: a local
    kernel's gives a ZMQ client, a ``GatewayKernelManager`` a websocket client to the gateway.
    """
    client = manager.client()
    client.allow_stdin = False
    # A gateway client connects in an awaitable; a local client's start is synchronous.
    await ensure_async(client.start_channels())
    try:
        await client.wait_for_ready(timeout=startup_timeout)

        def on_cell_executed(cell: NotebookNode, cell_index: int, **_: Any) -> None:
            text = outputs_text(cell)
            if text:
                output.write(text)

        runner = NotebookClient(
            nb,
            km=manager,
            kernel_name=manager.kernel_name,
            on_cell_executed=on_cell_executed,
        )
        # Given a client, nbclient never enters its own kernel setup, which would replace the
        # server's SIGINT/SIGTERM handlers.
        runner.kc = client
        runner.reset_execution_trackers()
        for index, cell in enumerate(nb.cells):
            try:
                await _execute_cell(runner, cell, index, output, manager.kernel_name)
            except CellExecutionError as failure:
                return f"cell {index}: {error_summary(_error_of(cell, failure))}"
        return None
    finally:
        client.stop_channels()


async def _execute_cell(
    runner: NotebookClient, cell: NotebookNode, index: int, output: OutputSink, kernel_name: str
) -> None:
    """Execute one cell; a cell that never finishes still gives the run what it printed."""
    try:
        await runner.async_execute_cell(cell, index, execution_count=runner.code_cells_executed + 1)
    except DeadKernelError:
        output.write(outputs_text(cell))
        # nbclient reads any cancellation of its wait as the kernel's death: a time limit or a
        # stop cancelled us, and the run ends timed out or cancelled, not failed.
        await anyio.lowlevel.checkpoint_if_cancelled()
        raise KernelGone(f"headless kernel {kernel_name} died during the run") from None
    except anyio.get_cancelled_exc_class():
        output.write(outputs_text(cell))
        raise


def _error_of(cell: NotebookNode, failure: CellExecutionError) -> ErrorContent:
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            error: ErrorContent = out
            return error
    return {"ename": failure.ename, "evalue": failure.evalue, "traceback": []}
