"""``%load_ext jupyter_recall``: register the magics, check the server, start notifications."""

from __future__ import annotations

import sys
from typing import Any

from jupyter_recall.core.errors import RecallError
from jupyter_recall.kernel.connection import client, notifications
from jupyter_recall.kernel.heartbeat import register_magic
from jupyter_recall.kernel.magics.jobs import RecallMagics
from jupyter_recall.kernel.magics.watch import WatchMagics


def load_ipython_extension(ipython: Any) -> None:
    ipython.register_magics(RecallMagics)
    ipython.register_magics(WatchMagics)  # %watch
    register_magic(ipython)  # %heartbeat
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
    notifications.stop()
