"""The scheduler loop, the executor protocol, and notification fan-out."""
