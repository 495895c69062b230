"""``POST /api/recall/runs/prune``: delete now the caller's runs past their jobs' retention
(``policies.keep_runs``, ``policies.keep_runs_for``, ``RecallApp.keep_runs[_for]``), or with
``{"dry_run": true}`` count them and delete nothing. Runs going are never pruned."""

from __future__ import annotations

from jupyter_server.auth.decorator import authorized
from tornado import web

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.server.body import json_type
from jupyter_recall.server.handlers import RecallHandler

PRUNE_FIELDS = ("dry_run",)


class PruneHandler(RecallHandler):
    # Deleting runs is a write on recall (POST), as deleting a job is.
    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = self.json_body()
        unknown = sorted(set(body) - set(PRUNE_FIELDS))
        if unknown:
            raise ValidationError(unknown[0], "unknown field", accepted=list(PRUNE_FIELDS))
        dry_run = body.get("dry_run", False)
        if not isinstance(dry_run, bool):
            raise ValidationError("dry_run", f"must be true or false, got {json_type(dry_run)}")
        counts = await self.scheduler.prune_runs(owner=self.owner, dry_run=dry_run)
        self.send_json({"dry_run": dry_run, "runs": sum(counts.values()), "jobs": counts})
