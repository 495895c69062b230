"""The kernel's link to its server: discovery and HTTP (``client``), the event stream and the
notification queue (``notifications``), ``send_notification`` (``send``). The bottom of
``kernel/``: it imports no other part of it."""
