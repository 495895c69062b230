"""The magics: ``%schedule``/``%recall``/``%jobs`` (``jobs``) over the ``<when>: <what>`` syntax
(``writ``), ``%watch`` (``watch``), ``%parallel`` (``parallel``). Adapters over the Python API
below them; nothing below imports them."""
