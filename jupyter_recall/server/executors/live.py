"""Runs in a notebook's live kernel: in a subshell where the kernel has them, else exclusively.

A kernel that advertises ``kernel subshells`` (ipykernel 7) gets subshells created on its control
channel; each run takes one from a small per-kernel pool, so it starts at once even while the
user's cell is busy, and never blocks the user's cells. ``exclusive`` jobs, and kernels without
subshells, run on the main shell once it is idle.
"""

from __future__ import annotations

import logging
import posixpath
from functools import partial
from typing import Any

import anyio
from jupyter_core.utils import ensure_async

from jupyter_recall.core.clock import Clock, SystemClock
from jupyter_recall.core.errors import KernelGone, ValidationError
from jupyter_recall.core.model import Job, Run
from jupyter_recall.core.records import JobOptions
from jupyter_recall.engine.executors import CollectingSink, OutputSink, RunOutcome
from jupyter_recall.server.executors.context import ServerManagers
from jupyter_recall.server.executors.instruction import kernel_code
from jupyter_recall.server.executors.iopub import (
    Execution,
    KernelConnection,
    collect,
    execute_message,
)
from jupyter_recall.server.executors.payloads import (
    CodeAction,
    InstructionAction,
    KernelTarget,
    parse_job_payloads,
    parse_target,
)

log = logging.getLogger(__name__)

SUBSHELL_FEATURE = "kernel subshells"
CONTROL_TIMEOUT = 10.0
"""Seconds a control request (create subshell) may take."""
STOP_GRACE = 3.0
"""Seconds to collect trailing output after a stopped run was interrupted."""
IDLE_PROBE_MIN = 1.0
"""Least time given to the idle probe, so that ``exclusive_timeout: 0`` means 'only if idle now'."""

_INTERRUPT_TEMPLATE = """\
def _jupyter_recall_interrupt(msg_id):
    import ctypes, sys, time
    for _ in range(20):
        for thread_id, frame in sys._current_frames().items():
            while frame is not None:
                if frame.f_code.co_name == "execute_request":
                    parent = frame.f_locals.get("parent")
                    header = parent.get("header", {{}}) if isinstance(parent, dict) else {{}}
                    if header.get("msg_id") == msg_id:
                        return ctypes.pythonapi.PyThreadState_SetAsyncExc(
                            ctypes.c_ulong(thread_id), ctypes.py_object(KeyboardInterrupt)
                        )
                frame = frame.f_back
        time.sleep(0.05)
    return 0
try:
    print(_jupyter_recall_interrupt({msg_id!r}))
finally:
    del _jupyter_recall_interrupt
"""


def subshell_interrupt_code(msg_id: str) -> str:
    """Python that raises KeyboardInterrupt in the thread executing request ``msg_id``.

    A kernel interrupt is SIGINT, which Python delivers to the main thread only: it would stop the
    user's cell, never a subshell's. So the exception is set on the subshell's thread instead,
    found by the execute_request frame that holds our msg_id (so no other run can be hit). It is
    noticed between bytecodes: a pure-Python loop stops at once, a blocking C call (a long
    ``time.sleep``) only when it returns.
    """
    return _INTERRUPT_TEMPLATE.format(msg_id=msg_id)


class LiveKernel:
    """Our connection to one live kernel and the pool of subshells we created in it."""

    def __init__(self, kernel_id: str, connection: KernelConnection) -> None:
        self.kernel_id = kernel_id
        self.connection = connection
        self._free: list[str] = []
        self._generation = connection.generation

    @property
    def label(self) -> str:
        return self.kernel_id

    @property
    def supports_subshells(self) -> bool:
        return SUBSHELL_FEATURE in self.connection.features

    async def acquire_subshell(self) -> str:
        if self._generation != self.connection.generation:
            self.forget_subshells()
        if self._free:
            return self._free.pop()
        reply = await self.connection.request(
            "control", "create_subshell_request", {}, timeout=CONTROL_TIMEOUT
        )
        if reply.get("status") != "ok" or "subshell_id" not in reply:
            raise KernelGone(
                f"kernel {self.kernel_id} refused to create a subshell: {reply.get('evalue')}"
            )
        return str(reply["subshell_id"])

    def release_subshell(self, subshell_id: str) -> None:
        if self._generation == self.connection.generation:
            self._free.append(subshell_id)

    def forget_subshells(self) -> None:
        """Subshells die with their kernel process; a restarted kernel starts with none."""
        self._free.clear()
        self._generation = self.connection.generation


def _outcome(execution: Execution) -> RunOutcome:
    return RunOutcome(error=execution.error)


def _unknown_subshell(execution: Execution) -> bool:
    return execution.reply is not None and execution.reply.get("ename") == "UnknownSubshellError"


class LiveKernelExecutor:
    """Executes code and instruction actions in a live kernel named by path or kernel id."""

    def __init__(
        self,
        managers: ServerManagers,
        *,
        handshake_timeout: float = 60.0,
        clock: Clock | None = None,
    ) -> None:
        self._managers = managers
        self._clock: Clock = clock or SystemClock()
        self._handshake_timeout = handshake_timeout
        self._kernels: dict[str, LiveKernel] = {}
        self._connect_locks: dict[str, anyio.Lock] = {}
        self._start_locks: dict[str, anyio.Lock] = {}

    def concurrency_key(self, job: Job) -> str:
        target = parse_target(job.target)
        if not isinstance(target, KernelTarget):
            return "kernel:?"
        return f"kernel:{target.label}"

    async def execute(self, job: Job, run: Run, output: OutputSink) -> RunOutcome:
        action, target = parse_job_payloads(job.action, job.target)
        if not isinstance(target, KernelTarget):
            raise ValidationError("target.type", "not a live kernel target", accepted=("kernel",))
        if not isinstance(action, (CodeAction, InstructionAction)):
            raise ValidationError(
                "action.type", "not runnable in a live kernel", accepted=("code", "instruction")
            )
        resolved = await self._resolve(target, job.options, output)
        if isinstance(resolved, RunOutcome):
            return resolved
        try:
            kernel = await self._connect(resolved)
            code = kernel_code(action, job, run)
            if job.options.exclusive or not kernel.supports_subshells:
                return await self._run_exclusive(kernel, code, output, job.options)
            return await self._run_in_subshell(kernel, code, output)
        except KernelGone as gone:
            return RunOutcome(error=str(gone))

    async def hosts(self, job: Job) -> bool:
        """Whether the kernel ``job`` targets runs here now (a notebook's, or a kernel id)."""
        target = parse_target(job.target)
        return isinstance(target, KernelTarget) and await self._find(target) is not None

    async def aclose(self) -> None:
        """Close our connections (the kernels themselves belong to the server)."""
        for kernel in self._kernels.values():
            kernel.connection.close()
        self._kernels.clear()

    # -- finding the kernel ---------------------------------------------------------------

    async def _resolve(
        self, target: KernelTarget, options: JobOptions, output: OutputSink
    ) -> str | RunOutcome:
        policy = options.on_missing_kernel
        kernel_id = await self._find(target)
        if kernel_id is not None:
            return kernel_id
        what = f"notebook {target.path!r}" if target.path else f"kernel {target.kernel_id!r}"
        if policy == "skip":
            return RunOutcome(skipped_reason=f"no running kernel for {what}")
        if policy == "start" and target.path is not None:
            return await self._start_session(target.path, output)
        if policy == "start":
            return RunOutcome(
                error=f"no running kernel for {what}; on_missing_kernel 'start' needs target.path"
            )
        return RunOutcome(
            error=f"no running kernel for {what} (on_missing_kernel is 'fail'; "
            "accepted: fail, skip, start)"
        )

    async def _find(self, target: KernelTarget) -> str | None:
        """The kernel id, looked up now: a notebook's kernel changes as the user works."""
        if target.path is None:
            kernel_id = str(target.kernel_id)
            return kernel_id if await self._alive(kernel_id) else None
        sessions = await ensure_async(self._managers.session_manager.list_sessions())
        # A notebook may also have consoles attached; its own session comes first.
        sessions.sort(key=lambda session: session.get("type") != "notebook")
        for session in sessions:
            if str(session.get("path", "")).lstrip("/") != target.path:
                continue
            kernel_id = str(session["kernel"]["id"])
            if await self._alive(kernel_id):
                return kernel_id
        return None

    async def _alive(self, kernel_id: str) -> bool:
        kernel_manager = self._managers.kernel_manager
        if kernel_id not in kernel_manager:
            return False
        return bool(await ensure_async(kernel_manager.get_kernel(kernel_id).is_alive()))

    async def _check_alive(self, kernel_id: str, process: object) -> None:
        if not await self._alive(kernel_id):
            raise KernelGone(f"kernel {kernel_id} was shut down or died during the run")
        if self._process_of(kernel_id) != process:
            raise KernelGone(f"kernel {kernel_id} restarted during the run")

    def _process_of(self, kernel_id: str) -> object:
        """What tells one kernel process from the next under the same kernel id.

        Every (re)start gives the kernel manager a new provisioner; its pid tells local
        processes apart even if the provisioner object's id were reused.
        """
        provisioner = getattr(
            self._managers.kernel_manager.get_kernel(kernel_id), "provisioner", None
        )
        return (id(provisioner), getattr(provisioner, "pid", None))

    async def _start_session(self, path: str, output: OutputSink) -> str:
        """Start the notebook's kernel as the server would on opening it: a notebook session,
        with the kernel spec named in the notebook's metadata (else the server's default)."""
        lock = self._start_locks.setdefault(path, anyio.Lock())
        async with lock:
            # Another run may have started it while we waited for the lock.
            existing = await self._find(KernelTarget(path=path))
            if existing is not None:
                return existing
            name = await self._notebook_kernel_name(path)
            session = await ensure_async(
                self._managers.session_manager.create_session(
                    path=path, name=posixpath.basename(path), type="notebook", kernel_name=name
                )
            )
        kernel_id = str(session["kernel"]["id"])
        output.write(f"[recall] started kernel {kernel_id} ({name or 'default'}) for {path}\n")
        return kernel_id

    async def _notebook_kernel_name(self, path: str) -> str | None:
        try:
            model = await ensure_async(
                self._managers.contents_manager.get(path, content=True, type="notebook")
            )
        except Exception:
            return None  # no readable notebook: the server's default kernel is used
        spec = model["content"].get("metadata", {}).get("kernelspec", {})
        name = spec.get("name")
        return str(name) if name else None

    async def _connect(self, kernel_id: str) -> LiveKernel:
        lock = self._connect_locks.setdefault(kernel_id, anyio.Lock())
        async with lock:
            self._prune()
            kernel = self._kernels.get(kernel_id)
            if kernel is not None and not kernel.connection.closed:
                return kernel
            manager = self._managers.kernel_manager.get_kernel(kernel_id)
            connection = KernelConnection(manager, label=f"kernel {kernel_id}")
            try:
                await connection.handshake(timeout=self._handshake_timeout)
            except TimeoutError:
                connection.close()
                raise KernelGone(
                    f"kernel {kernel_id} did not answer within {self._handshake_timeout:g} s"
                ) from None
            except BaseException:
                connection.close()
                raise
            kernel = LiveKernel(kernel_id, connection)
            self._kernels[kernel_id] = kernel
            return kernel

    def _prune(self) -> None:
        """Drop connections to kernels the server no longer has."""
        for kernel_id in list(self._kernels):
            if kernel_id not in self._managers.kernel_manager:
                self._kernels.pop(kernel_id).connection.close()
                self._connect_locks.pop(kernel_id, None)

    # -- running ------------------------------------------------------------------------

    async def _run_in_subshell(
        self, kernel: LiveKernel, code: str, output: OutputSink
    ) -> RunOutcome:
        for _ in range(2):
            subshell_id = await kernel.acquire_subshell()
            execution = await self._execute(kernel, code, output, subshell_id=subshell_id)
            if not _unknown_subshell(execution):
                return _outcome(execution)
            # The kernel restarted since the subshell was made: make a new one, once.
            kernel.forget_subshells()
        return RunOutcome(error=f"kernel {kernel.label} keeps losing its subshells")

    async def _run_exclusive(
        self, kernel: LiveKernel, code: str, output: OutputSink, options: JobOptions
    ) -> RunOutcome:
        timeout = options.exclusive_timeout
        if not await self._wait_main_idle(kernel, timeout):
            reason = "exclusive run" if kernel.supports_subshells else "kernel has no subshells"
            return RunOutcome(
                skipped_reason=f"kernel {kernel.label} stayed busy for {timeout:g} s ({reason})"
            )
        # The run started when it was queued; its code starts now, once the kernel is idle.
        began = self._clock.now()
        execution = await self._execute(kernel, code, output, subshell_id=None)
        return RunOutcome(error=execution.error, started_at=began)

    async def _wait_main_idle(self, kernel: LiveKernel, timeout: float) -> bool:
        """Wait until the main shell has nothing to run.

        The main shell handles its requests one at a time, so a kernel_info request sent there is
        answered only once the cells ahead of it are done. The server's ``execution_state`` is no
        help here: the idle status of any subshell request also sets it to idle.
        """
        try:
            await kernel.connection.request(
                "shell", "kernel_info_request", {}, timeout=max(timeout, IDLE_PROBE_MIN)
            )
        except TimeoutError:
            await self._check_alive(kernel.kernel_id, self._process_of(kernel.kernel_id))
            return False
        return True

    async def _execute(
        self, kernel: LiveKernel, code: str, output: OutputSink, *, subshell_id: str | None
    ) -> Execution:
        connection = kernel.connection
        msg = execute_message(connection, code, subshell_id=subshell_id)
        execution = Execution(msg["header"]["msg_id"])
        liveness = partial(self._check_alive, kernel.kernel_id, self._process_of(kernel.kernel_id))
        with connection.track(msg) as inbox:
            connection.send("shell", msg)
            try:
                await collect(inbox, execution, output, label=connection.label, liveness=liveness)
            except anyio.get_cancelled_exc_class():
                with anyio.CancelScope(shield=True):
                    await self._stop(kernel, execution, inbox, output, subshell_id)
                raise
            except KernelGone:
                kernel.forget_subshells()
                raise
        if subshell_id is not None:
            kernel.release_subshell(subshell_id)
        return execution

    # -- stopping -----------------------------------------------------------------------

    async def _stop(
        self,
        kernel: LiveKernel,
        execution: Execution,
        inbox: Any,
        output: OutputSink,
        subshell_id: str | None,
    ) -> None:
        try:
            if subshell_id is None:
                detail = await self._interrupt_main(kernel, execution)
            else:
                detail = await self._interrupt_subshell(kernel, execution)
            with anyio.move_on_after(STOP_GRACE):
                await collect(inbox, execution, output, label=kernel.connection.label)
        except Exception as error:  # a failing stop must not hide the cancellation itself
            detail = f"could not interrupt: {error}"
        if subshell_id is not None and execution.done:
            kernel.release_subshell(subshell_id)
        # A subshell still busy after the grace is left to finish; it is not reused.
        output.write(f"[recall] run stopped: {detail}\n")

    async def _interrupt_main(self, kernel: LiveKernel, execution: Execution) -> str:
        if not execution.started:
            return "it was still queued behind the user's cells and will run when they finish"
        await ensure_async(self._managers.kernel_manager.interrupt_kernel(kernel.kernel_id))
        return "kernel interrupted"

    async def _interrupt_subshell(self, kernel: LiveKernel, execution: Execution) -> str:
        if kernel.connection.language != "python":
            return "subshell runs of non-Python kernels cannot be interrupted; stopped waiting"
        code = subshell_interrupt_code(execution.msg_id)
        if (await self._run_helper(kernel, code)).strip() == "1":
            return "KeyboardInterrupt raised in the run's subshell"
        return "the run's subshell could not be interrupted; stopped waiting"

    async def _run_helper(self, kernel: LiveKernel, code: str) -> str:
        """Run our own short code in another subshell and return its output."""
        subshell_id = await kernel.acquire_subshell()
        msg = execute_message(kernel.connection, code, subshell_id=subshell_id)
        execution = Execution(msg["header"]["msg_id"])
        collector = CollectingSink()
        with kernel.connection.track(msg) as inbox, anyio.move_on_after(CONTROL_TIMEOUT):
            kernel.connection.send("shell", msg)
            await collect(inbox, execution, collector, label=kernel.connection.label)
        if execution.done:
            kernel.release_subshell(subshell_id)
        return collector.text
