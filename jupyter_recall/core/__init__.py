"""Pure domain layer: time expressions, triggers, records, policies and errors.

Nothing here performs I/O, imports Jupyter, or reads the clock: the current time is
always an argument.
"""
