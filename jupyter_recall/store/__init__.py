"""Persistence behind the one Store protocol (store.base); SQLite is the embedded default."""
