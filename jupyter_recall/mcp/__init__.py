"""jupyter_recall as a Model Context Protocol server (the ``mcp`` extra).

``tools`` (the tool table, shared specifications with ``jupyter_recall.agent``), ``resources``
(jobs, runs and run outputs as ``recall://`` resources), ``server`` (the SDK's lowlevel Server
built on them), ``stdio`` (``jupyter recall mcp``) and ``http`` (Streamable HTTP under
``/api/recall/mcp`` in the Jupyter server). Everything reaches the scheduler through the REST API,
as the caller.
"""
