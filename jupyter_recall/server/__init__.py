"""The Jupyter server extension: config, REST handlers, events and kernel executors."""
