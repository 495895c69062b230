"""A job that calls a server tool is refused at creation when the call could never run: a tool
the server does not have, or params its signature does not take. Otherwise it would be stored
and fail at every fire with the same error (``rest.md``: such a name is rightly a 400).

A tool job aimed at a kernel is not checked here: user tools live in the kernel.
"""

from __future__ import annotations

from collections.abc import Sequence

from jupyter_recall.core.payloads import within
from jupyter_recall.core.records import ServerTarget, ToolAction
from jupyter_recall.server.authorization import JobShape
from jupyter_recall.tools import ToolRunner


def check_server_tools(
    runner: ToolRunner | None, jobs: Sequence[JobShape], *, batch: bool = False
) -> None:
    """ValidationError naming ``action.name`` or ``action.params`` (``jobs[i].`` first when
    the jobs come as a batch, ``{"jobs": [...]}``, even of one)."""
    if runner is None:
        return
    for index, job in enumerate(jobs):
        action = job.action
        if not isinstance(action, ToolAction) or not isinstance(job.target, ServerTarget):
            continue
        with within(f"jobs[{index}].action" if batch else "action"):
            runner.registry.get(action.name).check_params(action.params)
