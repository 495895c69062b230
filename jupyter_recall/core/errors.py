"""The one exceptions module: every error jupyter_recall raises derives from RecallError.

Messages name the offending field or value and, where there is a fixed set, what is accepted,
so that the REST layer, magics and agent tools can show them as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager


class RecallError(Exception):
    """Base class of all jupyter_recall errors."""


class ValidationError(RecallError, ValueError):
    """Bad input for one named field."""

    def __init__(self, field: str, message: str, *, accepted: Iterable[str] = ()) -> None:
        self.field = field
        self.accepted = tuple(accepted)
        text = f"{field}: {message}"
        if self.accepted:
            text += f" (accepted: {', '.join(self.accepted)})"
        super().__init__(text)
        self.message = message

    def renamed(self, field: str) -> ValidationError:
        """The same refusal naming ``field``: the option a user typed (``--max-runs``) for the
        field it fills (``max_runs``). Its text is kept, where it names the field."""
        text = str(self)
        renamed = ValidationError(field, self.message, accepted=self.accepted)
        if text.startswith(f"{self.field}:"):
            renamed.args = (field + text[len(self.field) :],)
        return renamed


@contextmanager
def renamed_by(option_for: Callable[[ValidationError], str | None]) -> Iterator[None]:
    """A ValidationError leaving the block names ``option_for(error)`` instead of its field
    (``ValidationError.renamed``), unless that is None: the option a user typed in a magic or
    on the command line, not the field it fills."""
    try:
        yield
    except ValidationError as error:
        option = option_for(error)
        if option is None:
            raise
        raise error.renamed(option) from None


class UnknownServerTool(ValidationError):
    """A watcher's ``tool`` that is not one of the server's tools (``accepted`` lists them):
    a user's tool is watched in its notebook's kernel. ``hint`` says how on this surface
    (REST: give a kernel target; an MCP client cannot, and says so in its own words)."""

    def __init__(self, tool: str, *, accepted: Iterable[str] = (), hint: str = "") -> None:
        self.tool = tool
        self.hint = hint
        text = f"unknown tool {tool!r} on the server; a user tool is watched in its kernel"
        super().__init__("tool", f"{text}: {hint}" if hint else text, accepted=accepted)


class ParseError(ValidationError):
    """A time expression that could not be understood as a whole."""

    def __init__(self, text: str, reason: str, *, accepted: Iterable[str] = ()) -> None:
        self.text = text
        self.reason = reason
        forms = tuple(accepted)
        super().__init__("when", f"cannot parse {text!r}: {reason}", accepted=())
        self.accepted = forms
        if forms:
            listing = "\n".join(f"  - {form}" for form in forms)
            self.args = (f"{self.args[0]}\nAccepted forms:\n{listing}",)

    def __str__(self) -> str:
        return str(self.args[0])


class NotFoundError(RecallError, LookupError):
    """No row with this id is visible to the caller."""

    def __init__(self, what: str, ident: str) -> None:
        self.what = what
        self.ident = ident
        super().__init__(f"{what} {ident!r} not found")

    def __str__(self) -> str:
        return str(self.args[0])


class ConflictError(RecallError):
    """The request is valid but clashes with the current state (409)."""


class PendingRecallExists(ConflictError):
    """A notebook session already has its one pending recall: ``session`` is the session's
    notebook path, ``recall_id`` the pending recall's id. The message names both and no
    surface's commands; each surface says how to cancel it in its own words with ``hinted``
    (the magics ``%recall cancel <id>``, the kernel's agent tools ``manage_recall``, ...)."""

    def __init__(self, session: str, recall_id: str, *, hint: str = "") -> None:
        self.session = session
        self.recall_id = recall_id
        self.hint = hint
        text = f"session {session!r} already has a pending recall {recall_id}; cancel it first"
        super().__init__(f"{text} ({hint})" if hint else text)

    def hinted(self, hint: str) -> PendingRecallExists:
        """The same refusal, followed by how this surface cancels the pending recall."""
        return PendingRecallExists(self.session, self.recall_id, hint=hint)


class PassedWhilePaused(ConflictError):
    """A one-shot job resumed without catching up, whose instant passed while it was paused:
    ``job_id`` is the job, ``at`` its instant (ISO 8601). The message names no surface's
    option; each surface says how it resumes with catch-up in its own words with ``hinted``
    (REST ``catch_up=true``, the magics ``%schedule resume --catch-up <id>``, ...)."""

    def __init__(self, job_id: str, at: str, *, hint: str = "") -> None:
        self.job_id = job_id
        self.at = at
        self.hint = hint
        how = f" ({hint})" if hint else ""
        super().__init__(
            f"job {job_id} was to run once at {at}, which passed while it was paused: "
            f"resume it with catch-up{how} to run it now, or cancel it"
        )

    def hinted(self, hint: str) -> PassedWhilePaused:
        """The same refusal, saying how this surface resumes with catch-up."""
        return PassedWhilePaused(self.job_id, self.at, hint=hint)


class ChangedMeanwhile(ConflictError):
    """A change computed from a job as it was read finds the job changed since by someone
    else; the caller reads it again and recomputes (a PATCH's merge, not a lost update)."""

    def __init__(self, job_id: str) -> None:
        self.job_id = job_id
        super().__init__(f"job {job_id} was changed by another request meanwhile; try again")


class PermissionDeniedError(RecallError):
    """The user lacks a jupyter_server permission that doing this directly would need (403).

    Worded as jupyter_server's own 403 ("User is not authorized to <action> on resource:
    <resource>."), followed by what needs it."""

    def __init__(self, action: str, resource: str, reason: str) -> None:
        self.action = action
        self.resource = resource
        self.reason = reason
        super().__init__(f"User is not authorized to {action} on resource: {resource}. {reason}")

    def __str__(self) -> str:
        return str(self.args[0])


class StoreError(RecallError):
    """The persistence layer failed in a way the caller cannot fix by changing its input."""


class StoreBusy(StoreError):
    """A call made not to wait (``run_now``) would have waited for a lock; nothing was done."""


class ExpressionSyntaxError(RecallError):
    """Where a watcher's threshold expression stops making sense (``core/expr.py``); the
    parser turns it into a ValidationError naming the field."""

    def __init__(self, reason: str, position: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.position = position


class ChannelError(RecallError):
    """A notification channel could not deliver; the message says why (the notifier falls
    back to the session)."""


class KernelGone(RecallError):
    """The kernel restarted, died or its connection was closed while a request was pending."""


class RecallConnectionError(RecallError, ConnectionError):
    """No Jupyter server with jupyter_recall can be reached from here; the message says why.

    ``reason`` is the cause alone (``[Errno 111] Connection refused``), for callers that say
    themselves which server they tried.
    """

    def __init__(self, message: str, *, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason or message


class UsageError(RecallError):
    """The command line itself is wrong (missing argument, options that exclude each other)."""


class PromptExpired(BaseException):
    """Raised in a kernel's prompting thread when its approval request ended meanwhile
    (timeout, answered elsewhere). The one exception outside RecallError, on purpose: it is
    control flow, not an error, and ipykernel's input loop swallows every Exception."""
