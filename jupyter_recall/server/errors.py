"""The one place where domain errors become HTTP responses."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from jupyter_recall.core.errors import (
    ConflictError,
    NotFoundError,
    PassedWhilePaused,
    PendingRecallExists,
    PermissionDeniedError,
    RecallError,
    StoreError,
    UnknownServerTool,
    ValidationError,
)


def status_for(error: RecallError) -> int:
    if isinstance(error, ValidationError):
        return 400
    if isinstance(error, NotFoundError):
        return 404
    if isinstance(error, ConflictError):
        return 409
    if isinstance(error, PermissionDeniedError):
        return 403
    if isinstance(error, StoreError):  # the database is unreachable, locked, restarting...
        return 503
    return 500


class PermissionJSON(TypedDict):
    action: str
    resource: str


class PendingRecallJSON(TypedDict):
    session: str
    recall_id: str


class PassedWhilePausedJSON(TypedDict):
    job_id: str
    at: str


REST_CATCH_UP = "catch_up=true"
"""How a REST caller resumes with catch-up, in a ``PassedWhilePaused``'s message."""


class ErrorJSON(TypedDict):
    """An error as answered (``Error`` in ``openapi.yaml``): the field and what it accepts for
    a ``ValidationError``, the missing permission for a ``PermissionDeniedError``, the session
    and its pending recall for a ``PendingRecallExists``, the tool for an
    ``UnknownServerTool``, the job and its instant for a ``PassedWhilePaused``: what a client
    words for its own user without reading the message."""

    message: str
    reason: str
    field: NotRequired[str]
    accepted: NotRequired[list[str]]
    permission: NotRequired[PermissionJSON]
    pending_recall: NotRequired[PendingRecallJSON]
    unknown_tool: NotRequired[str]
    passed_while_paused: NotRequired[PassedWhilePausedJSON]


def error_body(error: RecallError) -> ErrorJSON:
    if isinstance(error, PassedWhilePaused) and not error.hint:
        error = error.hinted(REST_CATCH_UP)
    body: ErrorJSON = {"message": str(error), "reason": type(error).__name__}
    if isinstance(error, ValidationError):
        body["field"] = error.field
        if error.accepted:
            body["accepted"] = list(error.accepted)
    if isinstance(error, UnknownServerTool):
        body["unknown_tool"] = error.tool
    if isinstance(error, PermissionDeniedError):
        body["permission"] = {"action": error.action, "resource": error.resource}
    if isinstance(error, PendingRecallExists):
        body["pending_recall"] = {"session": error.session, "recall_id": error.recall_id}
    if isinstance(error, PassedWhilePaused):
        body["passed_while_paused"] = {"job_id": error.job_id, "at": error.at}
    return body
