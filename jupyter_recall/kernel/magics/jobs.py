"""``%schedule``, ``%%schedule``, ``%recall``, ``%%recall`` and ``%jobs``.

Domain errors (bad input, unknown ids, the one-pending-recall rule, no server) are printed as the
server's message on stderr, never as a traceback; nothing is scheduled then.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import Any

from IPython.core.magic import (
    Magics,
    line_cell_magic,
    line_magic,
    magics_class,
    no_var_expand,
)
from IPython.display import display

from jupyter_recall.client import tables
from jupyter_recall.client.documents import PolicySettings, RetriesDocument
from jupyter_recall.client.ids import check_job_id
from jupyter_recall.core.errors import (
    PassedWhilePaused,
    PendingRecallExists,
    RecallError,
    ValidationError,
)
from jupyter_recall.kernel import widgets
from jupyter_recall.kernel.connection import client as _client
from jupyter_recall.kernel.jobs import api
from jupyter_recall.kernel.magics.parallel import USAGE as PARALLEL_USAGE
from jupyter_recall.kernel.magics.parallel import run_parallel_magic
from jupyter_recall.kernel.magics.writ import (
    COMMAND_OPTIONS,
    NEEDS_ID,
    RECALL_OPTIONS,
    SCHEDULE_COMMAND_OPTIONS,
    SCHEDULE_OPTIONS,
    SUBCOMMANDS_RECALL,
    SUBCOMMANDS_SCHEDULE,
    Command,
    MagicOptions,
    Writ,
    documented,
    named_as_typed,
    options_usage,
    parse_command,
    parse_writ,
    split_options,
)

SCHEDULE_USAGE = f"""\
usage:
  %schedule [options] <when>: <code>       run code later (in this kernel by default)
  %%schedule [options] <when>              the cell body is the code
  %schedule list [--all] | info
  %schedule {"|".join(NEEDS_ID)} <id>      <id> may be {{expr}} or $name
  %schedule resume --catch-up <id>         run what passed while it was paused (a one-shot's time)
{options_usage(SCHEDULE_OPTIONS)}
examples: %schedule in 30m: print(df.shape)    %%schedule every monday at 09:00"""

RECALL_USAGE = f"""\
usage:
  %recall [options] <when>: <self-instruction>   once ('in 30m'), recurring ('every 15m'), 'now'
  %%recall [options] <when>                      the cell body is the instruction
  %recall list | {" [id] | ".join(SUBCOMMANDS_RECALL[1:])} [id]
{options_usage(RECALL_OPTIONS)}
one pending recall per session: cancel it (%recall cancel) before scheduling another."""

JOBS_USAGE = f"""\
usage:
  %jobs [--all]     the jobs of this notebook (a live panel where widgets show)
{options_usage(COMMAND_OPTIONS)}"""


PAST = {"cancel": "cancelled", "skip": "skipped"}
WATCH_INSTEAD = {"cancel": "%watch stop", "skip": "%watch pause", "status": "%watch status"}
"""What ``%recall cancel|skip|status`` on a watcher should have been."""


def _show(bundle: dict[str, str]) -> None:
    show: Callable[..., Any] = display
    show(bundle, raw=True)


def _guarded(action: Callable[[], None]) -> None:
    try:
        action()
    except RecallError as error:
        print(str(error), file=sys.stderr)


def _next(job: api.Job) -> str:
    if job.get("status") == "paused":
        # It has no next fire: nothing fires until it is resumed.
        return "nothing fires until resumed"
    upcoming = job.get("next_fire_at")
    return f"next run {tables.short_instant(upcoming)}" if upcoming else "no run ahead"


def scheduled_message(job: api.Job) -> str:
    label = "recall" if job.get("kind") == "recall" else "job"
    return (
        f"scheduled {label} {job.id} {job.get('name')!r}: {job.get('description')} "
        f"({tables.describe_target(job.get('target'))}), {_next(job)}"
    )


def schedule_writ(writ: Writ) -> api.Job:
    """``%schedule``'s writ through ``api.schedule``: its options as keyword arguments."""
    options = writ.options
    headless = options.flag("headless") or "kernel_name" in options
    return api.schedule(
        writ.when,
        code=writ.body,
        target="headless" if headless else None,
        kernel_name=options.text("kernel_name"),
        tz=options.text("tz"),
        name=options.text("name"),
        exclusive=True if options.flag("exclusive") else None,
        on_missing_kernel=options.text("on_missing_kernel"),
        **magic_policies(options),
    )


def magic_policies(options: MagicOptions) -> PolicySettings:
    """The policy options given (``--max-runs``, ``--timeout``, ``--retries``...)."""
    policies: PolicySettings = {}
    if (max_runs := options.integer("max_runs")) is not None:
        policies["max_runs"] = max_runs
    if (timeout := options.seconds("timeout")) is not None:
        policies["timeout"] = timeout
    if (pause_after := options.integer("pause_after_failures")) is not None:
        policies["pause_after_failures"] = pause_after
    if (keep_runs := options.integer("keep_runs")) is not None:
        policies["keep_runs"] = keep_runs
    if (keep_for := options.text("keep_runs_for")) is not None:
        policies["keep_runs_for"] = keep_for
    retries = _retries(options)
    if retries is not None:
        policies["retries"] = retries
    return policies


def _retries(options: MagicOptions) -> RetriesDocument | None:
    """``--retries N [--retry-backoff S]`` as ``policies.retries``."""
    count, backoff = options.integer("retries"), options.seconds("retry_backoff")
    if count is None:
        if backoff is not None:
            raise ValidationError("--retry-backoff", "needs --retries N (how many retries)")
        return None
    retries: RetriesDocument = {"max": count}
    if backoff is not None:
        retries["backoff"] = backoff
    return retries


def show_jobs(*, everything: bool = False, kind: str | None = None) -> None:
    found = api.jobs(all=everything, kind=kind)
    where = "" if everything else f" for {_client.identity().session}"
    _show(tables.jobs_bundle(found, empty=f"no {kind or 'job'}s{where}"))


def show_status(job_id: str) -> None:
    job = api.job(job_id)
    print(tables.job_details(job, job.runs(limit=api.RECENT_RUNS)))


def show_info() -> None:
    client = _client.get_client()
    info = client.info()
    ident = _client.identity(client)
    print(
        f"jupyter_recall {info.get('version')} at {client.base} (found through "
        f"{client.server.source}); user {info.get('user')}, default zone "
        f"{info.get('default_tz')}\nkernel {ident.kernel_id or '-'}, notebook "
        f"{ident.path or '-'}, session {ident.session or '-'}"
    )


def warn_about_cadence(job: api.Job) -> None:
    """On stderr: the server's warnings about a new job (a fresh kernel started more often
    than once a minute, core/cadence.py)."""
    for warning in job.get("warnings") or ():
        print(warning, file=sys.stderr)


_REFERENCE = re.compile(r"\{(?P<expr>[^{}]+)\}|\$(?P<name>[A-Za-z_][A-Za-z0-9_.]*)")


def resolve_reference(argument: str | None) -> str | None:
    """An id written ``{expr}`` or ``$name`` (IPython's spelling) is that value in the user's
    namespace. The magics opt out of IPython's expansion so that what they schedule is stored
    as typed; an id is only looked up, so it may still name a variable."""
    match = _REFERENCE.fullmatch(argument or "")
    if argument is None or match is None:
        return argument
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None:
        return argument
    try:
        return str(shell.ev(match["expr"] or match["name"]))
    except Exception as error:
        # The user's expression failed: its error, as a message.
        raise ValidationError(
            "id", f"cannot evaluate {argument!r}: {type(error).__name__}: {error}"
        ) from None


def cancel_job(handle: api.Job, label: str) -> None:
    """Cancel a job, or say it had already ended (completed, failed, or cancelled before):
    the server leaves an ended job as it is, and nothing was cancelled then."""
    before = handle.get("status") or handle.refresh().get("status")
    changed = handle if before in api.ENDED else handle.cancel()
    status = changed.get("status")
    if before in api.ENDED or status != "cancelled":
        print(f"{label} {changed.id} already ended ({status}): nothing to cancel")
    else:
        print(f"cancelled {label} {changed.id}: {status}, {_next(changed)}")


def resume_job(handle: api.Job, *, catch_up: bool) -> None:
    """Resume a paused job (``catch_up``: from where it stopped); a one-shot whose time passed
    while it was paused is told how to catch up here."""
    try:
        changed = handle.resume(catch_up=catch_up)
    except PassedWhilePaused as error:
        raise error.hinted(f"%schedule resume --catch-up {error.job_id}") from None
    print(f"resumed job {changed.id}: {changed.get('status')}, {_next(changed)}")


def _job_command(command: Command) -> None:
    if command.argument is None:
        raise ValidationError(command.name, f"needs a job id: %schedule {command.name} <id>")
    handle = api.Job({"id": check_job_id(resolve_reference(command.argument))})
    if command.name == "delete":
        handle.delete()
        print(f"deleted job {handle.id} and its history")
    elif command.name == "run":
        run = handle.run_now()
        print(f"run {run.get('id')} of job {handle.id} started")
    elif command.name == "status":
        show_status(handle.id)
    elif command.name == "cancel":
        cancel_job(handle, "job")
    elif command.name == "resume":
        resume_job(handle, catch_up=command.options.flag("catch_up"))
    else:
        changed = getattr(handle, command.name)()
        done = PAST.get(command.name, command.name + "d")
        print(f"{done} job {changed.id}: {changed.get('status')}, {_next(changed)}")


def run_schedule(line: str, cell: str | None) -> None:
    line = line.strip()
    if not line and not (cell or "").strip():
        print(SCHEDULE_USAGE)
        return
    command = parse_command(line, SUBCOMMANDS_SCHEDULE, SCHEDULE_COMMAND_OPTIONS)
    if command is None:
        writ = parse_writ(line, cell, SCHEDULE_OPTIONS, "code", magic="schedule")
        with named_as_typed(SCHEDULE_OPTIONS):
            job = schedule_writ(writ)
        if not show_card(job):
            print(scheduled_message(job))
        warn_about_cadence(job)
    elif command.name == "list":
        show_jobs(everything=command.options.flag("all"))
    elif command.name == "info":
        show_info()
    elif command.name in NEEDS_ID:
        _job_command(command)


def _recall_target(command: Command) -> api.Job:
    if command.argument is not None:
        job = api.job(check_job_id(resolve_reference(command.argument)))
        kind = job.get("kind")
        if kind != "recall":
            # %recall acting on any job would call it a recall: send it to its own magic.
            magic = (
                WATCH_INSTEAD[command.name] if kind == "watcher" else f"%schedule {command.name}"
            )
            raise ValidationError(
                command.name, f"job {job.id} is a {kind}, not a recall; use {magic} {job.id}"
            )
        return job
    pending = api.pending_recall()
    if pending is None:
        raise ValidationError(
            command.name, f"no pending recall in session {_client.identity().session!r}"
        )
    return pending


def _recall_command(command: Command) -> None:
    if command.name == "list":
        show_jobs(kind="recall")
        return
    handle = _recall_target(command)
    if command.name == "cancel":
        cancel_job(handle, "recall")
    elif command.name == "skip":
        handle.skip()
        print(f"skipped the next occurrence of recall {handle.id}: {_next(handle)}")
    else:
        show_status(handle.id)


def show_pending_recall() -> None:
    pending = api.pending_recall()
    if pending is None:
        print(f"no pending recall in session {_client.identity().session!r}")
    else:
        print(f"pending recall {pending.id}: {pending.get('description')}, {_next(pending)}")
        print(f"  instruction: {pending['action'].get('instruction')}")
    print(RECALL_USAGE)


def run_recall(line: str, cell: str | None) -> None:
    line = line.strip()
    if not line and not (cell or "").strip():
        show_pending_recall()
        return
    command = parse_command(line, SUBCOMMANDS_RECALL, {}, magic="recall")
    if command is not None:
        _recall_command(command)
        return
    writ = parse_writ(line, cell, RECALL_OPTIONS, "instruction", magic="recall")
    options = writ.options
    try:
        with named_as_typed(RECALL_OPTIONS):
            job = api.recall(
                writ.when,
                writ.body,
                name=options.text("name"),
                tz=options.text("tz"),
                **magic_policies(options),
            )
    except PendingRecallExists as error:
        raise error.hinted(f"%recall cancel {error.recall_id}") from None
    if not show_card(job):
        print(scheduled_message(job))


def run_jobs(line: str) -> None:
    words, options = split_options(line, COMMAND_OPTIONS)
    if words:
        raise ValidationError("jobs", f"unexpected {' '.join(words)!r}", accepted=["--all"])
    show_jobs_panel(everything=options.flag("all"))


# --- live widgets (kernel/widgets/, docs/widgets.md) ------------------------------------------


def show_card(job: Any) -> bool:
    """The live card of a job or watcher, where widgets can be shown; True when it is shown
    (it says all the one-line message would, and its text fallback is that line's content)."""

    if not widgets.available():
        return False
    try:
        widgets.job_card(job)
    except Exception as error:
        # The job exists whatever happens to its card: one line, not a traceback.
        print(f"(no live card: {type(error).__name__}: {error})", file=sys.stderr)
        return False
    return True


def show_jobs_panel(*, everything: bool) -> None:
    """The live panel where widgets can be shown, else the table."""

    if widgets.available():
        widgets.jobs_panel(everything=everything)
    else:
        show_jobs(everything=everything)


@magics_class
class RecallMagics(Magics):
    """The jupyter_recall magics; registered by ``%load_ext jupyter_recall``.

    Each is ``no_var_expand``: what was typed is what is stored (IPython would otherwise replace
    ``{expr}`` and ``$name`` at scheduling time, in time quadratic in the line's length).
    """

    # Each docstring (what %schedule? shows) is a summary line, then the usage the magic
    # prints when called with no arguments (writ.documented).

    @line_cell_magic
    @no_var_expand
    @documented("Schedule code to run later, in this kernel or a fresh one.", SCHEDULE_USAGE)
    def schedule(self, line: str, cell: str | None = None) -> None:
        _guarded(lambda: run_schedule(line, cell))

    @line_cell_magic
    @no_var_expand
    @documented("Schedule a recall: a self-instruction for this kernel's agent.", RECALL_USAGE)
    def recall(self, line: str, cell: str | None = None) -> None:
        _guarded(lambda: run_recall(line, cell))

    @line_magic
    @no_var_expand
    @documented("The jobs of this notebook (--all: every job of the user).", JOBS_USAGE)
    def jobs(self, line: str) -> None:
        _guarded(lambda: run_jobs(line))

    # Tool calls at once (kernel/magics/parallel.py).
    @line_cell_magic
    @no_var_expand
    @documented("Run tool calls at once and show their results.", PARALLEL_USAGE)
    def parallel(self, line: str, cell: str | None = None) -> Any:
        return run_parallel_magic(line, cell)
