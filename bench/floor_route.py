"""The floor of creating one job over REST: a route doing only what any such route must.

A jupyter_server extension that ``rest.py --floor`` loads beside jupyter_recall. Its
``POST /api/recall-bench/floor`` passes jupyter_server's authentication and authorization as
``POST /api/recall/jobs`` does, decodes the JSON body, inserts one row into a SQLite file of
its own (the schema, indexes and settings of the store: WAL, ``synchronous=NORMAL``, the same
off-commit checkpointer) in one transaction, and answers 201 with a creation's answer text.
What it leaves out is the product's own work: validating the body, reading ``when``, the
typed records, the events, building the answer. Its rate beside the status route is the
ratio no creation route on this server, this store and this machine can pass.

The row and the answer are those of a real job, made once when the extension loads; each
request writes the row under a new id and with its instants moved to the request's time (as a
new job's are: in the indexes on them, each new row goes after the others), with NULL written
in the statement where the row has None: the store's own statement (``store/sqlite.py``
``_insert_statement``).
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from datetime import UTC, datetime
from typing import Any

import orjson
from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.serverapp import ServerApp
from tornado import web

from jupyter_recall.core.model import new_id
from jupyter_recall.core.records import NotificationAction
from jupyter_recall.engine.jobs import NewJob, build_job
from jupyter_recall.server.handlers import created_job_json
from jupyter_recall.store import codec
from jupyter_recall.store.rows import JobRow
from jupyter_recall.store.sqlite import _insert_statement
from jupyter_recall.store.sqlite_checkpoint import BACKSTOP_PAGES, Checkpointer
from jupyter_recall.store.urls import open_store

PATH = "/api/recall-bench/floor"
DB_ENV = "RECALL_BENCH_FLOOR_DB"
"""The environment variable naming the floor's SQLite file (``rest.py`` sets it)."""
_NOW = ("created_at", "updated_at")
_DUE = ("next_occurrence", "next_fire_at")
DUE_IN_US = 86_400_000_000
"""The row's occurrence, a day after its creation (``in 1 day``), in microseconds."""


class _FloorStore:
    """One connection to a file migrated by the store, written as the store writes."""

    def __init__(self, path: str) -> None:
        open_store(f"sqlite:///{path}").close()  # the store's schema, indexes and WAL mode
        self._conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._conn.execute("PRAGMA synchronous = NORMAL")
        self._conn.execute(f"PRAGMA wal_autocheckpoint = {BACKSTOP_PAGES}")
        self._checkpointer = Checkpointer(path, busy_timeout=5.0)
        job = build_job(
            NewJob(when="in 1 day", name="bench", action=NotificationAction(message="hello")),
            owner="bench",
            now=datetime.now(UTC),
            default_tz="UTC",
        )
        row = codec.job_rows([job])[0]
        self._sql, values = _insert_statement("jobs", JobRow._fields, [row])
        (self._values,) = [list(value) for value in values]
        # Where each instant is among the values bound (the None columns are not).
        names = [name for name, value in zip(JobRow._fields, row, strict=True) if value is not None]
        self._now_at = [names.index(name) for name in _NOW]
        self._due_at = [names.index(name) for name in _DUE]
        self.answer: dict[str, Any] = dict(created_job_json(job))

    def insert(self) -> str:
        job_id = new_id()
        values = self._values.copy()
        values[0] = job_id  # the id is the first column
        now = time.time_ns() // 1000
        for index in self._now_at:
            values[index] = now
        for index in self._due_at:
            values[index] = now + DUE_IN_US
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            self._conn.execute(self._sql, values)
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")
        return job_id


class FloorHandler(APIHandler):
    auth_resource = "api"

    @web.authenticated
    @authorized
    def post(self) -> None:
        json.loads(self.request.body)
        store: _FloorStore = self.settings["recall_bench_floor"]
        job_id = store.insert()
        self.set_status(201)
        self.finish(orjson.dumps({**store.answer, "id": job_id}))


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "floor_route"}]


def _load_jupyter_server_extension(serverapp: ServerApp) -> None:
    serverapp.web_app.settings["recall_bench_floor"] = _FloorStore(os.environ[DB_ENV])
    serverapp.web_app.add_handlers(".*$", [(PATH, FloorHandler)])
