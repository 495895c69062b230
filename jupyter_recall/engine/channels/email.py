"""The ``email`` channel: one message per notification over SMTP (smtplib, in a thread).

Recipients are the channel's ``to``; a sender may name others per delivery with
``output_config`` ``{"to_address": "a@example.org"}`` or ``{"to": [...]}``.
"""

from __future__ import annotations

import json
import smtplib
import ssl
from collections.abc import Mapping, Sequence
from email.message import EmailMessage
from email.utils import format_datetime, parseaddr
from typing import Any

import anyio

from jupyter_recall.core.errors import ChannelError, ValidationError
from jupyter_recall.engine.channels import settings
from jupyter_recall.engine.notify import Notification

DEFAULT_TIMEOUT = 30.0
URGENT = ("high", "critical")


def check_address(value: object, field: str) -> str:
    if not isinstance(value, str) or "\r" in value or "\n" in value:
        raise ValidationError(field, f"must be an e-mail address, got {value!r}")
    _, address = parseaddr(value)
    local, at, domain = address.partition("@")
    if not (local and at and domain):
        raise ValidationError(field, f"must be an e-mail address, got {value!r}")
    return value


def check_addresses(value: object, field: str) -> list[str]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, Sequence) or not items:
        raise ValidationError(field, f"must be an address or a list of addresses, got {value!r}")
    return [check_address(item, f"{field}[{index}]") for index, item in enumerate(items)]


class EmailChannel:
    type = "email"

    def __init__(
        self,
        name: str,
        *,
        host: str,
        port: int,
        sender: str,
        to: Sequence[str],
        username: str | None = None,
        password: str | None = None,
        starttls: bool = False,
        use_ssl: bool = False,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.name = name
        self.host = host
        self.port = port
        self.sender = sender
        self.to = list(to)
        self.username = username
        self.password = password
        self.starttls = starttls
        self.use_ssl = use_ssl
        self.timeout = timeout

    @classmethod
    def from_config(cls, name: str, config: Mapping[str, Any]) -> EmailChannel:
        keys = ("host", "port", "from", "to", "username", "password", "starttls", "ssl", "timeout")
        settings.check_keys(name, config, keys)
        prefix = f"notification_channels.{name}"
        port = config.get("port", 25)
        if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
            raise ValidationError(f"{prefix}.port", f"must be a TCP port, got {port!r}")
        return cls(
            name,
            host=settings.text(name, config, "host"),
            port=port,
            sender=check_address(config.get("from"), f"{prefix}.from"),
            to=check_addresses(config.get("to"), f"{prefix}.to"),
            username=settings.optional_text(name, config, "username"),
            password=settings.optional_text(name, config, "password"),
            starttls=settings.flag(name, config, "starttls"),
            use_ssl=settings.flag(name, config, "ssl"),
            timeout=settings.seconds(name, config, "timeout", DEFAULT_TIMEOUT),
        )

    def recipients(self, notification: Notification) -> list[str]:
        config = notification.output_config
        if "to_address" in config:
            return check_addresses(config["to_address"], "output_config.to_address")
        if "to" in config:
            return check_addresses(config["to"], "output_config.to")
        return self.to

    def message(self, notification: Notification, recipients: Sequence[str]) -> EmailMessage:
        message = EmailMessage()
        message["Subject"] = " ".join(notification.heading.split())
        message["From"] = self.sender
        message["To"] = ", ".join(recipients)
        message["Date"] = format_datetime(notification.created_at)
        message["X-Recall-Notification"] = notification.id
        if notification.priority in URGENT:
            message["X-Priority"] = "1"
            message["Importance"] = "high"
        body = [notification.message]
        if notification.tags:
            body.append("Tags: " + ", ".join(notification.tags))
        if notification.structured_data:
            body.append(json.dumps(notification.structured_data, indent=2, default=str))
        message.set_content("\n\n".join(body))
        return message

    def _deliver(self, message: EmailMessage) -> None:
        try:
            if self.use_ssl:
                context = ssl.create_default_context()
                client: smtplib.SMTP = smtplib.SMTP_SSL(
                    self.host, self.port, timeout=self.timeout, context=context
                )
            else:
                client = smtplib.SMTP(self.host, self.port, timeout=self.timeout)
            with client:
                if self.starttls:
                    client.starttls(context=ssl.create_default_context())
                if self.username is not None:
                    client.login(self.username, self.password or "")
                client.send_message(message)
        except (smtplib.SMTPException, OSError) as error:
            raise ChannelError(f"SMTP {self.host}:{self.port}: {error}") from None

    async def send(self, notification: Notification) -> None:
        message = self.message(notification, self.recipients(notification))
        await anyio.to_thread.run_sync(self._deliver, message)
