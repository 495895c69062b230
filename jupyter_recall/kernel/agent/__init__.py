"""The agent tools: specifications and ``dispatch`` (``tools``, public as
``jupyter_recall.agent``), with the tools of calls (``calls``) and watchers (``watchers``).
Adapters over the Python API below them; nothing below imports them."""
