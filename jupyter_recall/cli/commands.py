"""The ``jupyter recall`` subcommands, one class each (see docs/cli.md)."""

from __future__ import annotations

import os
import posixpath
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from datetime import datetime, timedelta, timezone
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from traitlets import Bool, Float, Int, Unicode

from jupyter_recall.cli import render
from jupyter_recall.cli.base import (
    EXIT_FAILED,
    EXIT_OK,
    RecallCommand,
    exit_code_of,
    with_aliases,
    with_flags,
)
from jupyter_recall.client.documents import (
    ActionDocument,
    AfterDocument,
    JobDocument,
    NewJobDocument,
    ParseDocument,
    PoliciesDocument,
    RetriesDocument,
    RunDocument,
    TargetDocument,
)
from jupyter_recall.client.ids import JOB_ID
from jupyter_recall.client.remote import Client, api_path
from jupyter_recall.core.dependency import After
from jupyter_recall.core.errors import (
    NotFoundError,
    RecallConnectionError,
    RecallError,
    UsageError,
    ValidationError,
    renamed_by,
)
from jupyter_recall.core.records import contents_path

ACTIVE_STATUSES = "active,paused"
"""What ``list`` shows without --status or --all: the jobs that may still fire."""
RECENT_RUNS = 5
PAGE_SIZE = 1_000
"""Items per request when a command reads a listing page by page."""


class OptionalText(Unicode[str | None, str | None]):
    """A text option that is None until given. traitlets reads ``None`` typed for a text that
    may be None as not given; a notebook path is taken as typed (``--notebook None`` names a
    file called None, it does not quietly run the code in a fresh kernel instead)."""

    def from_string(self, s: str) -> str | None:
        return s if s == "None" else super().from_string(s)


_AGO = re.compile(r"(\d+)\s*([smhdw])")
_AGO_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


class ListCommand(RecallCommand):
    name = "jupyter recall list"
    description = "List your jobs: id, name, schedule, status, next fire (local time), last run."
    usage = ""
    aliases = with_aliases(
        {
            "status": "ListCommand.status",
            "kind": "ListCommand.kind",
            "path": "ListCommand.path",
            "limit": "ListCommand.limit",
            "sort": "ListCommand.sort",
            "order": "ListCommand.order",
            "search": "ListCommand.search",
        }
    )
    flags = with_flags(
        {
            "all": (
                {"ListCommand": {"all_jobs": True}},
                "Also the jobs that ended (completed, failed, cancelled).",
            ),
        }
    )
    status = Unicode(
        "",
        config=True,
        help="Comma-separated statuses (active, paused, completed, failed, cancelled); "
        "default: active,paused.",
    )
    kind = Unicode("", config=True, help="Comma-separated kinds (job, recall, watcher).")
    path = OptionalText(
        None,
        allow_none=True,
        config=True,
        help="Only the jobs of this notebook (its path under the server's root, or a "
        "filesystem path under it): its session's recalls, the jobs that run in its kernel or "
        "execute it.",
    )
    all_jobs = Bool(False, config=True, help="Also the jobs that ended.")
    limit = Int(100, config=True, help="At most this many jobs (0: all, read page by page).")
    sort = Unicode("", config=True, help="created_at (default), next_fire_at, last_run_at or name.")
    order = Unicode("", config=True, help="asc or desc (default: as the sort key reads best).")
    search = Unicode("", config=True, help="Only jobs whose id, name, when or session has it.")

    def run(self) -> int:
        self.positional(0)
        check_limit(self.limit)
        status = self.status or (None if self.all_jobs else ACTIVE_STATUSES)
        query = {
            "status": status,
            "kind": self.kind or None,
            "q": self.search or None,
            "sort": self.sort or None,
            "order": self.order or None,
        }
        # A notebook is more than the session the server filters on (the kernel a job runs
        # in, the notebook it executes): those jobs are picked here, from every page.
        path = None
        if self.path is not None:
            path = notebook_path(self.path, partial(server_root, self.client), "--path")
        limit = 0 if path else self.limit
        jobs: list[JobDocument]
        with named_options(LIST_OPTIONS):
            jobs, more = read_pages(self.client.listing, "/api/recall/jobs", "jobs", query, limit)
        if path:
            jobs = [job for job in jobs if path in notebooks_of(job)]
            jobs, more = jobs[: self.limit or None], bool(self.limit) and len(jobs) > self.limit
        if self.json_output:
            self.print_json({"jobs": jobs})
        else:
            print(render.jobs_table(jobs))
        if more:
            print(f"(the first {len(jobs)} jobs: --limit=0 lists all)", file=sys.stderr)
        return EXIT_OK


LIST_OPTIONS = {
    "q": "--search",
    "status": "--status",
    "kind": "--kind",
    "sort": "--sort",
    "order": "--order",
}
"""The query fields of ``GET /api/recall/jobs`` and the options of ``list`` that set them."""
RUNS_OPTIONS = {"job_id": "--job", "status": "--status", "since": "--since"}
"""The same for ``GET /api/recall/runs`` and ``runs``."""


def check_limit(limit: int) -> None:
    if limit < 0:
        raise ValidationError(
            "--limit", f"must be 0 (all) or a whole number above 0 (as many), got {limit}"
        )


def named_options(options: Mapping[str, str]) -> AbstractContextManager[None]:
    """A refusal of a query field the server names (``q: ...``) names the option that set it
    (``--search: ...``): the user typed the option, not the REST field."""

    def option_for(error: ValidationError) -> str | None:
        named = str(error).startswith(f"{error.field}:")
        return options.get(error.field) if named else None

    return renamed_by(option_for)


def read_pages(
    listing: Callable[..., Iterator[tuple[list[Any], bool]]],
    path: str,
    key: str,
    query: Mapping[str, str | None],
    limit: int,
) -> tuple[list[Any], bool]:
    """The first ``limit`` items of a listing (all of them for 0), read page by page, and
    whether there are more. ``listing`` is ``Client.listing``; the items are the listing's
    documents as decoded (the callers type them)."""
    size = min(limit, PAGE_SIZE) if limit else PAGE_SIZE
    items: list[Any] = []
    for page, has_next in listing(path, key, query={**query, "limit": str(size)}):
        items += page
        if limit and len(items) >= limit:
            # "More" is the server's to say (its next_cursor): a full last page may be all.
            return items[:limit], len(items) > limit or has_next
    return items, False


def notebooks_of(job: JobDocument) -> set[str]:
    """The notebooks a job belongs to: its session, the kernel it runs in, the one it runs."""
    target, action = job.get("target"), job.get("action")
    places = {job.get("session"), target.get("path") if target else None}
    if action is not None and action["type"] == "notebook":
        places.add(action.get("path"))
    return {posixpath.normpath(str(place)).lstrip("/") for place in places if place}


def server_root(client: Client) -> str | None:
    """The server's root directory: its runtime file's, else the one it says it has."""
    return client.server.root_dir or client.info().get("root_dir")


def notebook_path(text: str, root_dir: Callable[[], str | None], option: str) -> str:
    """A notebook as the server names it, its path under the server's root (``sub/nb.ipynb``),
    from what the user typed: that path (``./sub//nb.ipynb`` normalised), or a filesystem path
    under the server's root dir (``root_dir()``, asked only for such a path). ValidationError
    naming ``option`` for an empty one (``"$NB"`` unset), one leaving the root, or a
    filesystem path outside it."""
    if not text.strip():
        raise ValidationError(
            option, "is empty: give the notebook's path (relative to the server's root)"
        )
    if os.path.isabs(os.path.expanduser(text)):
        return _under_root(os.path.expanduser(text), root_dir(), option)
    try:
        return contents_path(text.replace(os.sep, "/"), option)
    except ValidationError:
        raise ValidationError(
            option, f"{text!r} is not a notebook under the server's root (paths are relative to it)"
        ) from None


def _under_root(path: str, root_dir: str | None, option: str) -> str:
    """A filesystem path as a path under the server's root (symbolic links followed too)."""
    if not root_dir:
        raise ValidationError(
            option,
            f"{path!r} is a filesystem path, and the server's root directory is not known here "
            "(neither a runtime file nor the server names it): give the path relative to its root",
        )
    pairs = [
        (os.path.abspath(path), os.path.abspath(root_dir)),
        (os.path.realpath(path), os.path.realpath(root_dir)),
    ]
    for full, root in pairs:
        relative = os.path.relpath(full, root)
        if relative not in (".", "..") and not relative.startswith(".." + os.sep):
            return Path(relative).as_posix()
    raise ValidationError(option, f"{path!r} is not under the server's root directory {root_dir!r}")


class ShowCommand(RecallCommand):
    name = "jupyter recall show"
    description = "Show one job in full, with its most recent runs."
    usage = "ID"

    def run(self) -> int:
        job_id = checked_id(self.positional(1)[0], "job")
        job = self.request("GET", api_path("jobs", job_id))
        if self.json_output:
            self.print_json(job)
            return EXIT_OK
        runs = self.request(
            "GET", api_path("jobs", job_id, "runs"), query={"limit": str(RECENT_RUNS)}
        )["runs"]
        print(render.job_detail(job, runs))
        return EXIT_OK


class AddCommand(RecallCommand):
    name = "jupyter recall add"
    description = (
        "Add a job. ACTION is Python code ('-' reads it from stdin), run in a fresh headless "
        "kernel, or in the live kernel of a notebook with --notebook; or give --notify MESSAGE "
        "instead of ACTION for a server notification."
    )
    usage = "WHEN ACTION | WHEN --notify MESSAGE | --after ID[:on] ACTION"
    examples = """
jupyter recall add "in 10m" "print('hello')"
jupyter recall add "every weekday at 09:00" "refresh()" --notebook analysis/daily.ipynb
jupyter recall add "tomorrow at 17:00" --notify "send the report" --name report
jupyter recall add --after 3f9c2a1b7d0e "publish()"            # when that job succeeds
jupyter recall add --after 3f9c2a1b7d0e:failed --notify "the nightly build failed"
"""
    aliases = with_aliases(
        {
            "notebook": "AddCommand.notebook",
            "notify": "AddCommand.notify",
            "name": "AddCommand.job_name",
            "tz": "AddCommand.tz",
            "kernel-name": "AddCommand.kernel_name",
            "on-missing-kernel": "AddCommand.on_missing_kernel",
            "after": "AddCommand.after",
            "timeout": "AddCommand.run_timeout",
            "retries": "AddCommand.retries",
            "retry-backoff": "AddCommand.retry_backoff",
            "pause-after-failures": "AddCommand.pause_after_failures",
            "keep-runs": "AddCommand.keep_runs",
            "keep-runs-for": "AddCommand.keep_runs_for",
        }
    )
    flags = with_flags(
        {
            "headless": (
                {"AddCommand": {"headless": True}},
                "Run the code in a fresh kernel that is shut down afterwards (the default).",
            ),
        }
    )
    notebook = OptionalText(
        None,
        allow_none=True,
        config=True,
        help="Run the code in the live kernel of this notebook: its path under the server's "
        "root, or a filesystem path under that root.",
    )
    notify = Unicode("", config=True, help="Send this notification instead of running code.")
    job_name = Unicode("", config=True, help="A name for the job.")
    tz = Unicode("", config=True, help="Time zone of the schedule (default: the server's).")
    kernel_name = Unicode(
        "",
        config=True,
        help="Kernel spec of a headless run (default: the server's default kernel spec, python3 "
        "unless configured).",
    )
    headless = Bool(False, config=True, help="Run the code in a fresh headless kernel.")
    run_timeout = Float(
        None,
        allow_none=True,
        config=True,
        help="Seconds a run may execute before it is stopped and ends timed_out "
        "(default: the server's RecallApp.default_timeout).",
    )
    retries = Int(
        None,
        allow_none=True,
        config=True,
        help="Run a failed, timed-out or interrupted occurrence again, up to this many times.",
    )
    retry_backoff = Float(
        None,
        allow_none=True,
        config=True,
        help="With --retries: seconds before the first retry (doubling each time; default 10).",
    )
    pause_after_failures = Int(
        None,
        allow_none=True,
        config=True,
        help="Pause the job after this many consecutive failed or timed-out occurrences.",
    )
    keep_runs = Int(
        None, allow_none=True, config=True, help="Keep this many newest runs of the job."
    )
    keep_runs_for = Unicode(
        "", config=True, help="Keep runs this long after they end: seconds, or 7d, 12h, 1h30."
    )
    after = Unicode(
        "",
        config=True,
        help="Fire on another job's outcome instead of a time: ID, or ID:succeeded, ID:failed, "
        "ID:finished (default succeeded). No WHEN is given then.",
    )
    on_missing_kernel = Unicode(
        "",
        config=True,
        help="With --notebook, when the notebook has no running kernel: start one, skip the "
        "run, or fail it (the server's default).",
    )

    def run(self) -> int:
        body = self.job_body()
        job = self.request("POST", "/api/recall/jobs", body=body)
        if self.json_output:
            self.print_json(job)
        else:
            print("created " + render.job_line(job))
        for warning in job.get("warnings") or ():
            print(f"{self.name}: {warning}", file=sys.stderr)
        return EXIT_OK

    def job_body(self) -> NewJobDocument:
        args = self._arguments()
        action, target = self._notification(args) if self.notify else self._code(args)
        body: NewJobDocument = {"action": action, "target": target}
        after = self._after()
        if after is None:
            body["when"] = args[0]
        else:
            body["after"] = after
        if self.job_name:
            body["name"] = self.job_name
        if self.tz:
            body["tz"] = self.tz
        if self.on_missing_kernel:
            if self.notebook is None:
                raise UsageError(
                    "--on-missing-kernel says what to do when the notebook of --notebook has "
                    "no kernel: give --notebook PATH with it"
                )
            body["options"] = {"on_missing_kernel": self.on_missing_kernel}
        policies = self._policies()
        if policies:
            body["policies"] = policies
        return body

    def _policies(self) -> PoliciesDocument:
        policies: PoliciesDocument = {}
        if self.run_timeout is not None:
            policies["timeout"] = self.run_timeout
        retries = self._retries()
        if retries is not None:
            policies["retries"] = retries
        if self.pause_after_failures is not None:
            policies["pause_after_failures"] = self.pause_after_failures
        if self.keep_runs is not None:
            policies["keep_runs"] = self.keep_runs
        if self.keep_runs_for:
            # Seconds ("3600") or a duration ("7d", "12h"): the server reads both.
            policies["keep_runs_for"] = self.keep_runs_for.strip()
        return policies

    def _retries(self) -> RetriesDocument | None:
        if self.retries is None:
            if self.retry_backoff is not None:
                raise UsageError("--retry-backoff needs --retries N (how many retries)")
            return None
        retries: RetriesDocument = {"max": self.retries}
        if self.retry_backoff is not None:
            retries["backoff"] = self.retry_backoff
        return retries

    def _arguments(self) -> list[str]:
        """WHEN and ACTION (or WHEN alone with --notify); with --after there is no WHEN, and
        its place is kept empty."""
        if not self.after:
            return self.positional(1, 2)
        return ["", *self.positional(0, 1)]

    def _after(self) -> AfterDocument | None:
        if not self.after:
            return None
        try:
            after = After.from_option(self.after)
        except ValidationError as exc:
            raise UsageError(f"--after {self.after!r}: {exc}") from None
        return {"job": after.job, "on": after.on.value}

    def _notification(self, args: list[str]) -> tuple[ActionDocument, TargetDocument]:
        if len(args) > 1 or self.notebook is not None or self.headless:
            raise UsageError(
                "--notify sends a notification from the server: give no ACTION code, "
                "--notebook or --headless with it"
            )
        return {"type": "notification", "message": self.notify}, {"type": "server"}

    def _code(self, args: list[str]) -> tuple[ActionDocument, TargetDocument]:
        if len(args) != 2:
            raise UsageError(f"usage: {self.name} {self.usage}")
        if self.notebook is not None and self.headless:
            raise UsageError("--notebook and --headless exclude each other: choose one target")
        code = read_stdin_code() if args[1] == "-" else args[1]
        target: TargetDocument
        if self.notebook is not None:
            path = notebook_path(self.notebook, partial(server_root, self.client), "--notebook")
            target = {"type": "kernel", "path": path}
        else:
            target = {"type": "headless"}
            if self.kernel_name:
                target["kernel_name"] = self.kernel_name
        return {"type": "code", "code": code}, target


def read_stdin_code() -> str:
    """ACTION ``-``: the code on standard input, which must be UTF-8 (Python source is)."""
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValidationError(
            "ACTION",
            f"standard input is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
            f"{exc.start}); save the code as UTF-8",
        ) from None


def _a(word: str) -> str:
    return f"an {word}" if word[:1] in "aeiou" else f"a {word}"


def checked_id(ident: str, what: str) -> str:
    """An id as typed; one that cannot be an id (``a/b``, ``x?y``) is not found, said before
    any request (an empty one is the request's to refuse, naming ID)."""
    if ident and not JOB_ID.match(ident):
        error = NotFoundError(what, ident)
        error.args = (
            f"{what} {ident!r} not found (not {_a(what)} id: ids are letters, digits, '-' and "
            "'_', up to 64)",
        )
        raise error
    return ident


def each_id(command: RecallCommand, ids: list[str], act: Callable[[str], None]) -> int:
    """``act`` on every id, even after one fails: each failure is a line on stderr, and the
    exit code is the failures' (1 when they differ). No server stops it at once."""
    codes = set()
    for ident in ids:
        try:
            act(ident)
        except RecallConnectionError:
            raise
        except RecallError as error:
            command.refuse(f"{ident}: {command.describe(error)}")
            codes.add(exit_code_of(error))
    if not codes:
        return EXIT_OK
    return codes.pop() if len(codes) == 1 else EXIT_FAILED


class JobActionCommand(RecallCommand):
    """``cancel``, ``pause``, ``resume``, ``skip``, ``trigger``: one POST per job id."""

    action: ClassVar[str] = ""
    usage = "ID [ID ...]"

    def run(self) -> int:
        return each_id(self, self.positional(1, -1), self.act_on)

    def act_on(self, job_id: str) -> None:
        checked_id(job_id, "job")
        result = self.request(
            "POST", api_path("jobs", job_id, self.action), body=self.action_body()
        )
        if self.json_output:
            self.print_json(result)
        else:
            print(self.summary(result))

    def action_body(self) -> dict[str, bool] | None:
        return None

    def summary(self, answer: JobDocument | RunDocument) -> str:
        return render.job_line(answer)


class CancelCommand(JobActionCommand):
    name = "jupyter recall cancel"
    description = "Stop jobs for good; they stay listed (--all) with their run history."
    action = "cancel"


class PauseCommand(JobActionCommand):
    name = "jupyter recall pause"
    description = "Stop jobs from firing until they are resumed."
    action = "pause"


class ResumeCommand(JobActionCommand):
    name = "jupyter recall resume"
    description = "Let paused jobs fire again, from now on (or --catch-up on what was missed)."
    action = "resume"
    flags = with_flags(
        {
            "catch-up": (
                {"ResumeCommand": {"catch_up": True}},
                "Handle the occurrences missed while paused by the job's catch-up policy.",
            ),
        }
    )
    catch_up = Bool(False, config=True, help="Catch up on the occurrences missed while paused.")

    def action_body(self) -> dict[str, bool] | None:
        return {"catch_up": True} if self.catch_up else None


class SkipCommand(JobActionCommand):
    name = "jupyter recall skip"
    description = "Skip the next occurrence of recurring jobs (recorded as a skipped run)."
    action = "skip"


class TriggerCommand(JobActionCommand):
    name = "jupyter recall trigger"
    description = "Run jobs once now, without moving their schedule."
    action = "trigger"

    def summary(self, answer: JobDocument | RunDocument) -> str:
        run = answer
        return (
            f"run {run.get('id')} of job {run.get('job_id')}: {run.get('status')} "
            f"(follow it: jupyter recall logs {run.get('id')} --follow)"
        )


class DeleteCommand(RecallCommand):
    """``delete ID...``: a job and its run history, for good (``DELETE /api/recall/jobs/{id}``).
    Asked on a terminal, one question per job; not asked with --yes; refused without --yes
    when standard input is not a terminal (a script must say it means it)."""

    name = "jupyter recall delete"
    description = (
        "Delete jobs and their run history for good (cancel keeps them). Asks for each job on "
        "a terminal; --yes does not ask, and is needed when standard input is not a terminal."
    )
    usage = "ID [ID ...] [--yes]"
    flags = with_flags(
        {
            "yes": ({"DeleteCommand": {"yes": True}}, "Delete without asking."),
            "y": ({"DeleteCommand": {"yes": True}}, "Same as --yes."),
        }
    )
    yes = Bool(False, config=True, help="Delete without asking.")

    def run(self) -> int:
        ids = self.positional(1, -1)
        if not self.yes and not sys.stdin.isatty():
            raise UsageError(
                "delete asks before deleting, and standard input is not a terminal: give "
                "--yes to delete without asking"
            )
        return each_id(self, ids, self.delete_one)

    def delete_one(self, job_id: str) -> None:
        job: JobDocument = self.request("GET", api_path("jobs", checked_id(job_id, "job")))
        if not self.yes and not confirmed(f"delete {render.job_line(job)}, and its runs?"):
            print(f"kept job {job_id}", file=sys.stderr)
            return
        self.request("DELETE", api_path("jobs", job_id))
        if self.json_output:
            self.print_json(job)
        else:
            print(f"deleted job {job_id}" + (f" {job['name']!r}" if job.get("name") else ""))


def confirmed(question: str) -> bool:
    """The terminal's answer to a yes/no question; no unless "y" or "yes"."""
    print(f"{question} [y/N] ", end="", file=sys.stderr, flush=True)
    try:
        answer = sys.stdin.readline()
    except KeyboardInterrupt:
        print(file=sys.stderr)
        raise
    return answer.strip().lower() in ("y", "yes")


class StopCommand(RecallCommand):
    """``stop RUN_ID...``: stop runs in flight (``POST /api/recall/runs/{id}/stop``)."""

    name = "jupyter recall stop"
    description = "Stop running runs: each ends cancelled (its job keeps its schedule)."
    usage = "RUN_ID [RUN_ID ...]"

    def run(self) -> int:
        return each_id(self, self.positional(1, -1), self.stop_one)

    def stop_one(self, run_id: str) -> None:
        run = self.request("POST", api_path("runs", checked_id(run_id, "run"), "stop"))
        if self.json_output:
            self.print_json(run)
        else:
            print(f"run {run.get('id')} of job {run.get('job_id')}: {run.get('status')}")


def parse_since(text: str, now: datetime) -> str:
    """``--since``: an ISO instant (local time when it has no offset) or a duration ago."""
    # "-5m" (5 minutes back, as `date -d` reads it) is the same as "5m" and "5m ago".
    compact = text.strip().lower().removesuffix("ago").strip().removeprefix("-").strip()
    parts = _AGO.findall(compact)
    try:
        if parts and _AGO.sub("", compact).strip() == "":
            seconds = sum(int(n) * _AGO_SECONDS[unit] for n, unit in parts)
            return (now - timedelta(seconds=seconds)).isoformat()
        instant = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except OverflowError:
        raise _since_error(text, "out of the calendar's range (years 1 to 9999)") from None
    except ValueError:
        raise _since_error(text, "not an instant or a duration") from None
    try:
        if instant.tzinfo is None:
            instant = instant.astimezone()
        # The server compares in UTC: the instant must exist there too.
        return instant.astimezone(timezone.utc).astimezone(instant.tzinfo).isoformat()
    except (OverflowError, ValueError):
        raise _since_error(text, "out of the calendar's range (years 1 to 9999)") from None


def _since_error(text: str, why: str) -> ValidationError:
    return ValidationError(
        "--since",
        f"{why}: {text!r}",
        accepted=("an ISO 8601 instant such as 2026-06-01T09:00", "a duration such as 2h, 1d"),
    )


class RunsCommand(RecallCommand):
    name = "jupyter recall runs"
    description = "List your runs, newest first."
    usage = ""
    aliases = with_aliases(
        {
            "since": "RunsCommand.since",
            "job": "RunsCommand.job",
            "status": "RunsCommand.status",
            "limit": "RunsCommand.limit",
        }
    )
    since = Unicode(
        "", config=True, help="Runs created or finished since: an ISO instant, or 2h, 1d..."
    )
    job = Unicode("", config=True, help="Only the runs of this job id.")
    status = Unicode("", config=True, help="Comma-separated run statuses.")
    limit = Int(20, config=True, help="At most this many runs (0: all).")

    def run(self) -> int:
        self.positional(0)
        check_limit(self.limit)
        if self.job:
            # A job that is not there has no runs: say so (exit 1), not "no runs".
            self.request("GET", api_path("jobs", checked_id(self.job, "job")))
        query = {
            "since": parse_since(self.since, datetime.now(timezone.utc)) if self.since else None,
            "job_id": self.job or None,
            "status": self.status or None,
        }
        # The server pages newest first: a job with a long history is not sent whole.
        runs: list[RunDocument]
        with named_options(RUNS_OPTIONS):
            runs, more = read_pages(
                self.client.listing, "/api/recall/runs", "runs", query, self.limit
            )
        if self.json_output:
            self.print_json({"runs": runs})
            return EXIT_OK
        print(render.runs_table(runs, self.job_names({str(run["job_id"]) for run in runs})))
        if more:
            print(f"(the newest {len(runs)} runs: --limit=0 lists all)", file=sys.stderr)
        return EXIT_OK

    def job_names(self, job_ids: set[str]) -> dict[str, str]:
        """The names of these jobs (one request each: a page of runs names a few jobs)."""
        names = {}
        for job_id in sorted(job_ids):
            try:
                names[job_id] = self.request("GET", api_path("jobs", job_id)).get("name", "")
            except NotFoundError:
                continue
        return names


class LogsCommand(RecallCommand):
    name = "jupyter recall logs"
    description = (
        "Print a run's output; --follow streams a running run's output until it finishes "
        "(exit code 1 when it did not succeed)."
    )
    usage = "RUN_ID"
    flags = with_flags(
        {
            "follow": ({"LogsCommand": {"follow": True}}, "Stream the output until the run ends."),
            "f": ({"LogsCommand": {"follow": True}}, "Same as --follow."),
        }
    )
    follow = Bool(False, config=True, help="Stream the output until the run ends.")

    def run(self) -> int:
        run_id = checked_id(self.positional(1)[0], "run")
        if self.follow:
            return self._follow(run_id)
        run = self.request("GET", api_path("runs", run_id))
        if self.json_output:
            self.print_json(run)
            return EXIT_OK
        sys.stdout.write(run.get("output") or "")
        if run.get("status") == "running":
            print(f"(run {run_id} is still running: --follow streams it)", file=sys.stderr)
        elif run.get("error"):
            print(f"run {run_id} {run.get('status')}: {run['error']}", file=sys.stderr)
        return EXIT_OK

    def _follow(self, run_id: str) -> int:
        from jupyter_recall.client.follow import Follower

        follower = Follower(self.client, run_id, self._write_chunk)
        run = follower.follow()
        if self.json_output:
            self.print_json_line({"type": "finished", "run": run})
        else:
            ended = f"run {run_id} {run.get('status')}"
            if isinstance(run.get("duration"), (int, float)):
                ended += f" after {run['duration']:.1f}s"
            if run.get("error"):
                ended += f": {run['error']}"
            print(ended, file=sys.stderr)
        return EXIT_OK if run.get("status") == "succeeded" else EXIT_FAILED

    def _write_chunk(self, text: str) -> None:
        if self.json_output:
            self.print_json_line({"type": "output", "text": text})
        else:
            sys.stdout.write(text)
            sys.stdout.flush()

    def print_json_line(self, document: Any) -> None:
        import json

        print(json.dumps(document), flush=True)


class ParseCommand(RecallCommand):
    name = "jupyter recall parse"
    description = (
        "Check a time expression: its kind, canonical form, words and next five fire times. "
        "Asks the server; parses here when no server is reachable (or with --offline)."
    )
    usage = "TEXT"
    aliases = with_aliases({"tz": "ParseCommand.tz"})
    flags = with_flags(
        {
            "offline": ({"ParseCommand": {"offline": True}}, "Parse here, without a server."),
        }
    )
    tz = Unicode("", config=True, help="Time zone (default: the server's, or this machine's).")
    offline = Bool(False, config=True, help="Parse here, without asking a server.")

    def run(self) -> int:
        text = " ".join(self.positional(1, -1))
        result = None if self.offline else self._ask_server(text)
        if result is None:
            result = self._parse_here(text)
        if self.json_output:
            self.print_json(result)
        else:
            print(render.parse_result(result))
        return EXIT_OK

    def _ask_server(self, text: str) -> ParseDocument | None:
        body = {"when": text, **({"tz": self.tz} if self.tz else {})}
        try:
            result: ParseDocument = self.request("POST", "/api/recall/parse", body=body)
        except RecallConnectionError:
            print(
                f"{self.name}: no Jupyter server with jupyter_recall is reachable "
                "(start one, or pass --url and --token)",
                file=sys.stderr,
            )
            return None
        result["offline"] = False
        return result

    def _parse_here(self, text: str) -> ParseDocument:
        from jupyter_recall.core.when import parse_when
        from jupyter_recall.server.localzone import local_zone_name

        zone = self.tz or local_zone_name()
        if not self.offline:
            print(f"{self.name}: parsed here, in the zone {zone}", file=sys.stderr)
        spec = parse_when(text, now=datetime.now(timezone.utc), tz=zone)
        return {
            "when": text,
            "kind": spec.kind,
            "canonical": spec.canonical,
            "description": spec.describe(),
            "tz": spec.tz,
            "next_fire_times": [t.isoformat() for t in spec.next_fire_times(5)],
            "offline": True,
        }
