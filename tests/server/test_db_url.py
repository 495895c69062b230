"""``RecallApp.db_url``: the server opens its store from a URL; ``db_path`` keeps working and
``db_url`` wins when both are set."""

from __future__ import annotations

from pathlib import Path

import pytest
from traitlets import TraitError

from jupyter_recall.server.app import RecallApp
from jupyter_recall.store.sqlite import SQLiteStore
from jupyter_recall.store.urls import sqlite_url
from tests.server.rest import call


@pytest.fixture
def chosen(tmp_path: Path) -> Path:
    return tmp_path / "chosen" / "by-url.sqlite"


@pytest.fixture
def recall_config(recall_config, chosen: Path):
    recall_config["db_url"] = sqlite_url(chosen)  # beside the test-wide db_path
    return recall_config


async def test_the_server_opens_the_store_of_db_url_over_db_path(
    jp_fetch, chosen: Path, recall_config
):
    body = {"when": "in 1h", "action": {"type": "notification", "message": "hi"}}
    job = await call(jp_fetch, "POST", "api/recall/jobs", body, expect=201)
    store = SQLiteStore(chosen)
    try:
        assert store.get_job(job["id"], owner=None).name == job["name"]
    finally:
        store.close()
    assert not Path(recall_config["db_path"]).exists()


def test_db_url_defaults_to_the_sqlite_file_of_db_path(tmp_path: Path) -> None:
    path = tmp_path / "data dir" / "recall.sqlite"
    assert RecallApp(db_path=str(path)).db_url == sqlite_url(path)
    assert RecallApp(db_path=str(path), db_url="sqlite:///:memory:").db_url == "sqlite:///:memory:"


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("mysql://db/recall", r"RecallApp\.db_url: unknown scheme 'mysql'.*accepted: sqlite"),
        ("sqlite:recall.sqlite", r"RecallApp\.db_url: .* absolute path.*sqlite:///:memory:"),
    ],
)
def test_a_db_url_this_release_cannot_open_is_refused_naming_the_option(
    url: str, said: str
) -> None:
    with pytest.raises(TraitError, match=said):
        RecallApp(db_url=url)
