"""``jupyter recall prune [--dry-run]``: delete now your runs past their jobs' retention
(``POST /api/recall/runs/prune``); ``--dry-run`` counts them and deletes nothing."""

from __future__ import annotations

from traitlets import Bool

from jupyter_recall.cli.base import EXIT_OK, RecallCommand, with_flags


class PruneCommand(RecallCommand):
    name = "jupyter recall prune"
    description = (
        "Delete now the runs past their jobs' retention (policies keep_runs, keep_runs_for, "
        "or the server's RecallApp.keep_runs / keep_runs_for); runs going are kept."
    )
    usage = "[--dry-run]"
    flags = with_flags(
        {
            "dry-run": (
                {"PruneCommand": {"dry_run": True}},
                "Count the runs that would be deleted, per job; delete nothing.",
            ),
        }
    )
    dry_run = Bool(False, config=True, help="Count the runs to delete; delete nothing.")

    def run(self) -> int:
        self.positional(0)
        answer = self.request("POST", "/api/recall/runs/prune", body={"dry_run": self.dry_run})
        if self.json_output:
            self.print_json(answer)
            return EXIT_OK
        jobs = answer.get("jobs") or {}
        verb = "would delete" if self.dry_run else "deleted"
        print(f"{verb} {answer.get('runs', 0)} runs of {len(jobs)} jobs")
        for job_id, count in sorted(jobs.items()):
            print(f"  {job_id}  {count}")
        return EXIT_OK
