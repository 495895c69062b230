"""The kernel side: IPython extension, magics, Python API and agent tools (see docs/kernel.md).

Nothing here imports jupyter_server; IPython is imported only by the magics and the extension.
"""
