"""Named tools (``module.action``) and the one way to run them: ``ToolRunner.run_tool``.

A tool is a plain function, sync or async, called with its params as keyword arguments. Every
call, from any entry point (a cell, ``run_parallel``, a background task, a server-side job, a
watcher), goes through ``run_tool``: name lookup, argument check, policy (``policy.py``),
approval (``approval.py``), then the call; it never raises and always returns a result of the
one shape ``{"success": True, "data": ...}`` or ``{"success": False, "error": "..."}``
(a failure may carry ``data`` too: an HTTP error response, a failed command's output).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import os
import re
import stat
import threading
from collections.abc import Awaitable, Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, NotRequired, TypedDict, TypeVar

from jupyter_recall.core.errors import RecallError, ValidationError
from jupyter_recall.core.text import check_plain_text
from jupyter_recall.tools.approval import APPROVED, Approvals
from jupyter_recall.tools.policy import APPROVE, BLOCK, Decision, PolicyLayer, decide


class ToolResult(TypedDict):
    """What every tool call answers: ``data`` when it succeeded, ``error`` when it failed (a
    failure may carry ``data`` too). The data is the tool's own, free-form."""

    success: bool
    data: NotRequired[Any]
    error: NotRequired[str]
    index: NotRequired[int]
    """With ``name``: set on each result of ``run_parallel``, the action it answers."""
    name: NotRequired[str]


ToolDescription = TypedDict(
    "ToolDescription",
    {"name": str, "description": str, "parameters": list[str], "builtin": bool, "async": bool},
)
"""A tool as listed (``GET /api/recall/tools``); the functional form, for the key ``async``."""


F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")

OUTPUT_LIMIT = 1_000_000
"""Characters (text) or bytes of output kept in a result; the rest is cut, with a note."""
MAX_THREADS = 64
"""Threads for sync tools and blocking I/O: enough that 50 parallel sync calls do not queue."""
MAX_FITTING = 32
"""Sets of param names remembered per tool as fitting its signature."""
NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*$")


def ok(data: Any) -> ToolResult:
    return {"success": True, "data": data}


def failed(error: str, data: Any = None) -> ToolResult:
    result: ToolResult = {"success": False, "error": error}
    if data is not None:
        result["data"] = data
    return result


def check_name(name: object, field_name: str = "name") -> str:
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise ValidationError(
            field_name, f"must look like 'module.action' (identifiers), got {name!r}"
        )
    return name


def check_seconds(value: object, field_name: str, maximum: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValidationError(field_name, f"must be a number of seconds, got {value!r}")
    if not 0 < value <= maximum:
        raise ValidationError(field_name, f"must be in (0, {maximum:g}] seconds, got {value!r}")
    return float(value)


def clip(text: str, limit: int) -> tuple[str, bool]:
    """``text`` cut to ``limit`` characters with a note saying so; (text, truncated)."""
    if len(text) <= limit:
        return text, False
    note = f"\n[truncated: {limit} of {len(text)} characters shown]"
    return text[:limit] + note, True


class Located(NamedTuple):
    """A path under the tool root, found by ``ToolContext.locate``."""

    path: str
    """Its real path (no symlinks), inside the root."""
    relative: str
    """``path`` relative to the root, ``/``-separated (``.`` for the root itself)."""
    stat: os.stat_result | None
    """What is there (symlinks followed), or None when nothing is."""


_POSIX = os.sep == "/" and os.altsep is None
_NOT_PLAIN = frozenset(("", os.curdir, os.pardir))


class ToolContext:
    """What a built-in tool may use: the root its paths live under, the output bound and the
    thread pool for blocking calls."""

    def __init__(self, root: str, output_limit: int, pool: Callable[[], ThreadPoolExecutor]):
        self._given_root = root
        self.output_limit = output_limit
        self._pool = pool

    @functools.cached_property
    def root(self) -> str:
        # Resolved once per context (the server keeps one for its fixed root), on first use
        # only: user tools never need it, and it costs a syscall per part.
        return os.path.realpath(self._given_root)

    @functools.cached_property
    def _prefix(self) -> str:
        return self.root.rstrip(os.sep)

    def resolve(self, path: object, field_name: str = "path") -> Path:
        """``path`` (relative to the root, or absolute inside it), refused if it leaves the
        root, symlinks included."""
        return Path(self.locate(path, field_name).path)

    def locate(self, path: object, field_name: str = "path") -> Located:
        """``resolve``, with the relative path and what is there."""
        if not isinstance(path, str) or not path:
            raise ValidationError(field_name, f"must be a non-empty path, got {path!r}")
        check_plain_text(path, field_name)
        plain = self._plain(path)
        if plain is not None:
            return plain
        resolved = os.path.realpath(os.path.join(self.root, os.path.expanduser(path)))
        if os.path.commonpath([self.root, resolved]) != self.root:
            raise ValidationError(
                field_name, f"{path!r} is outside the tool root {self.root!r}; paths stay in it"
            )
        return Located(resolved, self.relative(resolved), _stat(resolved))

    def _plain(self, path: str) -> Located | None:
        """``path`` when it goes down from the root through existing names, none of them a
        symlink, ``.`` or ``..``: it is then its own real path, inside the root by construction,
        found with one ``lstat`` per name (``realpath`` takes one per name of the root too).
        None for anything else, which ``realpath`` decides."""
        if not _POSIX or path[0] in (os.sep, "~"):
            return None
        current = self._prefix
        status: os.stat_result | None = None
        for name in path.split(os.sep):
            if name in _NOT_PLAIN:
                return None
            current = f"{current}{os.sep}{name}"
            try:
                status = os.lstat(current)
            except OSError:
                return None
            if stat.S_ISLNK(status.st_mode):
                return None
        return Located(current, path, status)

    def relative(self, path: str | os.PathLike[str]) -> str:
        """``path`` (under the root) relative to it, ``/``-separated."""
        relative = os.path.relpath(path, self.root)
        return "." if relative == os.curdir else relative.replace(os.sep, "/")

    async def run_blocking(self, func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        loop = asyncio.get_running_loop()
        call = functools.partial(contextvars.copy_context().run, func, *args, **kwargs)
        return await loop.run_in_executor(self._pool(), call)


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


@dataclass(frozen=True)
class Tool:
    name: str
    func: Callable[..., Any]
    description: str = ""
    builtin: bool = False
    """Built-ins take the ``ToolContext`` first and return a ``ToolResult`` themselves."""
    signature: inspect.Signature = field(init=False, repr=False, compare=False)
    is_async: bool = field(init=False, repr=False, compare=False)
    _fitting: set[frozenset[str]] = field(
        init=False, repr=False, compare=False, default_factory=set
    )
    """Sets of param names known to fit the signature: whether params bind depends on their
    names only (they are passed by keyword), and binding costs more than the rest of a call."""

    def __post_init__(self) -> None:
        if not callable(self.func):
            raise ValidationError("func", f"must be callable, got {self.func!r}")
        try:
            # Computed once: every call checks its params against the signature.
            signature = inspect.signature(self.func)
        except (TypeError, ValueError) as error:
            raise ValidationError("func", f"has no inspectable signature: {error}") from None
        object.__setattr__(self, "signature", signature)
        object.__setattr__(self, "is_async", inspect.iscoroutinefunction(self.func))

    @property
    def module(self) -> str:
        return self.name.partition(".")[0]

    def parameters(self) -> list[str]:
        names = list(self.signature.parameters)
        return names[1:] if self.builtin else names

    def bind(self, context: ToolContext, params: Mapping[str, Any]) -> tuple[Any, ...]:
        """The positional arguments of the call; ValidationError on ``params`` when the params
        do not fit the function's signature (checked before anything runs or is asked)."""
        args: tuple[Any, ...] = (context,) if self.builtin else ()
        self._check_fit(args, params)
        return args

    def check_params(self, params: Mapping[str, Any]) -> None:
        """``bind``'s check without a call to make: when a job that will call the tool is
        created (a built-in's context is the run's, passed positionally, so any stands in)."""
        self._check_fit((None,) if self.builtin else (), params)

    def _check_fit(self, args: tuple[Any, ...], params: Mapping[str, Any]) -> None:
        names = frozenset(params)
        if names in self._fitting:
            return
        try:
            self.signature.bind(*args, **params)
        except TypeError as error:
            raise ValidationError(
                "params", f"{self.name}: {error}", accepted=self.parameters()
            ) from None
        if len(self._fitting) < MAX_FITTING:
            self._fitting.add(names)

    def describe(self) -> ToolDescription:
        return {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters(),
            "builtin": self.builtin,
            "async": self.is_async,
        }


class ToolRegistry:
    """Tools by name (thread-safe). Built-ins cannot be replaced; a user tool registered again
    (a re-run cell) replaces the previous one."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._lock = threading.Lock()
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> Tool:
        check_name(tool.name)
        with self._lock:
            current = self._tools.get(tool.name)
            if current is not None and current.builtin and not tool.builtin:
                raise ValidationError(
                    "name", f"{tool.name} is a built-in tool and cannot be replaced"
                )
            self._tools[tool.name] = tool
        return tool

    def register(self, name: str, func: F | None = None, *, description: str | None = None) -> Any:
        """``registry.register("mymod.fetch", fetch)`` or ``@registry.register("mymod.fetch")``."""
        check_name(name)

        def decorate(target: F) -> F:
            text = description if description is not None else inspect.getdoc(target) or ""
            self.add(Tool(name, target, text.strip()))
            return target

        return decorate if func is None else decorate(func)

    def unregister(self, name: str) -> None:
        with self._lock:
            tool = self._tools.get(name)
            if tool is None or tool.builtin:
                raise ValidationError(
                    "name", f"no user tool named {name!r}", accepted=self._user_names()
                )
            del self._tools[name]

    def _user_names(self) -> list[str]:
        return sorted(name for name, tool in self._tools.items() if not tool.builtin)

    def get(self, name: object, field_name: str = "name") -> Tool:
        with self._lock:
            tool = self._tools.get(name) if isinstance(name, str) else None
            if tool is None:
                raise ValidationError(
                    field_name, f"unknown tool {name!r}", accepted=sorted(self._tools)
                )
            return tool

    def names(self) -> list[str]:
        with self._lock:
            return sorted(self._tools)

    def __contains__(self, name: object) -> bool:
        with self._lock:
            return name in self._tools

    def describe(self) -> list[ToolDescription]:
        with self._lock:
            tools = sorted(self._tools.values(), key=lambda tool: tool.name)
        return [tool.describe() for tool in tools]


PolicySource = Callable[[], Iterable[PolicyLayer]]


class ToolRunner:
    """Runs tools of a registry under policies, asking approvals where needed.

    ``root`` is the directory filesystem paths are relative to (a callable is read at each
    call: the kernel's cwd); ``policies`` returns the policy layers to apply at each call.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        root: str | Callable[[], str],
        policies: PolicySource = tuple,
        approvals: Approvals | None = None,
        output_limit: int = OUTPUT_LIMIT,
        max_threads: int = MAX_THREADS,
    ) -> None:
        self.registry = registry
        self.approvals = approvals
        self._root = root
        self._policies = policies
        self._output_limit = output_limit
        self._max_threads = max_threads
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        self._fixed_context: ToolContext | None = None

    def _get_pool(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._max_threads, "jupyter_recall-tool")
            return self._pool

    def context(self) -> ToolContext:
        if callable(self._root):
            return ToolContext(self._root(), self._output_limit, self._get_pool)
        # A fixed root is resolved once, by the one context every call shares.
        if self._fixed_context is None:
            self._fixed_context = ToolContext(self._root, self._output_limit, self._get_pool)
        return self._fixed_context

    def decision(self, name: str) -> Decision:
        """The policy that applies to ``name`` now, and where it comes from."""
        return decide(name, self._policies())

    async def run_tool(
        self,
        name: str,
        params: Mapping[str, Any] | None = None,
        *,
        allow_approval: bool = True,
        denial_reason: str = "this caller cannot ask for approval",
        approvals: Approvals | None = None,
    ) -> ToolResult:
        """Run one tool call; never raises (except cancellation).

        ``allow_approval=False`` (watchers) refuses ``approve`` tools with ``denial_reason``
        instead of asking; ``approvals`` asks there instead of the runner's own (a server-side
        job asks the approvals inbox as its run).
        """
        try:
            tool = self.registry.get(name)
            params = _check_params(params)
            context = self.context()
            args = tool.bind(context, params)
            asking = (approvals or self.approvals) if allow_approval else None
            refusal = await self._gate(tool.name, params, asking, denial_reason)
            if refusal is not None:
                return failed(refusal)
            return await self._call(tool, context, args, params)
        except RecallError as error:
            return failed(str(error))

    async def _gate(
        self, name: str, params: dict[str, Any], approvals: Approvals | None, denial_reason: str
    ) -> str | None:
        decision = self.decision(name)
        if decision.policy == BLOCK:
            return decision.refusal()
        if decision.policy != APPROVE:
            return None
        if approvals is None:
            return f"tool {name} needs approval ({decision.source}) and {denial_reason}"
        request = await approvals.ask(name, params, decision.source)
        if request.outcome == APPROVED:
            return None
        return f"tool {name} was not run: approval {request.outcome} ({request.request_id})"

    async def _call(
        self, tool: Tool, context: ToolContext, args: tuple[Any, ...], params: dict[str, Any]
    ) -> ToolResult:
        try:
            if tool.is_async:
                value = await tool.func(*args, **params)
            else:
                value = await context.run_blocking(tool.func, *args, **params)
        except asyncio.CancelledError:
            raise
        except RecallError as error:
            return failed(f"{tool.name}: {error}")
        except Exception as error:
            return failed(f"{tool.name} raised {type(error).__name__}: {error}")
        if tool.builtin:
            answered: ToolResult = value
            return answered.copy()
        if isinstance(value, str):
            value, _ = clip(value, self._output_limit)
        return ok(value)

    def run_tool_sync(
        self, name: str, params: Mapping[str, Any] | None = None, **options: Any
    ) -> ToolResult:
        """``run_tool`` from a thread that has no running event loop (it makes one)."""
        return asyncio.run(self.run_tool(name, params, **options))

    def close(self) -> None:
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)


def _check_params(params: Mapping[str, Any] | None) -> dict[str, Any]:
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        raise ValidationError("params", f"must be an object, got {type(params).__name__}")
    for key in params:
        if not isinstance(key, str) or not key.isidentifier():
            raise ValidationError("params", f"parameter names must be identifiers, got {key!r}")
    return dict(params)


def builtin(name: str, description: str) -> Callable[[Callable[..., Awaitable[ToolResult]]], Tool]:
    """Declares a built-in tool (an async function taking the ToolContext first)."""

    def make(func: Callable[..., Awaitable[ToolResult]]) -> Tool:
        return Tool(check_name(name), func, description, builtin=True)

    return make
