"""``jupyter recall migrate`` / ``export`` / ``import``: move or back up a whole store.

Unlike the other subcommands these talk to no server: they open the stores by URL
(``open_store``). Stop the servers and schedulers on the source first, so that nothing fires
or changes while it is copied; see docs/store.md.
"""

from __future__ import annotations

import io
import itertools
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from jupyter_core.application import base_aliases, base_flags
from traitlets import Bool, Int, Unicode

from jupyter_recall.cli.base import EXIT_OK, Flag, RecallCommand
from jupyter_recall.cli.progress import ProgressBar
from jupyter_recall.core.errors import (
    RecallConnectionError,
    RecallError,
    StoreError,
    UsageError,
    ValidationError,
)
from jupyter_recall.store.base import Store
from jupyter_recall.store.export_lines import load_export, read_header, read_row, write_export
from jupyter_recall.store.transfer import copy_store, refuse_occupied, total_rows
from jupyter_recall.store.urls import MEMORY, SQLITE, open_store, sqlite_path, store_kind

_ALIASES: dict[str, str] = {
    **base_aliases,
    "from": "StoreCommand.source",
    "to": "StoreCommand.target",
    "batch": "StoreCommand.batch",
}
_FLAGS: dict[str, Flag] = {
    **{name: flag for name, flag in base_flags.items() if name in ("debug", "h", "help")},
    "force": (
        {"StoreCommand": {"force": True}},
        "Write into a target that already holds rows (rows it has are kept, the rest added).",
    ),
    "quiet": ({"StoreCommand": {"quiet": True}}, "No progress on stderr."),
}
FORMS = ("sqlite:///absolute/path", "postgresql://user:password@host:port/database")


@contextmanager
def opened(url: str, option: str, *, existing: bool = False) -> Iterator[Store]:
    """The store at ``url``, closed after; a bad URL is an error naming ``option``. An
    ``existing`` store is one to read: a SQLite file that is not there is refused rather than
    created empty (a typo would otherwise copy nothing and succeed). A SQLite file's missing
    directory is not made (a typo, as the scheduler says), and a store that cannot be opened
    (a PostgreSQL server down) is one line and exit status 3, as for a server not reached."""
    if not url:
        raise ValidationError(option, "give the store's URL", accepted=FORMS)
    try:
        if existing and store_kind(url) is SQLITE:
            _check_exists(sqlite_path(url), option)
        store = open_store(url, create_dirs=False)
    except ValidationError as exc:
        raise ValidationError(option, exc.message, accepted=exc.accepted) from None
    except StoreError as exc:
        why = " ".join(str(exc).split())
        raise RecallConnectionError(f"{option}: cannot open the store: {why}") from None
    try:
        yield store
    finally:
        store.close()


@contextmanager
def removed_if_failed(url: str) -> Iterator[None]:
    """A SQLite file that ``url`` names and that is not there yet is removed (with its WAL
    files) if what follows fails: a failed import leaves no new store behind."""
    path = _new_sqlite_file(url)
    try:
        yield
    except BaseException:
        for leftover in () if path is None else (path, f"{path}-wal", f"{path}-shm"):
            with suppress(OSError):
                Path(leftover).unlink()
        raise


def _new_sqlite_file(url: str) -> str | None:
    try:
        path = sqlite_path(url) if store_kind(url) is SQLITE else MEMORY
    except ValidationError:
        return None  # ``opened`` names the option
    return None if path == MEMORY or Path(path).exists() else path


def same_store(first: str, second: str) -> bool:
    """Whether two URLs name one store: SQLite files compared by their resolved paths
    (``sqlite:///tmp/x`` and ``sqlite:////tmp/./x`` are one file)."""
    try:
        if store_kind(first) is SQLITE and store_kind(second) is SQLITE:
            paths = [sqlite_path(url) for url in (first, second)]
            if MEMORY in paths:
                return False  # each in-memory database is its own
            return len({os.path.realpath("/" + path.lstrip("/")) for path in paths}) == 1
    except ValidationError:
        pass  # ``opened`` names the option
    return first == second


def _check_exists(path: str, option: str) -> None:
    if path != MEMORY and not Path(path).is_file():
        raise ValidationError(option, f"there is no SQLite file at {path!r}")


class StoreCommand(RecallCommand):
    """A subcommand that opens stores by URL instead of asking a server."""

    aliases = _ALIASES
    flags = _FLAGS
    source = Unicode(
        "", config=True, help="URL of the store to read (sqlite:///… or postgresql://…)."
    )
    target = Unicode(
        "", config=True, help="URL of the store to write (sqlite:///… or postgresql://…)."
    )
    force = Bool(False, config=True, help="Write into a target that already holds rows.")
    quiet = Bool(False, config=True, help="No progress on stderr.")
    batch = Int(500, config=True, help="Rows per read and per transaction.")

    def progress(self, label: str, total: int) -> ProgressBar:
        return ProgressBar(label, total, sys.stderr, quiet=self.quiet)

    def check_batch(self) -> None:
        if self.batch < 1:
            raise ValidationError("--batch", f"must be at least 1, got {self.batch}")

    def say(self, text: str) -> None:
        if not self.quiet:
            print(text, file=sys.stderr)


class MigrateCommand(StoreCommand):
    """Copy everything a store holds into another one (SQLite to PostgreSQL, or any pair)."""

    name = "jupyter recall migrate"
    usage = "--from URL --to URL [--force]"

    def run(self) -> int:
        self.positional(0)
        self.check_batch()
        if self.source and self.target and same_store(self.source, self.target):
            raise ValidationError("--to", "is the same store as --from")
        with (
            opened(self.source, "--from", existing=True) as source,
            opened(self.target, "--to") as target,
        ):
            if not self.force:
                refuse_occupied(target, "--to")
            bar = self.progress("migrate", total_rows(source))
            counts = copy_store(source, target, batch=self.batch, progress=bar)
            bar.finish()
        for table, (read, added) in counts.items():
            print(f"{table}: {read} read, {added} added, {read - added} already there")
        return EXIT_OK


class ExportCommand(StoreCommand):
    """Write a store as JSON lines (a portable backup) to FILE, or stdout without one."""

    name = "jupyter recall export"
    usage = "--from URL [FILE]"

    def run(self) -> int:
        args = self.positional(0, 1)
        self.check_batch()
        path = args[0] if args and args[0] != "-" else None
        with ExitStack() as stack:
            store = stack.enter_context(opened(self.source, "--from", existing=True))
            out = sys.stdout if path is None else _open(stack, path, "x")
            bar = self.progress("export", total_rows(store))
            try:
                written = write_export(
                    store, out, now=datetime.now(UTC), progress=bar, batch=self.batch
                )
                out.flush()
            except OSError as exc:
                raise _write_failed(exc, out, path) from None
            bar.finish()
        self.say(f"exported {written} rows")
        return EXIT_OK


class ImportCommand(StoreCommand):
    """Load an export (JSON lines, FILE or stdin with -) into a store, empty unless --force."""

    name = "jupyter recall import"
    usage = "FILE --to URL [--force]"

    def run(self) -> int:
        (path,) = self.positional(1)
        self.check_batch()
        with ExitStack() as stack:
            # The whole input is checked before the store is opened: a bad line imports
            # nothing, and leaves no empty SQLite file behind at --to.
            source = _stdin_utf8() if path == "-" else _open(stack, path, "r")
            name = "standard input" if path == "-" else repr(path)
            checked = _checked_whole(stack, source, name)
            stack.enter_context(removed_if_failed(self.target))
            store = stack.enter_context(opened(self.target, "--to"))
            if not self.force:
                refuse_occupied(store, "--to")
            bar = self.progress("import", checked.rows)
            added = load_export(checked.lines(), store, progress=bar, batch=self.batch)
            bar.finish()
        for table, count in added.items():
            print(f"{table}: {count} added")
        return EXIT_OK


class CheckedInput:
    """An export read once to check every line, to be read again to load it."""

    def __init__(self, source: IO[str], rows: int) -> None:
        self.source = source
        self.rows = rows

    def lines(self) -> Iterator[str]:
        self.source.seek(0)
        return iter(self.source)


@contextmanager
def _temporary_copy() -> Iterator[IO[str]]:
    with tempfile.TemporaryFile("w+", encoding="utf-8") as copy:
        yield copy


def _checked_whole(stack: ExitStack, source: IO[str], name: str) -> CheckedInput:
    """Every line of the export checked (its header, then each row, naming the first bad
    line); an input that cannot be read twice (standard input, a pipe) is kept in a
    temporary file meanwhile."""
    seekable = source.seekable()
    copy = source
    if not seekable:
        copy = stack.enter_context(_temporary_copy())
    rows = 0
    for number, line in enumerate(_checked_lines(source, name), start=1):
        if not seekable:
            copy.write(line)
        if number > 1 and line.strip():
            try:
                read_row(line, number)
            except ValidationError as exc:
                raise ValidationError(
                    exc.field, f"{exc.message}; nothing was imported", accepted=exc.accepted
                ) from None
            rows += 1
    return CheckedInput(copy, rows)


def _write_failed(exc: OSError, out: IO[str], path: str | None) -> RecallError:
    """A write that failed (a full disk): the partial file is removed, and what is left
    buffered for stdout goes nowhere, so that the exit does not fail again."""
    if path is None:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        where = "standard output"
    else:
        with suppress(OSError):
            out.close()
        with suppress(OSError):
            Path(path).unlink()
        where = f"{path!r} (the partial file is removed)"
    return RecallError(f"cannot write the export to {where}: {exc.strerror or exc}")


def _stdin_utf8() -> IO[str]:
    """Standard input read as UTF-8, as exports are written, whatever the locale."""
    return io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8")


def _checked_lines(source: IO[str], name: str) -> Iterator[str]:
    """The lines of an export, its header already read and checked (so that a file that is
    not an export is refused first); an input that is not UTF-8 is an error naming it."""
    lines = _utf8_lines(source, name)
    first = next(lines, None)
    if first is None:
        raise ValidationError("line 1", f"{name} is empty: not an export")
    read_header(first)
    return itertools.chain([first], lines)


def _utf8_lines(source: Iterable[str], name: str) -> Iterator[str]:
    try:
        yield from source
    except UnicodeDecodeError as exc:
        raise ValidationError(
            "FILE", f"{name} is not UTF-8 text ({exc.reason}): not an export"
        ) from None


def _open(stack: ExitStack, path: str, mode: str) -> IO[str]:
    """The file, closed with ``stack``; an export is created, never overwritten."""
    try:
        return stack.enter_context(Path(path).open(mode, encoding="utf-8"))
    except OSError as exc:
        doing = "create (an export never overwrites a file)" if mode == "x" else "read"
        why = exc.strerror
        directory = Path(path).parent
        if isinstance(exc, FileNotFoundError) and mode == "x" and not directory.is_dir():
            why = f"the directory {str(directory)!r} does not exist"
        raise UsageError(f"FILE: cannot {doing} {path!r}: {why}") from None
