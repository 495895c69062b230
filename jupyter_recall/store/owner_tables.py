"""The plugin owners a user switched off (``OwnerStore``, ``docs/owned-jobs.md``): one mixin for
both stores, whose SQL differs only in the parameter mark."""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, ClassVar, Protocol

from jupyter_recall.store.codec import encode_instant
from jupyter_recall.store.rows import DisabledOwnerRow, columns

_COLUMNS = columns(DisabledOwnerRow._fields)


class _Connected(Protocol):
    """What the table needs of the store it is mixed into."""

    _mark: ClassVar[str]

    def atomic(self) -> AbstractContextManager[None]: ...

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]: ...


class DisabledOwnerTables:
    """``OwnerStore``; ``_mark`` is the store's parameter mark (``?`` or ``%s``)."""

    _mark: ClassVar[str] = "?"

    def get_disabled_owner(self: _Connected, owner: str, plugin_owner: str) -> list[str] | None:
        mark = self._mark
        rows = self._rows(
            f"SELECT held_jobs FROM disabled_owners WHERE owner = {mark} AND plugin_owner = {mark}",
            (owner, plugin_owner),
        )
        return [str(ident) for ident in json.loads(rows[0][0])] if rows else None

    def put_disabled_owner(
        self: _Connected,
        owner: str,
        plugin_owner: str,
        held_jobs: Sequence[str],
        *,
        now: datetime,
    ) -> None:
        row = DisabledOwnerRow(
            owner=owner,
            plugin_owner=plugin_owner,
            disabled_at=encode_instant(now, "now"),
            held_jobs=json.dumps(list(held_jobs)),
        )
        marks = ", ".join([self._mark] * len(row))
        with self.atomic():
            self._rows(
                f"INSERT INTO disabled_owners ({_COLUMNS}) VALUES ({marks}) "
                "ON CONFLICT (owner, plugin_owner) DO UPDATE SET held_jobs = excluded.held_jobs",
                row,
            )

    def delete_disabled_owner(self: _Connected, owner: str, plugin_owner: str) -> None:
        mark = self._mark
        with self.atomic():
            self._rows(
                f"DELETE FROM disabled_owners WHERE owner = {mark} AND plugin_owner = {mark}",
                (owner, plugin_owner),
            )

    def disabled_owners(self: _Connected, owner: str | None) -> list[tuple[str, str]]:
        sql, params = "SELECT owner, plugin_owner FROM disabled_owners", []
        if owner is not None:
            sql, params = f"{sql} WHERE owner = {self._mark}", [owner]
        rows = self._rows(sql + " ORDER BY owner, plugin_owner", params)
        return [(user, plugin_owner) for user, plugin_owner in rows]
