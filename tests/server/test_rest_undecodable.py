"""What tornado refuses before any of our code reads it (a query argument that is not UTF-8, a
form body it cannot parse) is answered as our own refusals are: a 400 naming the field, in the
API's error format."""

from __future__ import annotations

import json

import pytest
from tornado.httpclient import AsyncHTTPClient

from tests.server.rest import check_response


@pytest.fixture
def served(jp_fetch, jp_http_port, jp_base_url, jp_auth_header):
    """The live server's address and credentials (jp_fetch starts it)."""
    return jp_http_port, jp_base_url, jp_auth_header


async def fetch(served, path, *, method="GET", body=None, content_type=None):
    port, base_url, headers = served
    url = f"http://localhost:{port}{base_url}{path}"
    if content_type is not None:
        headers = {**headers, "Content-Type": content_type}
    response = await AsyncHTTPClient().fetch(
        url, method=method, body=body, headers=headers, raise_error=False
    )
    return response.code, json.loads(response.body)


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("q=%ED%A0%80", "q"),  # a lone surrogate, UTF-8 encoded: not UTF-8 text
        ("order=%FF", "order"),
        ("status=active&q=ok&sort=%C3", "sort"),
    ],
)
async def test_a_query_argument_that_is_not_utf8_is_a_400_naming_it(served, query, field):
    code, body = await fetch(served, f"api/recall/jobs?{query}")
    assert code == 400
    assert body["field"] == field
    assert "not UTF-8" in body["message"]
    check_response("GET", "/api/recall/jobs", code, body)


async def test_a_form_body_tornado_cannot_parse_is_a_400_naming_body(served):
    code, body = await fetch(
        served,
        "api/recall/jobs",
        method="POST",
        body=b"--x\r\nnot a part",
        content_type="multipart/form-data; boundary=x",
    )
    assert code == 400
    assert body["field"] == "body"
    check_response("POST", "/api/recall/jobs", code, body)
