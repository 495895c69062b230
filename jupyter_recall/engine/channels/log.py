"""The ``log`` channel: one record per notification on a Python logger (the server's log)."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from jupyter_recall.engine.channels import settings
from jupyter_recall.engine.notify import Notification

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
FORMATS = ("json", "text")
DEFAULT_LOGGER = "jupyter_recall.notifications"


class LogChannel:
    type = "log"

    def __init__(
        self, name: str, *, logger: str = DEFAULT_LOGGER, level: str = "INFO", form: str = "json"
    ) -> None:
        self.name = name
        self.logger = logging.getLogger(logger)
        self.level = logging.getLevelName(level)
        self.form = form

    @classmethod
    def from_config(cls, name: str, config: Mapping[str, Any]) -> LogChannel:
        settings.check_keys(name, config, ("logger", "level", "format"))
        return cls(
            name,
            logger=settings.text(name, config, "logger", DEFAULT_LOGGER),
            level=settings.choice(name, config, "level", LEVELS, "INFO"),
            form=settings.choice(name, config, "format", FORMATS, "json"),
        )

    async def send(self, notification: Notification) -> None:
        if self.form == "json":
            line = json.dumps(notification.to_json(), ensure_ascii=False, default=str)
        else:
            line = f"[{notification.priority}] {notification.heading}: {notification.message}"
        self.logger.log(self.level, "%s", line)
