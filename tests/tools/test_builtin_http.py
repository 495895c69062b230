"""http.get|post|download against a real HTTP server on loopback."""

from __future__ import annotations

from tests.tools.conftest import BIG


async def test_get_json_with_query_and_headers(runner, http_base):
    result = await runner.run_tool(
        "http.get", {"url": f"{http_base}/json", "params": {"q": "recall", "n": 2}}
    )
    assert result["success"] is True
    data = result["data"]
    assert data["status_code"] == 200
    assert data["json"] == {"query": {"q": "recall", "n": "2"}}
    assert data["headers"]["X-Test"] == "yes"
    assert data["truncated"] is False
    sent = await runner.run_tool(
        "http.get", {"url": f"{http_base}/headers", "headers": {"X-Agent": "recall"}}
    )
    assert sent["data"]["json"]["X-Agent"] == "recall"


async def test_get_text_uses_the_charset(runner, http_base):
    result = await runner.run_tool("http.get", {"url": f"{http_base}/text"})
    assert result["data"]["text"] == "héllo"
    assert "json" not in result["data"]


async def test_an_error_status_is_a_failure_that_keeps_the_response(runner, http_base):
    result = await runner.run_tool("http.get", {"url": f"{http_base}/missing"})
    assert result["success"] is False
    assert result["error"] == f"http.get: HTTP 404 Not Found from {http_base}/missing"
    assert result["data"]["status_code"] == 404
    assert result["data"]["text"] == "no such page"


async def test_post_json_and_form(runner, http_base):
    posted = await runner.run_tool("http.post", {"url": f"{http_base}/echo", "json": {"a": [1, 2]}})
    assert posted["data"]["status_code"] == 201
    assert posted["data"]["json"] == {"body": '{"a": [1, 2]}', "content_type": "application/json"}
    form = await runner.run_tool("http.post", {"url": f"{http_base}/echo", "data": {"k": "v w"}})
    assert form["data"]["json"] == {
        "body": "k=v+w",
        "content_type": "application/x-www-form-urlencoded",
    }
    both = await runner.run_tool("http.post", {"url": f"{http_base}/echo", "json": {}, "data": "x"})
    assert both["error"] == "http.post: json: give either json or data, not both"


async def test_a_large_body_is_cut_at_the_output_limit(runner, http_base):
    result = await runner.run_tool("http.get", {"url": f"{http_base}/big"})
    data = result["data"]
    assert data["truncated"] is True
    assert data["text"].endswith(f"\n[truncated: 1000000 of {BIG} bytes shown]")
    assert len(data["text"]) < 1_000_100


async def test_download_writes_under_the_root(runner, root, http_base):
    result = await runner.run_tool(
        "http.download", {"url": f"{http_base}/big", "path": "data/big.bin"}
    )
    assert result["success"] is True, result
    assert result["data"]["bytes"] == BIG
    assert result["data"]["path"] == "data/big.bin"
    assert (root / "data" / "big.bin").stat().st_size == BIG
    refused = await runner.run_tool(
        "http.download", {"url": f"{http_base}/big", "path": "../escape.bin"}
    )
    assert "is outside the tool root" in refused["error"]
    capped = await runner.run_tool(
        "http.download", {"url": f"{http_base}/big", "path": "capped.bin", "max_bytes": 1000}
    )
    assert capped["error"] == "http.download: max_bytes: the download exceeds 1000 bytes"
    assert not (root / "capped.bin").exists()
    assert not (root / "capped.bin.part").exists()
    missing = await runner.run_tool(
        "http.download", {"url": f"{http_base}/nope", "path": "nope.bin"}
    )
    assert missing["error"] == f"http.download: HTTP 404 Not Found from {http_base}/nope"


async def test_bad_urls_and_unreachable_hosts(runner, http_base):
    scheme = await runner.run_tool("http.get", {"url": "file:///etc/passwd"})
    assert scheme["error"] == (
        "http.get: url: unsupported scheme in 'file:///etc/passwd' (accepted: http, https)"
    )
    port = http_base.rsplit(":", 1)[1]
    closed = await runner.run_tool("http.get", {"url": f"http://127.0.0.1:1/{port}"})
    assert closed["success"] is False
    assert "Connection refused" in closed["error"]
    slow = await runner.run_tool("http.get", {"url": f"{http_base}/slow?t=2", "timeout": 0.2})
    assert slow["success"] is False
    assert "timed out" in slow["error"]
