"""The executor the engine is given: dispatches each run to the executor that can run it."""

from __future__ import annotations

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.model import Job, Run
from jupyter_recall.engine.executors import Executor, OutputSink, RunOutcome
from jupyter_recall.server.executors.payloads import parse_job_payloads, route

INVALID_PAYLOAD_KEY = "invalid-payload"
"""Concurrency key of jobs whose payloads do not validate; their runs fail in ``execute``."""


class TargetRouter:
    """Routes runs to the live-kernel, headless or server executor.

    Code and instructions go where the target points (``kernel`` or ``headless``); notebooks
    always run headless; notifications and tools run on the server. Concurrency keys are
    ``kernel:<path or kernel id>`` (one limit per live kernel), ``headless`` and ``server``.
    """

    def __init__(self, *, kernel: Executor, headless: Executor, server: Executor) -> None:
        self._executors = {"kernel": kernel, "headless": headless, "server": server}

    def executor_for(self, job: Job) -> Executor:
        return self._executors[route(*parse_job_payloads(job.action, job.target))]

    def concurrency_key(self, job: Job) -> str:
        try:
            return self.executor_for(job).concurrency_key(job)
        except ValidationError:
            return INVALID_PAYLOAD_KEY

    async def execute(self, job: Job, run: Run, output: OutputSink) -> RunOutcome:
        return await self.executor_for(job).execute(job, run, output)
