"""Triggers: pure functions of time. ``next_after(t)`` never reads the clock."""
