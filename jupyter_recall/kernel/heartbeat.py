"""The stable import path of :func:`beat` for the code stored in heartbeat jobs.

A heartbeat job persists its code (``from jupyter_recall.kernel.heartbeat import beat``) in the
store, where it outlives any reorganisation of the kernel package: this path stays so that jobs
created by any release keep running. The implementation lives in ``kernel/jobs/heartbeat.py``.
"""

from __future__ import annotations

from jupyter_recall.kernel.jobs.heartbeat import beat

__all__ = ["beat"]
