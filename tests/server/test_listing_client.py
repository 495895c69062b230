"""``remote.Client.pages`` and ``every`` against a real server: every page, in order, once."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from jupyter_recall.client.remote import Client, ServerInfo
from jupyter_recall.core.errors import ValidationError
from tests.server.live_server import TOKEN, LiveServer


# The names hold a letter no hex job id can: the search matches ids too.
@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    base = tmp_path_factory.mktemp("listing-client")
    (base / "root").mkdir()
    server = LiveServer(base / "root", base / "recall.sqlite").start()
    body = {
        "jobs": [
            {
                "when": f"in {n + 1}h",
                "name": f"k{n}",
                "action": {"type": "notification", "message": "x"},
            }
            for n in range(7)
        ]
    }
    server.request("POST", "/api/recall/jobs", body)
    yield Client(ServerInfo(url=server.url, token=TOKEN, source="test"))
    server.stop()


def test_pages_follow_the_cursor_to_the_last_page(client: Client) -> None:
    query = {"limit": "3", "sort": "name"}
    pages = list(client.pages("/api/recall/jobs", "jobs", query=query))
    assert [len(page) for page in pages] == [3, 3, 1]
    assert [job["name"] for page in pages for job in page] == [f"k{n}" for n in range(7)]


def test_every_reads_all_with_the_filters(client: Client) -> None:
    assert len(client.every("/api/recall/jobs", "jobs")) == 7
    assert [job["name"] for job in client.every("/api/recall/jobs", "jobs", query={"q": "K3"})] == [
        "k3"
    ]


def test_a_bad_sort_is_the_servers_validation_error(client: Client) -> None:
    with pytest.raises(ValidationError) as caught:
        list(client.pages("/api/recall/jobs", "jobs", query={"sort": "owner"}))
    assert caught.value.field == "sort"
