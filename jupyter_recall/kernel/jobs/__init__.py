"""Jobs from Python: ``schedule``/``recall``/``jobs`` (``api``), ``@on_recall`` and the delivery
of self-instructions (``recall``), heartbeats (``heartbeat``). Imports ``connection`` only."""
