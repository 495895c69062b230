"""``%load_ext jupyter_recall``: register the magics, check the server, start notifications."""

from __future__ import annotations

import sys
from typing import Any

from jupyter_recall.core.errors import RecallError


def load_ipython_extension(ipython: Any) -> None:
    from jupyter_recall.kernel import client, notifications
    from jupyter_recall.kernel.magics import RecallMagics

    ipython.register_magics(RecallMagics)
    # %watch (kernel/watch_magic.py).
    from jupyter_recall.kernel.watch_magic import WatchMagics

    ipython.register_magics(WatchMagics)
    # %heartbeat (kernel/heartbeat.py).
    from jupyter_recall.kernel.heartbeat import register_magic

    register_magic(ipython)
    # `%reload_ext` asks again: the notebook may have been renamed since.
    client.forget_identity()
    try:
        client.get_client().info()
        client.identity()
    except RecallError as error:
        # The magics stay registered: they repeat the reason until the server is reachable.
        print(f"jupyter_recall: {error}", file=sys.stderr)
        return
    notifications.start_in_kernel()


def unload_ipython_extension(ipython: Any) -> None:
    from jupyter_recall.kernel import notifications

    notifications.stop()
