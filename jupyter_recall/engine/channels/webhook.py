"""The ``webhook`` channel: the notification as a JSON POST to a configured URL.

The request runs in a worker thread (urllib, with a timeout) so the server's event loop never
waits on a slow receiver. Any answer other than 2xx is a failure (the notifier falls back).
The URL comes from the server's config only: callers cannot point it elsewhere.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

import anyio

from jupyter_recall.core.documents import NotificationJSON
from jupyter_recall.core.errors import ChannelError, ValidationError
from jupyter_recall.engine.channels import settings
from jupyter_recall.engine.notify import Notification

DEFAULT_TIMEOUT = 10.0
USER_AGENT = "jupyter_recall-webhook"


class WebhookChannel:
    type = "webhook"

    def __init__(
        self,
        name: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.name = name
        self.url = url
        self.headers = dict(headers or {})
        self.timeout = timeout

    @classmethod
    def from_config(cls, name: str, config: Mapping[str, Any]) -> WebhookChannel:
        settings.check_keys(name, config, ("url", "headers", "timeout"))
        url = settings.text(name, config, "url")
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValidationError(
                f"notification_channels.{name}.url",
                f"must be an http(s) URL, got {url!r}",
                accepted=("http://...", "https://..."),
            )
        return cls(
            name,
            url,
            headers=settings.string_map(name, config, "headers"),
            timeout=settings.seconds(name, config, "timeout", DEFAULT_TIMEOUT),
        )

    def payload(self, notification: Notification) -> NotificationJSON:
        return notification.to_json()

    def _post(self, body: bytes) -> None:
        headers = {"User-Agent": USER_AGENT, **self.headers, "Content-Type": "application/json"}
        request = urllib.request.Request(self.url, data=body, method="POST", headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                response.read()
        except urllib.error.HTTPError as error:
            error.close()
            raise ChannelError(f"POST {self.url} answered {error.code} {error.reason}") from None
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise ChannelError(f"POST {self.url} failed: {reason}") from None

    async def send(self, notification: Notification) -> None:
        body = json.dumps(self.payload(notification), ensure_ascii=False, default=str)
        await anyio.to_thread.run_sync(self._post, body.encode())
