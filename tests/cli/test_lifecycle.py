"""Pause after failures and retention through the real `jupyter recall` command and a real
server running real headless kernels: `add` with the policy flags, a failing job paused after
two failed occurrences with its reason, `prune --dry-run` deleting nothing and counting, `prune`
keeping exactly `--keep-runs`, `resume` clearing the reason."""

from __future__ import annotations

import time
from typing import Any

from tests.cli.conftest import CliServer

DEADLINE = 240.0


def wait_for(check: Any, what: str) -> Any:
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def test_a_failing_job_pauses_and_prune_keeps_what_it_says(cli, server: CliServer) -> None:
    added = cli(
        "add",
        "every 3 seconds",
        "raise ValueError('broken on purpose')",
        "--pause-after-failures",
        "2",
        "--keep-runs",
        "1",
        "--keep-runs-for",
        "7d",
        "--json",
    )
    assert added.code == 0, added.err
    job = added.json()
    policies = job["policies"]
    assert (policies["pause_after_failures"], policies["keep_runs"]) == (2, 1)
    assert policies["keep_runs_for"] == 7 * 86400

    def paused() -> dict[str, Any] | None:
        current = server.request("GET", f"/api/recall/jobs/{job['id']}")
        return current if current["status"] == "paused" else None

    stopped = wait_for(paused, "the job to pause")
    assert stopped["failure_streak"] == 2
    assert stopped["paused_reason"].startswith("paused after 2 consecutive failed occurrences")
    assert "broken on purpose" in stopped["paused_reason"]
    shown = cli("show", job["id"])
    assert "paused after 2 consecutive failed occurrences" in shown.out, shown.out
    listed = cli("list", "--status", "paused")
    assert "paused (failures)" in listed.out, listed.out

    runs = wait_for(lambda: [r for r in server.job_runs(job["id"]) if r["status"] == "failed"], "")
    dry = cli("prune", "--dry-run", "--json")
    assert dry.code == 0, dry.err
    assert dry.json()["dry_run"] is True
    assert dry.json()["jobs"].get(job["id"]) == len(runs) - 1
    assert len(server.job_runs(job["id"])) == len(runs)
    done = cli("prune")
    assert done.code == 0, done.err
    assert f"deleted {len(runs) - 1} runs" in done.out
    left = server.job_runs(job["id"])
    assert [run["id"] for run in left] == [runs[0]["id"]]  # the newest (runs come newest first)
    assert server.request("GET", f"/api/recall/jobs/{job['id']}")["run_count"] == len(runs)

    resumed = cli("resume", job["id"])
    assert resumed.code == 0, resumed.err
    after = server.request("GET", f"/api/recall/jobs/{job['id']}")
    assert (after["failure_streak"], after["paused_reason"]) == (0, None)
    assert cli("cancel", job["id"]).code == 0
