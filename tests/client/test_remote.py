"""``Client.url`` and ``api_path``: an id travels as one escaped segment; no path leaves the API."""

from __future__ import annotations

import pytest

from jupyter_recall.client.remote import Client, ServerInfo, api_path
from jupyter_recall.core.errors import ValidationError

CLIENT = Client(ServerInfo("http://127.0.0.1:8888/base/", "", "test"))


@pytest.mark.parametrize(
    ("segments", "path"),
    [
        (("jobs", "abc123"), "/api/recall/jobs/abc123"),
        (("jobs", "a b", "runs"), "/api/recall/jobs/a%20b/runs"),
        (("jobs", "x?y=1"), "/api/recall/jobs/x%3Fy%3D1"),
        (
            ("jobs", "../../../api/kernels?x=", "cancel"),
            ("/api/recall/jobs/..%2F..%2F..%2Fapi%2Fkernels%3Fx%3D/cancel"),
        ),
        (("runs", ".."), "/api/recall/runs/%2E%2E"),
        (("runs", "."), "/api/recall/runs/%2E"),
        (("approvals", "a#b%c"), "/api/recall/approvals/a%23b%25c"),
    ],
)
def test_each_segment_is_escaped_whole(segments, path):
    assert api_path(*segments) == path
    assert CLIENT.url(path) == "http://127.0.0.1:8888/base" + path


def test_an_empty_segment_is_refused():
    with pytest.raises(ValidationError, match="ID: is empty"):
        api_path("jobs", "")


@pytest.mark.parametrize("path", ["/api/recall/jobs/../../kernels", "/api/recall/./jobs", "../x"])
def test_the_url_of_a_path_never_climbs_out(path):
    with pytest.raises(ValidationError, match=r"'\.' or '\.\.' segment"):
        CLIENT.url(path)


def test_the_url_is_under_the_base_and_keeps_its_query():
    assert CLIENT.url("/api/recall/jobs", {"limit": "5", "cursor": None}) == (
        "http://127.0.0.1:8888/base/api/recall/jobs?limit=5"
    )
    # A path that looks like a URL stays a path of this server.
    assert CLIENT.url("http://elsewhere/x").startswith("http://127.0.0.1:8888/base/")


def test_a_url_too_long_for_the_server_is_refused_naming_the_longest_value():
    query = {"limit": "5", "q": "x" * 70_000}
    with pytest.raises(ValidationError, match=r"^q: makes the request's URL 70,\d{3} characters"):
        CLIENT.url("/api/recall/jobs", query)
    with pytest.raises(ValidationError, match=r"^path: "):
        CLIENT.url(api_path("jobs", "y" * 70_000))
    assert len(CLIENT.url("/api/recall/jobs", {"q": "x" * 55_000})) > 55_000
