"""What a page of jobs costs over REST when the server holds many.

Starts a real `jupyter server` with the extension, creates ``--jobs`` jobs through
``POST /api/recall/jobs`` in batches of 1,000 (one-shots and intervals with varied names and
fire times), then times, on one authenticated keep-alive connection, each listing a client
makes: the first page, a page deep in the listing (through the cursors), each sort key, a
search, a filter, and the counts route. Each figure is the median of ``--rounds`` requests.

    python bench/listing.py --jobs 100000 --limit 50 [--json]

Target: a page of 50 in well under 100 ms with 100,000 jobs held. Figures are printed, never
asserted.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import time
from typing import Any
from urllib.parse import urlencode

from served import HEADERS, live_server

from tests.server.live_server import LiveServer

BATCH = 1_000


class Client:
    """One keep-alive connection to the server."""

    def __init__(self, server: LiveServer) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=600)

    def call(self, method: str, path: str, body: Any = None) -> tuple[Any, int]:
        data = json.dumps(body) if body is not None else None
        self.connection.request(method, path, body=data, headers=HEADERS)
        response = self.connection.getresponse()
        raw = response.read()
        if response.status >= 300:
            raise RuntimeError(f"{method} {path}: {response.status} {raw[:300]!r}")
        return json.loads(raw), len(raw)


def fill(client: Client, jobs: int) -> float:
    """Create the jobs; the creation rate (jobs/s) in batches."""
    started = time.perf_counter()
    for first in range(0, jobs, BATCH):
        batch = [
            {
                "name": f"job {n} {'report' if n % 10 == 0 else 'check'}",
                "when": f"every {n % 50 + 1} minutes" if n % 2 else f"in {n % 5000 + 10} minutes",
                "action": {"type": "notification", "message": "hello"},
            }
            for n in range(first, min(first + BATCH, jobs))
        ]
        client.call("POST", "/api/recall/jobs", {"jobs": batch})
    return jobs / (time.perf_counter() - started)


def timed(client: Client, path: str, rounds: int) -> dict[str, Any]:
    times, size, document = [], 0, None
    for _ in range(rounds):
        started = time.perf_counter()
        document, size = client.call("GET", path)
        times.append((time.perf_counter() - started) * 1000)
    items = document.get("jobs", []) if isinstance(document, dict) else []
    return {"median_ms": round(statistics.median(times), 2), "bytes": size, "items": len(items)}


def deep_cursor(client: Client, limit: int, pages: int) -> str | None:
    """The cursor after ``pages`` pages of the default listing."""
    cursor = None
    for _ in range(pages):
        query = {"limit": limit, **({"cursor": cursor} if cursor else {})}
        document, _ = client.call("GET", f"/api/recall/jobs?{urlencode(query)}")
        cursor = document["next_cursor"]
        if cursor is None:
            break
    return cursor


def measure(client: Client, limit: int, rounds: int) -> dict[str, Any]:
    base = "/api/recall/jobs?"
    queries = {
        "first_page": {"limit": limit},
        "sort_next_fire_at": {"limit": limit, "sort": "next_fire_at"},
        "sort_name": {"limit": limit, "sort": "name"},
        "sort_last_run_at": {"limit": limit, "sort": "last_run_at"},
        "search": {"limit": limit, "q": "report"},
        "filter_interval": {"limit": limit, "schedule_kind": "interval", "sort": "next_fire_at"},
    }
    figures = {name: timed(client, base + urlencode(q), rounds) for name, q in queries.items()}
    cursor = deep_cursor(client, limit, 20)
    if cursor is not None:
        deep = urlencode({"limit": limit, "cursor": cursor})
        figures["page_21"] = timed(client, base + deep, rounds)
    figures["counts"] = timed(client, "/api/recall/jobs/counts", rounds)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=100_000)
    parser.add_argument("--limit", type=int, default=50, help="page size")
    parser.add_argument("--rounds", type=int, default=15, help="requests per figure")
    parser.add_argument("--json", action="store_true", help="print one JSON object only")
    args = parser.parse_args()
    with live_server() as server:
        client = Client(server)
        create_per_s = fill(client, args.jobs)
        result = {
            "jobs": args.jobs,
            "limit": args.limit,
            "batch_create_per_s": round(create_per_s),
            "pages": measure(client, args.limit, args.rounds),
        }
    if not args.json:
        for name, figure in result["pages"].items():
            print(f"{name:>20}: {figure['median_ms']:8.2f} ms  {figure['bytes']:>8} bytes")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
