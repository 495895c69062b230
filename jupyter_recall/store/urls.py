"""Open a store from a URL: the one place outside the stores' own modules that names them.

``sqlite:///absolute/path`` opens (and creates) that SQLite file, creating its directory if
needed (unless ``create_dirs=False``: the standalone scheduler's explicit URL, where a missing
directory is a typo, not a first start); ``sqlite:///:memory:`` a throwaway in-memory
database; ``postgresql://`` (or ``postgres://``) a PostgreSQL database, in any URL form libpq
reads (``store/postgres.py``, the ``postgres`` extra). Each kind of store is a ``StoreKind`` in
``KINDS``, under its URL scheme; its module (and driver) is imported only when a store of that
kind is opened.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import SplitResult, quote, unquote, urlsplit

from jupyter_recall.core.errors import StoreError, ValidationError
from jupyter_recall.store.base import Store

FIELD = "db_url"
MEMORY = ":memory:"


@dataclass(frozen=True, slots=True)
class StoreKind:
    """A kind of store: the URL scheme that names it, the forms its URLs take (for error
    messages), how to check one without opening it, and how to open it."""

    scheme: str
    forms: tuple[str, ...]
    check: Callable[[str], object]
    """ValidationError naming ``db_url`` if the URL does not name a store of this kind."""
    open: Callable[[str, bool], Store]
    """The store of a URL; the flag: whether to make a file's missing directories."""


def sqlite_url(path: str | os.PathLike[str]) -> str:
    """The URL of a SQLite file (``RecallApp.db_path``), made absolute."""
    return f"sqlite://{quote(str(Path(path).absolute()))}"


def sqlite_path(url: str) -> str:
    """The file (or ``:memory:``) a ``sqlite:`` URL names; ValidationError naming ``db_url``
    when it is not one of the accepted forms."""
    parts = urlsplit(url)
    if parts.netloc or parts.query or parts.fragment or not parts.path.startswith("/"):
        raise ValidationError(
            FIELD, f"{url!r} is not a SQLite URL of an absolute path", accepted=SQLITE.forms
        )
    # ``sqlite:///$HOME/x`` gives ``sqlite:////home/u/x``: one leading slash, as shown and
    # opened (POSIX leaves the meaning of a path starting with exactly two slashes open).
    path = "/" + unquote(parts.path).lstrip("/")
    return MEMORY if path == f"/{MEMORY}" else path


def _open_sqlite(url: str, create_dirs: bool) -> Store:
    from jupyter_recall.store.sqlite import SQLiteStore

    path = sqlite_path(url)
    if path != MEMORY:
        _directory_of(path, create_dirs)
    # Stores opened by URL serve an engine (a server, the standalone scheduler) or a transfer:
    # their commits should not wait on the log's checkpoints.
    return SQLiteStore(path, background_checkpoints=True)


def _directory_of(path: str, create: bool) -> None:
    """The directory of a SQLite file made if missing; StoreError naming the file if it
    cannot be, or must not be (``create`` false)."""
    directory = Path(path).parent
    if not create:
        if not directory.exists():
            raise StoreError(
                f"the directory {str(directory)!r} of the SQLite file {path!r} does not exist: "
                "create it first "
                "(it is not made, so that a mistyped path does not start a new, empty store)"
            )
        return
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot make the directory of the SQLite file {path!r}: {exc}") from exc


SQLITE = StoreKind(
    "sqlite", ("sqlite:///absolute/path", f"sqlite:///{MEMORY}"), sqlite_path, _open_sqlite
)


def postgres_url(url: str) -> str:
    """A ``postgresql://`` (or ``postgres://``) URL as libpq reads it; ValidationError naming
    ``db_url`` when it is not one. The driver is not needed to check it."""
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("postgresql", "postgres") or parts.fragment:
        raise ValidationError(
            FIELD, "not a PostgreSQL URL (postgresql://...)", accepted=POSTGRESQL.forms
        )
    _readable_authority(url)
    return url


_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


def _readable_authority(url: str) -> None:
    """Refuse what libpq would misread, without repeating the URL (it may hold a password,
    and libpq's own message would show it, whole or in part): a ``%`` that starts no
    percent-encoded byte, or a port that is no number (a ``/`` or ``@`` in a password)."""
    parts = urlsplit(url)
    if _BAD_ESCAPE.search(parts.netloc + parts.path):
        raise ValidationError(
            FIELD,
            "a '%' in the URL must start a percent-encoded byte: write a password's '%' as "
            "%25 (and '/', '@', ':' as %2F, %40, %3A)",
            accepted=POSTGRESQL.forms,
        )
    if not _port_readable(parts):
        raise ValidationError(
            FIELD,
            "its port is no number: percent-encode a '/', '@' or ':' in the user or password "
            "(%2F, %40, %3A)",
            accepted=POSTGRESQL.forms,
        )


def _port_readable(parts: SplitResult) -> bool:
    # urlsplit reads the port only when asked for it, and refuses one that is no number.
    try:
        return parts.port is None or parts.port >= 0
    except ValueError:
        return False


def _open_postgres(url: str, create_dirs: bool) -> Store:
    """``create_dirs`` means nothing here: a database server has no directory to make."""
    try:
        from jupyter_recall.store.postgres import PostgresStore
    except ImportError as exc:
        raise ValidationError(
            FIELD,
            f"PostgreSQL needs the postgres extra: pip install 'jupyter_recall[postgres]' ({exc})",
            accepted=SQLITE.forms,
        ) from None
    return PostgresStore(url)


POSTGRESQL = StoreKind(
    "postgresql",
    (
        "postgresql://user:password@host:port/database",
        "postgresql://user@/database?host=/socket/directory",
    ),
    postgres_url,
    _open_postgres,
)
KINDS: dict[str, StoreKind] = {
    SQLITE.scheme: SQLITE,
    POSTGRESQL.scheme: POSTGRESQL,
    "postgres": POSTGRESQL,
}


_FORMS = list(dict.fromkeys(form for known in KINDS.values() for form in known.forms))


def store_kind(url: str) -> StoreKind:
    """The kind of store a URL names, the URL checked against its forms. The error never
    repeats the URL of an unknown kind, which may hold a password."""
    try:
        scheme = urlsplit(url).scheme.lower()
    except ValueError:
        # An unclosed '[' of an IPv6 host, say: its message names no field.
        raise ValidationError(FIELD, "not a URL that can be read", accepted=_FORMS) from None
    kind = KINDS.get(scheme)
    if kind is None:
        said = f"unknown scheme {scheme!r}" if scheme else "not a URL (scheme://...)"
        raise ValidationError(FIELD, said, accepted=_FORMS)
    kind.check(url)
    return kind


def open_store(url: str, *, create_dirs: bool = True) -> Store:
    """The store a URL names (every concern of ``Store``), migrated to this release's schema.

    ``create_dirs``: make the missing directories of a SQLite file (a server's default store,
    in a data directory not made yet); false, their absence is a StoreError.
    ValidationError naming ``db_url`` for a URL this release cannot open; StoreError when the
    store itself cannot be opened."""
    return store_kind(url).open(url, create_dirs)
