"""Watchers from Python: ``watch_start`` and friends, and the checks of kernel tools the server
runs here (``watch``). Imports ``connection``, ``jobs`` and ``calls``."""
