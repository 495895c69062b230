"""``shell.run``: a command in a subprocess, with a timeout, its output captured."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Mapping
from typing import Any, TypedDict

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.tools.registry import (
    ToolContext,
    ToolResult,
    builtin,
    check_seconds,
    clip,
    failed,
    ok,
)

DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 3600.0


def _argv(command: object) -> tuple[list[str], bool]:
    """(arguments, through the shell?): a string goes to ``/bin/sh -c``, a list is executed."""
    if isinstance(command, str) and command.strip():
        return [command], True
    if isinstance(command, list) and command and all(isinstance(part, str) for part in command):
        return list(command), False
    raise ValidationError(
        "command", f"must be a non-empty string or list of strings, got {command!r}"
    )


def _timeout(value: object) -> float:
    return check_seconds(value, "timeout", MAX_TIMEOUT)


def _environment(env: object) -> dict[str, str] | None:
    if env is None:
        return None
    if not isinstance(env, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in env.items()
    ):
        raise ValidationError("env", f"must be an object of strings, got {env!r}")
    return {**os.environ, **env}


class _Spawn(TypedDict):
    """How every command starts, by the shell or not."""

    stdin: int
    stdout: int
    stderr: int
    cwd: str
    env: dict[str, str] | None
    start_new_session: bool


async def _start(argv: list[str], through_shell: bool, cwd: str, env: dict[str, str] | None) -> Any:
    options: _Spawn = {
        "stdin": asyncio.subprocess.DEVNULL,
        "stdout": asyncio.subprocess.PIPE,
        "stderr": asyncio.subprocess.PIPE,
        "cwd": cwd,
        "env": env,
        # Its own process group: a timeout or cancel kills the command's children too.
        "start_new_session": True,
    }
    if through_shell:
        spawning = asyncio.ensure_future(asyncio.create_subprocess_shell(argv[0], **options))
    else:
        spawning = asyncio.ensure_future(asyncio.create_subprocess_exec(*argv, **options))
    try:
        return await asyncio.shield(spawning)
    except asyncio.CancelledError:
        # Cancelled while asyncio connects the pipes, the spawn waits for the process to end
        # and never sees it end (CPython 3.11): the call would hang. Let the spawn finish,
        # then kill what it started; the cancellation goes on.
        with contextlib.suppress(Exception):
            process = await spawning
            _kill(process)
            await process.wait()
        raise


def _kill(process: Any) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


async def _communicate(process: Any, timeout: float) -> tuple[bytes, bytes, bool]:
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), timeout)
        return stdout, stderr, False
    except asyncio.TimeoutError:
        _kill(process)
        stdout, stderr = await process.communicate()
        return stdout, stderr, True
    except asyncio.CancelledError:
        _kill(process)
        # Reap it so no zombie is left; the cancellation goes on.
        with contextlib.suppress(Exception):
            await asyncio.shield(process.wait())
        raise


@builtin(
    "shell.run",
    "Run a command (a string for /bin/sh, or a list of arguments) in the root: "
    "command, timeout=60, cwd=None, env=None. Captures stdout, stderr and exit code.",
)
async def run(
    context: ToolContext,
    command: str | list[str],
    timeout: float = DEFAULT_TIMEOUT,
    cwd: str | None = None,
    env: dict[str, str] | None = None,
) -> ToolResult:
    argv, through_shell = _argv(command)
    seconds = _timeout(timeout)
    directory = str(context.resolve(cwd, "cwd")) if cwd is not None else context.root
    started = time.monotonic()
    try:
        process = await _start(argv, through_shell, directory, _environment(env))
    except OSError as error:
        return failed(f"shell.run: cannot start {argv[0]!r}: {error.strerror or error}")
    stdout, stderr, timed_out = await _communicate(process, seconds)
    half = context.output_limit // 2
    out, out_cut = clip(stdout.decode(errors="replace"), half)
    err, err_cut = clip(stderr.decode(errors="replace"), half)
    data = {
        "command": command,
        "exit_code": process.returncode,
        "stdout": out,
        "stderr": err,
        "timed_out": timed_out,
        "truncated": out_cut or err_cut,
        "elapsed": round(time.monotonic() - started, 3),
    }
    if timed_out:
        return failed(f"shell.run: timed out after {seconds:g}s (killed)", data)
    if process.returncode != 0:
        return failed(f"shell.run: exit code {process.returncode}", data)
    return ok(data)


TOOLS = (run,)
