"""What a recall's self-instruction becomes inside the kernel.

The kernel side is ``jupyter_recall.kernel.jobs.recall.deliver``; where it is not importable in
the kernel, the instruction is printed as a notification line. Only this module needs to change
when the delivery mechanism does.
"""

from __future__ import annotations

import json
from typing import Any, TypedDict

from jupyter_recall.core.model import Job, Run
from jupyter_recall.core.records import ActionJSON, TargetJSON
from jupyter_recall.server.executors.payloads import CodeAction, InstructionAction

NOTIFICATION_PREFIX = "[RECALL] "

_TEMPLATE = """\
def _jupyter_recall_deliver(instruction, job):
    import importlib.util, json
    try:
        found = importlib.util.find_spec("jupyter_recall.kernel.jobs.recall") is not None
    except ImportError:
        found = False
    if found:
        from jupyter_recall.kernel.jobs.recall import deliver
        deliver(instruction, json.loads(job))
    else:
        print({prefix!r} + instruction, flush=True)
try:
    _jupyter_recall_deliver({instruction!r}, {job!r})
finally:
    del _jupyter_recall_deliver
"""


class JobPayload(TypedDict):
    """The view of a job the kernel's ``deliver`` receives with an instruction."""

    id: str
    name: str
    kind: str
    owner: str
    when: str
    action: ActionJSON
    target: TargetJSON
    options: dict[str, Any]
    """Free-form beyond the executors' settings (``JobOptions``)."""
    session: str | None
    run_id: str
    scheduled_for: str


def job_payload(job: Job, run: Run) -> JobPayload:
    """The JSON view of a job that the kernel-side delivery receives."""
    return {
        "id": job.id,
        "name": job.name,
        "kind": job.kind.value,
        "owner": job.owner,
        "when": job.when,
        "action": job.action.to_json(),
        "target": job.target.to_json(),
        "options": job.options.to_json(),
        "session": job.session,
        "run_id": run.id,
        "scheduled_for": run.scheduled_for.isoformat(),
    }


def instruction_code(instruction: str, job: JobPayload) -> str:
    """Python source that delivers ``instruction`` in the kernel, leaving no names behind."""
    return _TEMPLATE.format(
        prefix=NOTIFICATION_PREFIX,
        instruction=instruction,
        job=json.dumps(job, default=str),
    )


def kernel_code(action: CodeAction | InstructionAction, job: Job, run: Run) -> str:
    """The source a kernel executes for a code or instruction action."""
    if isinstance(action, CodeAction):
        return action.code
    return instruction_code(action.instruction, job_payload(job, run))
