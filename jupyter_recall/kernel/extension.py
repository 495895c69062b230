"""``%load_ext jupyter_recall``: register the magics, check the server, start notifications."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from jupyter_recall.core.errors import RecallError
from jupyter_recall.kernel.connection import client, notifications
from jupyter_recall.kernel.heartbeat import register_magic
from jupyter_recall.kernel.magics.jobs import RecallMagics
from jupyter_recall.kernel.magics.watch import WatchMagics

HISTORY_ALIAS = "rep"
"""IPython's ``%rep`` is an alias of ``%recall`` by name, so it would run ours: the history
helper our ``%recall`` replaces is registered under it instead, while the extension is loaded."""

Magic = Callable[..., object]
MagicTable = dict[str, dict[str, Magic]]
"""IPython's ``magics_manager.magics``: the magic functions by kind ("line", "cell"), then name."""

_replaced: dict[tuple[str, str], Magic | None] = {}
"""The magics our registration replaced (or None where there was none), by (kind, name): what
``%unload_ext`` puts back."""


def _magic_table(ipython: Any) -> MagicTable:
    table: MagicTable = ipython.magics_manager.magics
    return table


def _register(ipython: Any) -> None:
    # Resolved first: IPython may hold a lazy placeholder for it, which would register the
    # history magics when first used, our %recall's name included.
    history = ipython.find_line_magic("recall")
    table = _magic_table(ipython)
    before = {kind: dict(table[kind]) for kind in table}
    ipython.register_magics(RecallMagics)
    ipython.register_magics(WatchMagics)  # %watch
    register_magic(ipython)  # %heartbeat
    for kind, magics in table.items():
        for name, magic in magics.items():
            if before[kind].get(name) is not magic:
                _replaced.setdefault((kind, name), before[kind].get(name))
    if history is not None and history is not table["line"].get("recall"):
        _replaced.setdefault(("line", HISTORY_ALIAS), table["line"].get(HISTORY_ALIAS))
        ipython.magics_manager.register_function(history, "line", HISTORY_ALIAS)


def _unregister(ipython: Any) -> None:
    table = _magic_table(ipython)
    for (kind, name), previous in _replaced.items():
        if previous is None:
            table[kind].pop(name, None)
        else:
            table[kind][name] = previous
    _replaced.clear()


def load_ipython_extension(ipython: Any) -> None:
    _register(ipython)
    # `%reload_ext` asks again: the notebook may have been renamed since.
    client.forget_identity()
    try:
        client.get_client().info()
        ident = client.identity()
    except RecallError as error:
        # The cell fails (one line, no traceback), so that a notebook run by nbconvert or
        # papermill stops here, saying what to do, not at a later cell with a stranger error.
        # The magics stay registered: they repeat the reason until the server is reachable.
        from IPython.core.error import UsageError

        raise UsageError(f"jupyter_recall: {error}") from None
    if ident.external:
        print(
            f"jupyter_recall: {EXTERNAL_NOTE.format(url=client.get_client().base)}", file=sys.stderr
        )
    notifications.start_in_kernel()


EXTERNAL_NOTE = (
    "this kernel was not started by the Jupyter server at {url}: code is scheduled in a fresh "
    "headless kernel by default, and recalls or jobs in this kernel need a kernel the server "
    "starts (open the notebook in JupyterLab)."
)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext``: our magics go, IPython's ``%recall`` and ``%rep`` come back."""
    notifications.stop()
    _unregister(ipython)
