"""``jupyter_recall.prune_runs()``: delete now this user's runs past their jobs' retention
(``policies.keep_runs``, ``keep_runs_for`` or the server's defaults), as ``jupyter recall
prune`` does; ``dry_run=True`` counts them and deletes nothing."""

from __future__ import annotations

from typing import TypedDict

from jupyter_recall.kernel.connection import client as _client


class PruneAnswer(TypedDict):
    """``POST /api/recall/runs/prune``'s answer: runs deleted (or that would be), per job id."""

    dry_run: bool
    runs: int
    jobs: dict[str, int]


def prune_runs(dry_run: bool = False) -> PruneAnswer:
    """Delete now the runs past their jobs' retention (``keep_runs``, ``keep_runs_for``), or
    with ``dry_run`` only count them: ``{"dry_run", "runs", "jobs": {job id: count}}``."""
    answer: PruneAnswer = _client.get_client().request(
        "POST", "/api/recall/runs/prune", body={"dry_run": dry_run}
    )
    return answer
