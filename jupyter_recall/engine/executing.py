"""An engine that executes but never fires: a Jupyter server next to a standalone scheduler.

With ``RecallApp.run_scheduler = False`` the server keeps the whole Scheduler API (REST creates,
edits and triggers jobs; manual runs execute here; its lease still interrupts the runs of engines
that died) but has no firing loop: the standalone scheduler (``jupyter recall scheduler``) fires
every job on the shared store.
"""

from __future__ import annotations

import anyio

from jupyter_recall.engine.scheduler import Scheduler


class ExecutingScheduler(Scheduler):
    """A Scheduler whose firing loop never fires: jobs it creates or changes only wake the
    engine that fires them (through the store, see docs/deploy.md)."""

    async def _fire_loop(self) -> None:
        await anyio.sleep_forever()
