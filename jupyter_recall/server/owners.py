"""Who owns a row: the one rule mapping an authenticated jupyter_server user to an owner name.

With the stock single-user identity providers, a shared token identifies no one: every
token-authenticated request gets a fresh random "Anonymous" user. Rows would then belong to
nobody twice. So, there, every caller is the server's owner (the OS user running it). With an
identity provider that names users (JupyterHub, a custom provider), rows are scoped by user name.
"""

from __future__ import annotations

import getpass
from collections.abc import Callable
from typing import Any

from jupyter_server.auth.identity import IdentityProvider, PasswordIdentityProvider

SHARED_TOKEN_PROVIDERS = (IdentityProvider, PasswordIdentityProvider)


def names_users(identity_provider: Any) -> bool:
    """True when the provider tells users apart (anything but the stock shared-token ones)."""
    return type(identity_provider) not in SHARED_TOKEN_PROVIDERS


def owner_resolver(scope_by_user: bool, server_owner: str | None = None) -> Callable[[Any], str]:
    fixed = server_owner or getpass.getuser()

    def resolve(user: Any) -> str:
        return str(user.username) if scope_by_user else fixed

    return resolve
