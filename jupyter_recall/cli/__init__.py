"""The ``jupyter recall`` command line (docs/cli.md)."""

from __future__ import annotations

from jupyter_recall.cli.app import JupyterRecallApp, clear_instances, main

__all__ = ["JupyterRecallApp", "clear_instances", "main"]
