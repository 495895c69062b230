"""A job for a fresh kernel of a spec the server does not have is refused at creation (a 400
naming ``target.kernel_name`` and the specs there are), rather than stored to fail at every
fire with "No such kernel named ...".

The names are read from the server's kernel spec manager (the gateway's, when kernels run on
one) and kept for ``FRESH_FOR`` seconds, so creating jobs does not read the kernel spec
directories each time; a name not among them is looked up again before it is refused, so a
spec installed a moment ago is accepted. When the specs cannot be read (a gateway that does
not answer), the job is accepted: its runs report what happens then.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence

from jupyter_core.utils import ensure_async

from jupyter_recall.core.errors import ValidationError
from jupyter_recall.core.records import HeadlessTarget
from jupyter_recall.server.authorization import JobShape

log = logging.getLogger(__name__)

FRESH_FOR = 60.0
"""Seconds the list of kernel spec names is trusted before it is read again."""

SpecReader = Callable[[], Awaitable[Mapping[str, object]] | Mapping[str, object]]


class KernelSpecNames:
    """The kernel spec names of one server, read through its spec manager's ``get_all_specs``."""

    def __init__(
        self, read_specs: SpecReader, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._read_specs = read_specs
        self._clock = clock
        self._names: frozenset[str] = frozenset()
        self._read_at: float | None = None

    async def check(self, jobs: Sequence[JobShape], *, batch: bool = False) -> None:
        """ValidationError naming ``target.kernel_name`` (``jobs[i].`` first when the jobs
        come as a batch, even of one) for a spec this server does not have."""
        for index, job in enumerate(jobs):
            target = job.target
            if not isinstance(target, HeadlessTarget) or target.kernel_name is None:
                continue
            names = await self._names_with(target.kernel_name)
            if names is not None and target.kernel_name not in names:
                prefix = f"jobs[{index}].target" if batch else "target"
                raise ValidationError(
                    f"{prefix}.kernel_name",
                    f"this server has no kernel spec named {target.kernel_name!r}",
                    accepted=sorted(names),
                )

    async def _names_with(self, name: str) -> frozenset[str] | None:
        """The names, read again if stale or without ``name``; None if they cannot be read."""
        fresh = self._read_at is not None and self._clock() - self._read_at < FRESH_FOR
        if fresh and name in self._names:
            return self._names
        try:
            specs = await ensure_async(self._read_specs())
        except Exception as exc:
            log.debug("kernel specs not readable, %r not checked: %s", name, exc)
            return None
        self._names, self._read_at = frozenset(specs), self._clock()
        return self._names
