"""A Jupyter server on PostgreSQL (``RecallApp.db_url=postgresql://…``): jobs created over its
REST API are in the database, fire, and their runs are there for any other server to read;
while the database is down the API answers 503 naming the cause, and works again after."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from tornado.httpclient import HTTPClientError

from jupyter_recall.core.model import RunStatus
from jupyter_recall.store.base import RunFilter
from jupyter_recall.store.postgres import PostgresStore
from jupyter_recall.store.urls import open_store
from tests.pg_cluster import Cluster
from tests.server.rest import call


@pytest.fixture
def recall_config(recall_config, postgres_db_url: str):
    recall_config["db_url"] = postgres_db_url
    return recall_config


async def test_a_server_on_postgresql_stores_and_fires_its_jobs_there(
    jp_fetch, postgres_db_url: str
):
    body = {"when": "in 1s", "action": {"type": "notification", "message": "hi"}}
    job = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201)
    deadline = time.monotonic() + 60
    while True:
        items = (await call(jp_fetch, "GET", f"api/recall/jobs/{job['id']}/runs"))["runs"]
        if items and items[0]["status"] == "succeeded":
            break
        assert time.monotonic() < deadline, f"no run succeeded: {items}"
        await asyncio.sleep(0.2)
    other = open_store(postgres_db_url)
    try:
        assert isinstance(other, PostgresStore)
        assert other.get_job(job["id"], owner=None).name == job["name"]
        (run,) = other.list_runs(owner=None, where=RunFilter(job_id=job["id"]))
        assert run.status is RunStatus.SUCCEEDED
        assert run.id == items[0]["id"]
    finally:
        other.close()


async def status_of(jp_fetch, path: str) -> int:
    try:
        response = await jp_fetch(path, method="GET")
    except HTTPClientError as error:
        return error.code
    return int(response.code)


async def test_while_the_database_is_down_the_api_answers_503_then_resumes(
    jp_fetch, pg_cluster: Cluster
):
    await call(jp_fetch, "GET", "api/recall/jobs")
    await asyncio.to_thread(pg_cluster.crash)
    try:
        with pytest.raises(HTTPClientError) as caught:
            await jp_fetch("api/recall/jobs", method="GET")
        assert caught.value.code == 503
        assert caught.value.response is not None
        body = json.loads(caught.value.response.body)
        assert body["reason"] == "StoreError"
        assert "PostgreSQL" in body["message"]
    finally:
        await asyncio.to_thread(pg_cluster.resume)
    # The first call after the restart may still meet the old connection (and replace it).
    codes = [await status_of(jp_fetch, "api/recall/jobs") for _ in range(3)]
    assert codes[-1] == 200
    assert set(codes) <= {200, 503}
