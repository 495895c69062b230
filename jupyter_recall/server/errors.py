"""The one place where domain errors become HTTP responses."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from jupyter_recall.core.errors import (
    ConflictError,
    NotFoundError,
    PermissionDeniedError,
    RecallError,
    StoreError,
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


class ErrorJSON(TypedDict):
    """An error as answered (``Error`` in ``openapi.yaml``): the field and what it accepts for
    a ``ValidationError``, the missing permission for a ``PermissionDeniedError``."""

    message: str
    reason: str
    field: NotRequired[str]
    accepted: NotRequired[list[str]]
    permission: NotRequired[PermissionJSON]


def error_body(error: RecallError) -> ErrorJSON:
    body: ErrorJSON = {"message": str(error), "reason": type(error).__name__}
    if isinstance(error, ValidationError):
        body["field"] = error.field
        if error.accepted:
            body["accepted"] = list(error.accepted)
    if isinstance(error, PermissionDeniedError):
        body["permission"] = {"action": error.action, "resource": error.resource}
    return body
