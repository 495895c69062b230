"""The ``webhook`` channel: the notification as a JSON POST to a configured URL.

The request runs in a worker thread (urllib, with a timeout) so the server's event loop never
waits on a slow receiver. A receiver that is down or busy for a moment (no connection, a
timeout, 408, 429 or 5xx) is asked again ``retries`` times, ``retry_delay`` seconds apart and
doubling (or after its ``Retry-After``, up to ``MAX_RETRY_AFTER``); any other answer but 2xx,
or the last attempt failing, is a failure (the notifier falls back). The URL comes from the
server's config only: callers cannot point it elsewhere.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any, NamedTuple

import anyio

from jupyter_recall.core.documents import NotificationJSON
from jupyter_recall.core.errors import ChannelError, ValidationError
from jupyter_recall.engine.channels import settings
from jupyter_recall.engine.notify import Notification

DEFAULT_TIMEOUT = 10.0
DEFAULT_RETRIES = 2
MAX_RETRIES = 10
DEFAULT_RETRY_DELAY = 1.0
MAX_RETRY_AFTER = 60.0
"""The longest a receiver's ``Retry-After`` holds a notification back."""
RETRIED_STATUSES = frozenset({408, 429})
"""Besides every 5xx: the answers of a receiver that may take the same request later."""
USER_AGENT = "jupyter_recall-webhook"


class Attempt(NamedTuple):
    """One POST that failed: why, and how long to wait before the next (None: another attempt
    would not change the answer)."""

    failure: str
    retry_after: float | None


def _retry_after(error: urllib.error.HTTPError) -> float | None:
    """The wait a transient answer asks for (0: the channel's own delay); None for an answer
    that another attempt would not change."""
    if error.code < 500 and error.code not in RETRIED_STATUSES:
        return None
    asked = (error.headers.get("Retry-After") or "").strip() if error.headers else ""
    return min(float(asked), MAX_RETRY_AFTER) if asked.isdigit() else 0.0


class WebhookChannel:
    type = "webhook"

    def __init__(
        self,
        name: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        retries: int = DEFAULT_RETRIES,
        retry_delay: float = DEFAULT_RETRY_DELAY,
    ) -> None:
        self.name = name
        self.url = url
        self.headers = dict(headers or {})
        self.timeout = timeout
        self.retries = retries
        self.retry_delay = retry_delay

    @classmethod
    def from_config(cls, name: str, config: Mapping[str, Any]) -> WebhookChannel:
        settings.check_keys(name, config, ("url", "headers", "timeout", "retries", "retry_delay"))
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
            retries=settings.count(name, config, "retries", DEFAULT_RETRIES, MAX_RETRIES),
            retry_delay=settings.seconds(name, config, "retry_delay", DEFAULT_RETRY_DELAY),
        )

    def payload(self, notification: Notification) -> NotificationJSON:
        return notification.to_json()

    def _post(self, body: bytes) -> Attempt | None:
        """None once the receiver took it."""
        headers = {"User-Agent": USER_AGENT, **self.headers, "Content-Type": "application/json"}
        request = urllib.request.Request(self.url, data=body, method="POST", headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                response.read()
        except urllib.error.HTTPError as error:
            error.close()
            answered = f"POST {self.url} answered {error.code} {error.reason}"
            return Attempt(answered, _retry_after(error))
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            return Attempt(f"POST {self.url} failed: {reason}", 0.0)
        return None

    async def send(self, notification: Notification) -> None:
        body = json.dumps(self.payload(notification), ensure_ascii=False, default=str).encode()
        for attempt in range(self.retries + 1):
            failed = await anyio.to_thread.run_sync(self._post, body)
            if failed is None:
                return
            if failed.retry_after is None or attempt == self.retries:
                tries = f" (after {attempt + 1} attempts)" if attempt else ""
                raise ChannelError(f"{failed.failure}{tries}")
            await anyio.sleep(failed.retry_after or self.retry_delay * 2**attempt)
