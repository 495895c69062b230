"""The stores the contract runs on: every ``test_contract_*`` test runs once per kind of store.

A kind of store joins the contract with one entry in ``STORES``: the name of a fixture giving
the URL of a new, empty database for one test (``open_store`` opens it with
``jupyter_recall.store.urls.open_store``, as the server does).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_recall.store.base import Store
from jupyter_recall.store.urls import open_store as open_url
from jupyter_recall.store.urls import sqlite_url
from tests.store.factories import OpenStore, closing_all

STORES = {"sqlite": "sqlite_db_url", "postgresql": "postgres_db_url"}
"""Kind of store -> the fixture giving the URL of a new database."""


@pytest.fixture
def sqlite_db_url(tmp_path: Path) -> str:
    return sqlite_url(tmp_path / "contract" / "recall.sqlite")


@pytest.fixture(params=sorted(STORES))
def store_url(request: pytest.FixtureRequest) -> str:
    url: str = request.getfixturevalue(STORES[request.param])
    return url


@pytest.fixture
def open_store(store_url: str) -> Iterator[OpenStore]:
    with closing_all(lambda: open_url(store_url)) as open_one:
        yield open_one


@pytest.fixture
def store(open_store: OpenStore) -> Store:
    return open_store()
