"""Keep channel URLs and feed credentials out of log lines: apprise's own records included.

A :class:`SecretFilter` sits on the ``apprise`` logger (records logged there pass it before any
handler sees them): every known secret (a channel URL and its user, password and token parts)
is replaced by ``[redacted]``, and so is anything that looks like a URL with credentials or a
query string, which apprise writes when it describes a failing channel.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable
from typing import Final
from urllib.parse import unquote, urlsplit

REDACTED: Final[str] = "[redacted]"
#: ``scheme://`` and the rest of the address: apprise names channels by URL.
_URL = re.compile(r"\b[a-z][a-z0-9+.-]{1,31}://[^\s'\"<>]+", re.IGNORECASE)


def secret_parts(url: str) -> set[str]:
    """Return the URL and the pieces of it that must never be logged (user, password, path)."""
    parts = {url}
    try:
        split = urlsplit(url)
    except ValueError:
        return parts
    for piece in (split.username, split.password, split.path.strip("/"), split.query):
        if piece and len(piece) >= 4:
            parts.add(piece)
            parts.add(unquote(piece))
    for segment in split.path.split("/"):
        if len(segment) >= 8:  # tokens in the path (slack://T/B/C, ntfy topics, …)
            parts.add(segment)
    return parts


def redact(text: str, secrets: Iterable[str]) -> str:
    """Return ``text`` with every secret and every URL in it replaced by ``[redacted]``."""
    for secret in sorted(secrets, key=len, reverse=True):
        if secret:
            text = text.replace(secret, REDACTED)
    return _URL.sub(lambda m: m.group(0).split("://", 1)[0] + "://" + REDACTED, text)


class SecretFilter(logging.Filter):
    """A logging filter that redacts the secrets it was told of from each record's text."""

    def __init__(self) -> None:
        super().__init__()
        self._secrets: set[str] = set()
        self._lock = threading.Lock()

    def add(self, url_or_secret: str) -> None:
        """Remember a secret (a channel URL is split into its secret parts)."""
        with self._lock:
            self._secrets |= secret_parts(url_or_secret)

    def filter(self, record: logging.LogRecord) -> bool:
        with self._lock:
            secrets = set(self._secrets)
        record.msg = redact(record.getMessage(), secrets)
        record.args = None
        return True


#: The filter on the ``apprise`` logger; the delivery module tells it every URL it sends to.
APPRISE_FILTER: Final[SecretFilter] = SecretFilter()
logging.getLogger("apprise").addFilter(APPRISE_FILTER)
