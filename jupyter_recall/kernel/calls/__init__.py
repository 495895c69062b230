"""Tool calls in the kernel: ``run_tool``, ``run_parallel``, background tasks and the kernel's
tool policies (``primitives``), approvals asked in the notebook (``approval_prompt``) and kept in
the server's inbox (``approval_inbox``), the progress cards of calls (``tool_cards``). Imports
``connection`` and ``widgets``."""
