"""Runs in a fresh kernel per run: start, run, capture, shut down (see ``fresh.py``)."""

from __future__ import annotations

import anyio
from jupyter_client.kernelspec import NoSuchKernel

from jupyter_recall.core.errors import KernelGone, ValidationError
from jupyter_recall.core.model import Job, Run
from jupyter_recall.engine.executors import OutputSink, RunOutcome
from jupyter_recall.server.executors.context import ServerManagers
from jupyter_recall.server.executors.fresh import FreshKernels, run_variables
from jupyter_recall.server.executors.instruction import kernel_code
from jupyter_recall.server.executors.iopub import Execution, collect, execute_message
from jupyter_recall.server.executors.launcher import KernelLauncher, LaunchedKernel
from jupyter_recall.server.executors.notebook import no_such_spec, run_notebook
from jupyter_recall.server.executors.payloads import (
    CodeAction,
    HeadlessTarget,
    InstructionAction,
    NotebookAction,
    parse_job_payloads,
    resolve_under,
)


class HeadlessExecutor:
    """Executes code, instruction and notebook actions in a fresh kernel per run."""

    def __init__(
        self, managers: ServerManagers, fresh: FreshKernels, *, startup_timeout: float = 60.0
    ) -> None:
        self._managers = managers
        self.fresh = fresh
        self._startup_timeout = startup_timeout

    def concurrency_key(self, job: Job) -> str:
        return "headless"

    async def execute(self, job: Job, run: Run, output: OutputSink) -> RunOutcome:
        action, target = parse_job_payloads(job.action, job.target)
        if isinstance(action, NotebookAction):
            return await run_notebook(
                self._managers,
                action,
                target if isinstance(target, HeadlessTarget) else HeadlessTarget(),
                run,
                output,
                fresh=self.fresh,
                variables=run_variables(job, run),
                startup_timeout=self._startup_timeout,
            )
        if not isinstance(target, HeadlessTarget):
            raise ValidationError("target.type", "not a headless target", accepted=("headless",))
        if not isinstance(action, (CodeAction, InstructionAction)):
            raise ValidationError(
                "action.type",
                "not runnable in a headless kernel",
                accepted=("code", "instruction", "notebook"),
            )
        code = kernel_code(action, job, run)
        try:
            return await self._run_code(target, code, output, run_variables(job, run))
        except KernelGone as gone:
            return RunOutcome(error=str(gone))
        except NoSuchKernel as missing:
            where = "target.kernel_name" if target.kernel_name else "the server's default kernel"
            return RunOutcome(error=await no_such_spec(self._managers, missing.name, where))
        except TimeoutError:
            return RunOutcome(
                error=f"headless kernel did not start within {self._startup_timeout:g} s"
            )

    async def _run_code(
        self, target: HeadlessTarget, code: str, output: OutputSink, variables: dict[str, str]
    ) -> RunOutcome:
        async with self.fresh.kernel(
            target.kernel_name,
            cwd=resolve_under(self._managers.root_dir, target.cwd, "target.cwd"),
            variables=variables,
            startup_timeout=self._startup_timeout,
        ) as kernel:
            try:
                execution = await _execute(self.fresh.launcher, kernel, code, output)
            except anyio.get_cancelled_exc_class():
                output.write("[recall] run stopped: its headless kernel is shut down\n")
                raise
        return RunOutcome(error=execution.error)


async def _execute(
    launcher: KernelLauncher, kernel: LaunchedKernel, code: str, output: OutputSink
) -> Execution:
    connection = kernel.connection
    msg = execute_message(connection, code)
    execution = Execution(msg["header"]["msg_id"])

    async def liveness() -> None:
        if not await launcher.is_alive(kernel):
            raise KernelGone(f"headless kernel {kernel.kernel_name} died during the run")

    with connection.track(msg) as inbox:
        connection.send("shell", msg)
        await collect(inbox, execution, output, label=connection.label, liveness=liveness)
    return execution
