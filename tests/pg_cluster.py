"""A throwaway PostgreSQL cluster for the tests and the benchmarks: ``initdb`` and ``pg_ctl``
from Debian's ``postgresql`` package, removed when done.

PostgreSQL refuses to run as root, and the tests run as root: the cluster then belongs to an
unprivileged user (``recall_pg``, created if missing) and its commands run through ``runuser``.
It listens on a unix socket in its own directory and on a free loopback port, trusts local
connections (nothing else can reach it) and trades durability for speed (``fsync=off``): it
holds nothing worth keeping. Commits still wait for their WAL to reach the operating system
(``synchronous_commit`` stays on), so a crash of the server alone (``crash()``, ``restart()``)
loses no acknowledged commit, as on a real deployment.

The pytest fixtures at the end give a new, empty database per test (``postgres_db_url``). They
skip only where the binaries are absent, and fail instead in CI (``CI=true``), where
``.ci/run`` installs them.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from itertools import count
from pathlib import Path

import pytest

USER = "recall_pg"
SUPERUSER = "postgres"
_SETTINGS = {
    "fsync": "off",
    "full_page_writes": "off",
    "max_connections": "300",
    "shared_buffers": "128MB",
}


def binaries() -> Path | None:
    """The directory of ``initdb`` and ``pg_ctl``: on PATH, or Debian's newest version."""
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent  # Debian's links in /usr/local/bin name initdb only
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda path: int(path.parent.parent.name) if path.parent.parent.name.isdigit() else 0,
    )
    return versions[-1].parent if versions else None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _ensure_user() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        added = subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER],
            check=False,
            capture_output=True,
            text=True,
        )
    try:
        # Another pytest-xdist worker may have added it first: useradd then fails, and the
        # user is there all the same.
        return pwd.getpwnam(USER)
    except KeyError:
        raise RuntimeError(f"useradd {USER} failed: {added.stderr.strip()}") from None


class Cluster:
    """One running cluster in a temporary directory; ``stop()`` removes it."""

    def __init__(self, bin_dir: Path) -> None:
        self.bin_dir = bin_dir
        self.as_root = os.geteuid() == 0
        self.root = Path(tempfile.mkdtemp(prefix="recall-pg-"))
        self.data = self.root / "data"
        self.sockets = self.root / "run"
        self.port = _free_port()
        self._names = count()
        if self.as_root:
            user = _ensure_user()
            os.chown(self.root, user.pw_uid, user.pw_gid)
        self.sockets.mkdir()
        if self.as_root:
            os.chown(self.sockets, user.pw_uid, user.pw_gid)

    def _command(self, name: str, *args: str) -> list[str]:
        command = [str(self.bin_dir / name), *args]
        return ["runuser", "-u", USER, "--", *command] if self.as_root else command

    def _run(self, name: str, *args: str) -> None:
        done = subprocess.run(
            self._command(name, *args), check=False, capture_output=True, text=True
        )
        if done.returncode != 0:
            raise RuntimeError(f"{name} failed ({done.returncode}): {done.stderr or done.stdout}")

    def start(self) -> Cluster:
        self._run(
            "initdb", "-D", str(self.data), "-U", SUPERUSER, "-A", "trust", "-E", "UTF8",
            "--no-sync", "--locale=C.UTF-8",
        )  # fmt: skip
        self._start_server()
        return self

    def stop(self) -> None:
        try:
            if (self.data / "postmaster.pid").exists():
                self._run("pg_ctl", "stop", "-D", str(self.data), "-m", "immediate", "-w")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def restart(self) -> None:
        """Stop the server abruptly (as a crash would) and start it again on the same data."""
        self.crash()
        self._start_server()

    def crash(self) -> None:
        """Stop the server abruptly, as a crash would; ``resume()`` starts it again."""
        self._run("pg_ctl", "stop", "-D", str(self.data), "-m", "immediate", "-w")

    def resume(self) -> None:
        self._start_server()

    def _start_server(self) -> None:
        options = {
            **_SETTINGS,
            "listen_addresses": "127.0.0.1",
            "port": str(self.port),
            "unix_socket_directories": str(self.sockets),
        }
        flags = " ".join(f"-c {name}={value}" for name, value in options.items())
        self._run(
            "pg_ctl", "start", "-w", "-t", "60", "-D", str(self.data),
            "-l", str(self.root / "server.log"), "-o", flags,
        )  # fmt: skip

    def url(self, database: str = "postgres") -> str:
        """A ``postgresql://`` URL of ``database`` through the unix socket."""
        return f"postgresql://{SUPERUSER}@/{database}?host={self.sockets}&port={self.port}"

    def tcp_url(self, database: str = "postgres", *, driver: str = "postgresql") -> str:
        """The URL of ``database`` over loopback TCP (``driver``: an SQLAlchemy scheme)."""
        return f"{driver}://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def _psql(self, sql: str) -> None:
        self._run(
            "psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", str(self.sockets),
            "-p", str(self.port), "-U", SUPERUSER, "-d", "postgres", "-c", sql,
        )  # fmt: skip

    def new_database_name(self) -> str:
        """A database name no test of this process has used."""
        return f"recall_{os.getpid()}_{next(self._names)}"

    def create_database(self, name: str | None = None) -> str:
        """A new, empty database (``name``, or a new name); returns its name."""
        name = name or self.new_database_name()
        self._psql(f"CREATE DATABASE {name} TEMPLATE template0 STRATEGY FILE_COPY")
        return name

    def drop_database(self, name: str) -> None:
        self._psql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _missing(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"PostgreSQL is required in CI: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    bin_dir = binaries()
    if bin_dir is None:
        _missing("PostgreSQL's binaries (initdb, pg_ctl) are not installed")
        raise AssertionError("unreachable: skip or fail raised")
    cluster = Cluster(bin_dir)
    try:
        yield cluster.start()
    finally:
        cluster.stop()


@pytest.fixture
def postgres_db_url(pg_cluster: Cluster) -> Iterator[str]:
    """The URL of a new, empty database on the session's cluster, dropped after the test."""
    name = pg_cluster.create_database()
    yield pg_cluster.url(name)
    pg_cluster.drop_database(name)
