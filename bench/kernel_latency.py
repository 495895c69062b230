"""Delay from a job's due instant to the first line of its output, in live and fresh kernels.

Starts a real `jupyter server` with the extension, opens a notebook session (a warm live
kernel), schedules jobs at known instants and timestamps the first `run.output` event of each
run as it arrives on the SSE stream (so the figure includes event delivery: an upper bound).
Fresh kernels are measured twice, side by side: started for each run, and taken warm from a
second server's `RecallApp.kernel_pool` (one python3 kernel, refilled between runs).

    python bench/kernel_latency.py [--live 60] [--fresh 5] [--pooled 5] [--json]

Targets: live kernel p99 <= 50 ms. The fresh-kernel figure is dominated by kernel start-up,
which the pool takes out of the run's path.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.server.live_server import TOKEN, LiveServer


class FirstOutput:
    """Reads the SSE stream in a thread; remembers when each run's first output arrived."""

    def __init__(self, server: LiveServer) -> None:
        self.first: dict[str, tuple[float, str]] = {}
        self.started: dict[str, float] = {}
        self.ready = threading.Event()
        request = urllib.request.Request(
            server.url + "/api/recall/events", headers={"Authorization": f"token {TOKEN}"}
        )
        self._stream = urllib.request.urlopen(request, timeout=600)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        event = None
        for raw in self._stream:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                event = line[7:]
                self.ready.set()
            elif line.startswith("data: ") and event == "run.started":
                self.started.setdefault(json.loads(line[6:])["run"]["job_id"], time.time())
            elif line.startswith("data: ") and event == "run.output":
                data = json.loads(line[6:])
                self.first.setdefault(data["run"]["job_id"], (time.time(), data["text"]))

    def wait(self, job_ids: list[str], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not all(j in self.first for j in job_ids):
            time.sleep(0.05)


def schedule(server: LiveServer, at: datetime, target: dict[str, Any]) -> dict[str, Any]:
    body = {
        "when": at.isoformat(),
        "action": {"type": "code", "code": "print('tick')"},
        "target": target,
    }
    return dict(server.request("POST", "/api/recall/jobs", body))


class Plan:
    """A series of jobs: how many, how far apart, how far ahead, how long to wait for them."""

    def __init__(self, count: int, spacing: float, lead: float, timeout: float) -> None:
        self.count, self.spacing, self.lead, self.timeout = count, spacing, lead, timeout


MIN_LEAD = timedelta(seconds=0.5)
"""The least time between creating a job and its due instant."""


def due_ahead(planned: datetime) -> datetime:
    """``planned``, or later if creating the jobs before it took longer than the plan's lead.

    A loaded machine can spend the whole lead on the first requests, and a time in the past is
    refused. The lags are measured from each job's own ``next_fire_at``, so moving one is fair.
    """
    return max(planned, datetime.now(timezone.utc) + MIN_LEAD)


def lags_ms(
    server: LiveServer, reader: FirstOutput, target: dict[str, Any], plan: Plan
) -> tuple[list[float], list[float]]:
    """Lags (ms) from due instant to run.started and to the first output line."""
    start = datetime.now(timezone.utc) + timedelta(seconds=plan.lead)
    jobs = [
        schedule(server, due_ahead(start + timedelta(seconds=i * plan.spacing)), target)
        for i in range(plan.count)
    ]
    reader.wait([j["id"] for j in jobs], plan.timeout)
    started, output = [], []
    for job in jobs:
        due = datetime.fromisoformat(job["next_fire_at"]).timestamp()
        if job["id"] in reader.started:
            started.append((reader.started[job["id"]] - due) * 1000)
        if job["id"] in reader.first:
            output.append((reader.first[job["id"]][0] - due) * 1000)
    return started, output


def summary(lags: list[float], wanted: int) -> dict[str, Any]:
    if not lags:
        return {"runs": 0, "wanted": wanted}
    ordered = sorted(lags)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return {
        "runs": len(lags),
        "wanted": wanted,
        "p50_ms": round(statistics.median(ordered), 2),
        "p99_ms": round(p99, 2),
        "max_ms": round(ordered[-1], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--live", type=int, default=60, help="runs in the warm live kernel")
    parser.add_argument("--fresh", type=int, default=5, help="runs in fresh kernels")
    parser.add_argument("--pooled", type=int, default=5, help="runs in warm pooled kernels")
    parser.add_argument("--json", action="store_true", help="print one JSON object only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "root"
        root.mkdir()
        server = LiveServer(root, Path(tmp) / "recall.sqlite").start()
        try:
            result = run(server, args)
        finally:
            server.stop()
        pooling = LiveServer(
            root, Path(tmp) / "pooled.sqlite", args=("--RecallApp.kernel_pool=python3=1",)
        ).start()
        try:
            result.update(run_pooled(pooling, args.pooled))
        finally:
            pooling.stop()
    result["fresh_first_output_p50_ms"] = {
        "started_per_run": result["fresh_kernel"].get("p50_ms"),
        "from_pool": result["pooled_kernel"].get("p50_ms"),
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(json.dumps(result, indent=2))


def run(server: LiveServer, args: argparse.Namespace) -> dict[str, Any]:
    session = server.request(
        "POST",
        "/api/sessions",
        {
            "path": "bench.ipynb",
            "name": "bench.ipynb",
            "type": "notebook",
            "kernel": {"name": "python3"},
        },
    )
    live = {"type": "kernel", "path": session["path"]}
    reader = FirstOutput(server)
    reader.ready.wait(10)
    lags_ms(server, reader, live, Plan(3, 0.2, 1.0, 60))  # warm-up: kernel, subshell
    live_started, live_output = lags_ms(server, reader, live, Plan(args.live, 0.15, 2.0, 120))
    headless = {"type": "headless", "kernel_name": "python3"}
    fresh = Plan(args.fresh, 4.0, 2.0, 60 + 10 * args.fresh)
    fresh_started, fresh_output = lags_ms(server, reader, headless, fresh)
    return {
        "live_kernel": summary(live_output, args.live),
        "live_kernel_run_started": summary(live_started, args.live),
        "fresh_kernel": summary(fresh_output, args.fresh),
        "fresh_kernel_run_started": summary(fresh_started, args.fresh),
        "target": {"live_kernel_p99_ms": 50},
    }


def run_pooled(server: LiveServer, count: int) -> dict[str, Any]:
    """Fresh kernels taken from a warm pool of one: each run waits for the refill first."""
    server.wait_for(lambda: server.request("GET", "/api/kernels"), timeout=60)
    reader = FirstOutput(server)
    reader.ready.wait(10)
    headless = {"type": "headless", "kernel_name": "python3"}
    started, output = lags_ms(server, reader, headless, Plan(count, 4.0, 2.0, 60 + 10 * count))
    return {
        "pooled_kernel": summary(output, count),
        "pooled_kernel_run_started": summary(started, count),
    }


if __name__ == "__main__":
    main()
