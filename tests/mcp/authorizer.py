"""An Authorizer for the server of test_authorization.py: whoever may read recall may not write."""

from __future__ import annotations

from typing import Any

from jupyter_server.auth.authorizer import Authorizer


class NoRecallWrites(Authorizer):
    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return not (resource == "recall" and action == "write")
