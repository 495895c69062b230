"""Creating one job over REST against jupyter_server's own trivial authenticated route.

Starts a real `jupyter server` with the extension and, on one authenticated keep-alive
connection, alternates rounds of ``--requests`` single ``POST /api/recall/jobs`` (one job each,
due in a day: nothing fires during the run) with rounds of as many ``GET /api/status``
(jupyter_server's own handler: authentication, a small JSON answer). Each rate is the median
over ``--rounds`` rounds; measured side by side in one run, so the machine's load weighs on
both alike. The ratio is jobs/s over status/s. Beside the rates, the server process's CPU time
per request of each kind (``/proc``, Linux): on a loaded machine the rates swing with other
processes' work, the CPU a request costs much less.

    python bench/rest.py --requests 2000 --rounds 5 [--json]

Target: a ratio of at least 0.7. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import time
from pathlib import Path

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


def measure(server: LiveServer, requests: int, rounds: int) -> dict[str, float]:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
    # A warm-up of each, so that neither pays for first-request costs in its first round.
    rate(connection, "GET", "/api/status", 50)
    rate(connection, "POST", "/api/recall/jobs", 50)
    assert server.process is not None
    pid = server.process.pid
    jobs, status = [], []
    cpu = {"POST": 0.0, "GET": 0.0}
    for _ in range(rounds):
        for method, path, rates in (
            ("POST", "/api/recall/jobs", jobs),
            ("GET", "/api/status", status),
        ):
            before = cpu_seconds(pid)
            rates.append(rate(connection, method, path, requests))
            cpu[method] += cpu_seconds(pid) - before
    connection.close()
    job_rate, status_rate = statistics.median(jobs), statistics.median(status)
    per_request = 1e6 / (requests * rounds)
    return {  # CPU per request: ticks of 10 ms over all rounds, so long rounds read finer
        "create_job_per_s": round(job_rate, 1),
        "status_per_s": round(status_rate, 1),
        "ratio": round(job_rate / status_rate, 3),
        "server_cpu_us_per_create": round(cpu["POST"] * per_request),
        "server_cpu_us_per_status": round(cpu["GET"] * per_request),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000, help="requests per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print one JSON object only")
    args = parser.parse_args()
    with live_server() as server:
        figures = measure(server, args.requests, args.rounds)
    result = {"requests": args.requests, "rounds": args.rounds, **figures}
    if not args.json:
        print(
            f"POST /api/recall/jobs: {figures['create_job_per_s']:.0f}/s   "
            f"GET /api/status: {figures['status_per_s']:.0f}/s   ratio {figures['ratio']:.2f}   "
            f"server CPU per request: {figures['server_cpu_us_per_create']} µs (create), "
            f"{figures['server_cpu_us_per_status']} µs (status)"
        )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
