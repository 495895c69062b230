"""``filesystem.read|write|list``: files under the tool root (refused when a path leaves it)."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TypedDict

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.tools.registry import ToolContext, ToolResult, builtin, failed, ok

MAX_ENTRIES = 10_000
INLINE_READ = 64 * 1024
"""Files up to this many bytes are read on the event loop, not in a thread: handing the read
to a thread and back costs more than reading them (and finding the file already touched the
file system from the loop). A watcher reads its file every few seconds."""


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)


def _read_text(path: str, encoding: str, limit: int) -> tuple[str, int, bool]:
    descriptor = os.open(path, _READ_FLAGS)
    try:
        size = os.fstat(descriptor).st_size
        # Sized to the file: a buffer of the whole limit (1 MB) costs more than reading a
        # small file. Files that do not tell their size (/proc) are read up to the limit.
        raw = _read_up_to(descriptor, (min(size, limit) if size else limit) + 1)
    finally:
        os.close(descriptor)
    truncated = len(raw) > limit
    # Cutting inside a multi-byte character: the broken tail is dropped, not an error.
    text = raw[:limit].decode(encoding, errors="ignore" if truncated else "strict")
    if truncated:
        text += f"\n[truncated: {limit} of {size} bytes shown]"
    return text, size, truncated


def _read_up_to(descriptor: int, count: int) -> bytes:
    chunks = []
    while count > 0:
        chunk = os.read(descriptor, count)
        if not chunk:
            break
        chunks.append(chunk)
        count -= len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


@builtin("filesystem.read", "Read a text file under the root: path, encoding='utf-8'.")
async def read(context: ToolContext, path: str, encoding: str = "utf-8") -> ToolResult:
    found = context.locate(path)
    if found.stat is None or not stat.S_ISREG(found.stat.st_mode):
        return failed(f"filesystem.read: {path!r} is not a file under the root")
    limit = context.output_limit
    try:
        if found.stat.st_size <= INLINE_READ:
            text, size, truncated = _read_text(found.path, encoding, limit)
        else:
            text, size, truncated = await context.run_blocking(
                _read_text, found.path, encoding, limit
            )
    except UnicodeDecodeError as error:
        return failed(f"filesystem.read: {path!r} is not {encoding} text ({error.reason})")
    except LookupError:
        raise ValidationError("encoding", f"unknown encoding {encoding!r}") from None
    return ok({"path": found.relative, "content": text, "size": size, "truncated": truncated})


def _write_text(path: Path, content: str, encoding: str, append: bool) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = content.encode(encoding)
    with path.open("ab" if append else "wb") as handle:
        handle.write(data)
    return len(data)


@builtin(
    "filesystem.write",
    "Write text to a file under the root (parents created): path, content, append=False.",
)
async def write(
    context: ToolContext, path: str, content: str, append: bool = False, encoding: str = "utf-8"
) -> ToolResult:
    if not isinstance(content, str):
        raise ValidationError("content", f"must be a string, got {type(content).__name__}")
    target = context.resolve(path)
    if target.is_dir():
        return failed(f"filesystem.write: {path!r} is a directory")
    try:
        written = await context.run_blocking(_write_text, target, content, encoding, append)
    except LookupError:
        raise ValidationError("encoding", f"unknown encoding {encoding!r}") from None
    return ok({"path": context.relative(target), "bytes": written, "append": bool(append)})


class Entry(TypedDict):
    """One entry of ``filesystem.list``: a size for files, None for directories."""

    name: str
    path: str
    type: str
    size: int | None


def _entries(directory: Path, context: ToolContext) -> tuple[list[Entry], bool]:
    entries: list[Entry] = []
    for child in sorted(directory.iterdir(), key=lambda child: child.name):
        if len(entries) == MAX_ENTRIES:
            return entries, True
        is_dir = child.is_dir()
        entries.append(
            {
                "name": child.name,
                "path": context.relative(child),
                "type": "directory" if is_dir else "file",
                "size": None if is_dir else child.stat().st_size,
            }
        )
    return entries, False


@builtin("filesystem.list", "List a directory under the root: path='.'.")
async def list_directory(context: ToolContext, path: str = ".") -> ToolResult:
    target = context.resolve(path)
    if not target.is_dir():
        return failed(f"filesystem.list: {path!r} is not a directory under the root")
    entries, truncated = await context.run_blocking(_entries, target, context)
    return ok({"path": context.relative(target), "entries": entries, "truncated": truncated})


TOOLS = (read, write, list_directory)
