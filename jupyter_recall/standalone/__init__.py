"""``jupyter recall scheduler``: the engine in a process of its own, with no Jupyter server."""
