"""Heartbeats: a recurring job that reads a file (default ``HEARTBEAT.md`` beside the notebook)
in the notebook's live kernel and, when a gate says so, hands its content to the ``on_recall``
handler as a self-instruction.

Each beat (:func:`beat`) skips a missing or empty file, then asks the gate registered with
``@jupyter_recall.heartbeat_gate`` (``gate(content, previous) -> "run" | "skip"`` or a bool;
``previous`` is the content last delivered, or None). The default gate runs when the content
changed. The hash of the last delivered content is kept in the kernel and in a small file under
the Jupyter data directory, so a restarted kernel does not deliver the same content again. What
a beat prints is the run's output, so the job's ``output_channel`` notifies its outcome.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol, TypeVar

from jupyter_recall.client.tool_specs import PATH_LENGTH, WHEN_LENGTH
from jupyter_recall.client.toolspec import Param, Tool, ToolArguments, ToolOk
from jupyter_recall.core.errors import RecallError, ValidationError
from jupyter_recall.core.text import check_plain_text
from jupyter_recall.kernel.jobs import api, recall

DEFAULT_FILE = "HEARTBEAT.md"
DEFAULT_EVERY = "10m"
RUN, SKIP = "run", "skip"

Gate = Callable[[str, "str | None"], Any]
G = TypeVar("G", bound=Gate)


class FileAccess(Protocol):
    """How heartbeats reach their file: as ``filesystem.read`` does (``kernel/heartbeat.py``
    installs it), so that a heartbeat cannot read what the agent's tools may not."""

    def locate(self, path: str) -> Path:
        """The file's real path; a ``RecallError`` when the path leaves the tool root (naming
        ``path``) or the ``filesystem.read`` policy refuses unattended reads."""

    def read(self, path: Path) -> str | None:
        """The content, None when the file is missing; a ``RecallError`` when refused."""


class _State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.gate: Gate | None = None
        self.access: FileAccess | None = None
        self.last: dict[str, str] = {}
        """Content last delivered, by absolute path (this kernel's memory)."""


_state = _State()


def heartbeat_gate(gate: G) -> G:
    """Register the gate of this kernel's heartbeats (a decorator). It gets the file's content
    and the content last delivered (None at first) and returns ``"run"``/``"skip"`` (or a
    bool). Registering again replaces it; :func:`clear_gate` restores the default."""
    if not callable(gate):
        raise TypeError(f"heartbeat_gate needs a callable, got {gate!r}")
    with _state.lock:
        _state.gate = gate
    return gate


def clear_gate() -> None:
    with _state.lock:
        _state.gate = None


def use_file_access(access: FileAccess) -> None:
    with _state.lock:
        _state.access = access


def _access() -> FileAccess:
    with _state.lock:
        access = _state.access
    if access is None:
        # Reading without the tools' confinement and policy would let a heartbeat hand any
        # file to the agent: refuse rather than fall back to a plain read.
        raise RecallError(
            "heartbeats read their file through filesystem.read: "
            "import jupyter_recall.kernel.heartbeat first"
        )
    return access


def _digest(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def _hash_file(path: Path) -> Path:
    from jupyter_core.paths import jupyter_data_dir

    name = _digest(str(path))[:32]
    return Path(jupyter_data_dir()) / "jupyter_recall" / "heartbeats" / name


def _last_hash(path: Path) -> str | None:
    remembered = _state.last.get(str(path))
    if remembered is not None:
        return _digest(remembered)
    try:
        return _hash_file(path).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def _remember(path: Path, content: str) -> None:
    _state.last[str(path)] = content
    stored = _hash_file(path)
    try:
        stored.parent.mkdir(parents=True, exist_ok=True)
        stored.write_text(_digest(content), encoding="utf-8")
    except OSError as error:  # the kernel's memory still holds it
        print(f"heartbeat: could not keep the last hash in {stored}: {error}")


def _decide(content: str, path: Path) -> bool:
    with _state.lock:
        gate = _state.gate
    if gate is None:
        return _last_hash(path) != _digest(content)
    verdict = gate(content, _state.last.get(str(path)))
    if isinstance(verdict, bool):
        return verdict
    if verdict not in (RUN, SKIP):
        raise ValidationError("heartbeat_gate", f"returned {verdict!r}", accepted=[RUN, SKIP])
    return bool(verdict == RUN)


def beat(path: str | Path = DEFAULT_FILE, job: Mapping[str, Any] | None = None) -> str:
    """One heartbeat: read ``path``, ask the gate, deliver on run. Returns ``"delivered"``,
    ``"skipped: <why>"``; the same line is printed (it is the run's output)."""

    access = _access()
    try:
        target = access.locate(str(path))
        content = access.read(target)
    except RecallError as error:
        return _say(f"skipped: {error}")
    if content is None:
        return _say(f"skipped: {target.name} is missing")
    if not content.strip():
        return _say(f"skipped: {target.name} is empty")
    if not _decide(content, target):
        if _state.gate is None:
            return _say(f"skipped: {target.name} unchanged since the last delivery")
        return _say("skipped: the heartbeat gate said skip")
    recall.deliver(content, dict(job or _own_job(target)))
    _remember(target, content)
    return _say(f"delivered {target.name} ({len(content)} characters)")


def _own_job(target: Path) -> Mapping[str, Any]:
    """The heartbeat job of this notebook that beats on ``target`` (its stored code says so),
    for the handler's ``job`` (``job.id``, ``job.name``...); a beat called by hand, or while the
    server is unreachable, has only a name."""
    name = f"heartbeat {target.name}"
    try:
        found = api.jobs(search=name, kind="job")
    except RecallError:
        found = []
    code = beat_code(target)
    return next(
        (job for job in found if job.action and job.action.get("code") == code), {"name": name}
    )


def _say(line: str) -> str:
    print(f"heartbeat: {line}", flush=True)
    return line


def beat_code(path: Path) -> str:
    """The code the heartbeat job runs in the notebook's kernel (through the stable path of
    ``kernel/heartbeat.py``: the code is stored and must outlive moves of this module)."""
    return f"from jupyter_recall.kernel.heartbeat import beat\nbeat({str(path)!r})"


def start(
    every: str = DEFAULT_EVERY,
    path: str | Path = DEFAULT_FILE,
    *,
    output_channel: str | None = None,
) -> Any:
    """Start a heartbeat in this kernel: every ``every`` (``10m``, ``30s``...), :func:`beat` on
    ``path`` (relative to the notebook's directory). Returns the job (``kernel.jobs.api.Job``)."""

    if not isinstance(every, str) or not every.strip():
        raise ValidationError("every", f"must be a duration like '10m', got {every!r}")
    if not isinstance(path, (str, Path)):
        raise ValidationError("path", f"must be a file's path, got {type(path).__name__}")
    target = _access().locate(check_plain_text(str(path), "path"))
    options = {"output_channel": output_channel} if output_channel else None
    when = every if every.startswith("every ") else f"every {every}"
    try:
        return api.schedule(
            when, beat_code(target), name=f"heartbeat {target.name}", options=options
        )
    except ValidationError as error:
        if error.field != "when":
            raise
        # The schedule is made of ``every`` alone: the caller typed no ``when``.
        raise ValidationError(
            "every", f"must be an interval like '10m', '30s' or '1h', got {every!r}"
        ) from None


# --- %heartbeat and the agent tool -------------------------------------------------------------

MAGIC_USAGE = "usage: %heartbeat every 10m [FILE]   (FILE defaults to HEARTBEAT.md)"


def heartbeat_magic(line: str) -> None:
    """``%heartbeat every 10m [FILE]``: start a heartbeat on FILE in this kernel."""
    import sys

    words = line.split()
    if len(words) not in (2, 3) or words[0] != "every":
        print(MAGIC_USAGE, file=sys.stderr)
        return
    try:
        job = start(words[1], words[2] if len(words) == 3 else DEFAULT_FILE)
    except RecallError as error:
        print(f"heartbeat: {error}", file=sys.stderr)
        return
    print(f"heartbeat {job['id']}: {job['description']}, reading {job['name'][10:]}")


def register_magic(ipython: Any) -> None:
    # Imported here, in the kernel only: the agent tool specs import this module outside kernels
    # (the MCP server), which must not pull IPython in.
    from IPython.core.magic import no_var_expand

    # What was typed is what is stored, as for the other magics (magics.py).
    ipython.register_magic_function(no_var_expand(heartbeat_magic), "line", "heartbeat")


class HeartbeatStarted(ToolOk):
    """The answer of the agent tool ``heartbeat_start``: the heartbeat's job."""

    job_id: str
    name: str
    description: str


def _tool_start(args: ToolArguments) -> HeartbeatStarted:
    every, path = args.optional_text("every"), args.optional_text("path")
    job = start(every or DEFAULT_EVERY, path or DEFAULT_FILE)
    return {
        **args.succeeded(),
        "job_id": job["id"],
        "name": job["name"],
        "description": job["description"],
    }


def heartbeat_tools() -> tuple[Tool[HeartbeatStarted], ...]:
    """The agent tool ``heartbeat_start`` (``kernel/agent/tools.py`` serves it with the others)."""

    return (
        Tool(
            "heartbeat_start",
            "Start a heartbeat: every `every` the notebook's kernel reads `path` (default "
            "HEARTBEAT.md beside the notebook) and, when its content changed (or the kernel's "
            "heartbeat_gate says run), hands it to your on_recall handler as a self-instruction. "
            "A missing or empty file is skipped. Edit the file to give yourself new instructions.",
            (
                Param(
                    "every",
                    "string",
                    "Interval like '10m', '30s' or '1h'.",
                    default="10m",
                    max_length=WHEN_LENGTH,
                ),
                Param(
                    "path",
                    "string",
                    "The file, relative to the notebook.",
                    default=DEFAULT_FILE,
                    plain=True,
                    max_length=PATH_LENGTH,
                ),
            ),
            _tool_start,
        ),
    )
