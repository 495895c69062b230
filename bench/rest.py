"""Creating one job over REST against jupyter_server's own trivial authenticated route.

Starts a real `jupyter server` with the extension and, on one authenticated keep-alive
connection, alternates rounds of ``--requests`` single ``POST /api/recall/jobs`` (one job each,
due in a day: nothing fires during the run) with rounds of as many ``GET /api/status``
(jupyter_server's own handler: authentication, a small JSON answer). Each rate is the median
over ``--rounds`` rounds; measured side by side in one run, so the machine's load weighs on
both alike. The ratio is jobs/s over status/s. Beside the rates, the server process's CPU time
per request of each kind (``/proc``, Linux): on a loaded machine the rates swing with other
processes' work, the CPU a request costs much less.

    python bench/rest.py --requests 2000 --rounds 5 [--floor] [--json]

Target: a ratio of at least 0.7. Figures are printed, never asserted.

``--floor`` alternates a third kind of round: ``POST /api/recall-bench/floor``
(bench/floor_route.py), a route that only authenticates, decodes the body, inserts one job row
the way the store does and answers a creation's text. Its ratio to the status route is the
ceiling any creation route has on this server, store and machine; what separates ours from it
is the product's own work, and ``create_to_floor_ratio`` (jobs/s over floor/s) says how
much of the ceiling a creation reaches.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import time
from pathlib import Path

from floor_route import PATH as FLOOR_PATH
from served import HEADERS, live_server

from tests.server.live_server import LiveServer

JOB = json.dumps(
    {
        "when": "in 1 day",
        "name": "bench",
        "action": {"type": "notification", "message": "hello"},
    }
)


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of process ``pid`` so far (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rate(connection: http.client.HTTPConnection, method: str, path: str, count: int) -> float:
    """Requests per second of ``count`` requests sent one after the other."""
    body = JOB if method == "POST" else None
    expected = 201 if method == "POST" else 200
    started = time.perf_counter()
    for _ in range(count):
        connection.request(method, path, body=body, headers=HEADERS)
        response = connection.getresponse()
        answer = response.read()
        if response.status != expected:
            raise RuntimeError(f"{method} {path}: {response.status} {answer[:300]!r}")
    return count / (time.perf_counter() - started)


ROUTES = {
    "create": ("POST", "/api/recall/jobs"),
    "status": ("GET", "/api/status"),
    "floor": ("POST", FLOOR_PATH),
}


def measure(
    server: LiveServer, requests: int, rounds: int, *, floor: bool = False
) -> dict[str, float]:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
    kinds = ["create", "status", "floor"] if floor else ["create", "status"]
    # A warm-up of each, so that none pays for first-request costs in its first round.
    for kind in kinds:
        rate(connection, *ROUTES[kind], 50)
    assert server.process is not None
    pid = server.process.pid
    rates: dict[str, list[float]] = {kind: [] for kind in kinds}
    cpu = dict.fromkeys(kinds, 0.0)
    for _ in range(rounds):
        for kind in kinds:
            before = cpu_seconds(pid)
            rates[kind].append(rate(connection, *ROUTES[kind], requests))
            cpu[kind] += cpu_seconds(pid) - before
    connection.close()
    median = {kind: statistics.median(rates[kind]) for kind in kinds}
    per_request = 1e6 / (requests * rounds)
    figures = {  # CPU per request: ticks of 10 ms over all rounds, so long rounds read finer
        "create_job_per_s": round(median["create"], 1),
        "status_per_s": round(median["status"], 1),
        "ratio": round(median["create"] / median["status"], 3),
        "server_cpu_us_per_create": round(cpu["create"] * per_request),
        "server_cpu_us_per_status": round(cpu["status"] * per_request),
    }
    if floor:
        figures["floor_per_s"] = round(median["floor"], 1)
        figures["floor_ratio"] = round(median["floor"] / median["status"], 3)
        figures["create_to_floor_ratio"] = round(median["create"] / median["floor"], 3)
        figures["server_cpu_us_per_floor"] = round(cpu["floor"] * per_request)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000, help="requests per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--floor", action="store_true", help="also measure the floor route (bench/floor_route.py)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object only")
    args = parser.parse_args()
    with live_server(floor=args.floor) as server:
        figures = measure(server, args.requests, args.rounds, floor=args.floor)
    result = {"requests": args.requests, "rounds": args.rounds, **figures}
    if not args.json:
        print(
            f"POST /api/recall/jobs: {figures['create_job_per_s']:.0f}/s   "
            f"GET /api/status: {figures['status_per_s']:.0f}/s   ratio {figures['ratio']:.2f}   "
            f"server CPU per request: {figures['server_cpu_us_per_create']} µs (create), "
            f"{figures['server_cpu_us_per_status']} µs (status)"
        )
        if args.floor:
            print(
                f"floor route: {figures['floor_per_s']:.0f}/s   "
                f"ratio {figures['floor_ratio']:.2f}   "
                f"server CPU per request: {figures['server_cpu_us_per_floor']} µs   "
                f"creation to floor: {figures['create_to_floor_ratio']:.2f}"
            )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
