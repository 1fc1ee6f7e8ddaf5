"""Fetch one poll source over HTTP(S) with urllib3: conditional GET, timeouts, a size limit.

Every request names the station and its version in ``User-Agent``, asks for gzip, and sends
``If-None-Match`` / ``If-Modified-Since`` when the source has validators from an earlier
answer. The connect and read timeouts are separate; the whole transfer also has a deadline, so
a server that trickles one byte at a time cannot hold the poller. The body is counted as it is
read (after decompression) and refused past the limit; a ``Content-Length`` over the limit is
refused before any of the body is read.

Errors come out as :class:`FetchError` with a short reason that never contains the URL (which
may carry credentials or a token), only the host where it helps.
"""

from __future__ import annotations

import base64
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

import urllib3
from urllib3 import exceptions as u3

from alertstation.version import __version__

USER_AGENT = f"AlertStation/{__version__} (CAP alert poller)"


def user_agent_for(contact: str = "") -> str:
    """Return the poller's User-Agent, naming the station's contact when one is configured."""
    return f"AlertStation/{__version__} (CAP alert poller; {contact})" if contact else USER_AGENT


ACCEPT = "application/geo+json, application/json;q=0.9, application/cap+xml, " + (
    "application/atom+xml, application/xml;q=0.9, text/xml;q=0.8, */*;q=0.1"
)
CHUNK = 64 * 1024
MAX_REDIRECTS = 3
#: Longest a whole transfer (headers and body) may take, whatever the timeouts say.
MAX_TRANSFER_SECONDS = 60.0


class FetchError(Exception):
    """A fetch failed; ``reason`` is safe to show (no URL), ``status`` the HTTP status if any."""

    def __init__(
        self, reason: str, *, status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.retry_after = retry_after


@dataclass(frozen=True)
class Limits:
    """Hold the timeouts (seconds) and the largest body (bytes) of one fetch."""

    connect_timeout: float = 5.0
    read_timeout: float = 15.0
    max_bytes: int = 16 * 1024 * 1024
    deadline: float = MAX_TRANSFER_SECONDS


@dataclass(frozen=True)
class Fetched:
    """Hold one answer: 200 with its body and validators, or 304 with no body."""

    status: int
    body: bytes = b""
    content_type: str | None = None
    etag: str | None = None
    last_modified: str | None = None

    @property
    def not_modified(self) -> bool:
        """Tell whether the server said nothing changed (304)."""
        return self.status == 304


def split_credentials(url: str) -> tuple[str, str | None]:
    """Return ``url`` without its ``user:password@`` part, and a Basic auth header for it."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, None
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port is not None else "")
    pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
    header = "Basic " + base64.b64encode(pair.encode("utf-8")).decode("ascii")
    return urlunsplit(parts._replace(netloc=netloc)), header


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Read a ``Retry-After`` header (seconds or an HTTP date) as seconds from now."""
    if not value:
        return None
    text = value.strip()
    if text.isdigit():
        return float(int(text))
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


class HttpClient:
    """Make the poller's GET requests through one shared, thread-safe urllib3 pool."""

    def __init__(self, user_agent: str = USER_AGENT, pool: urllib3.PoolManager | None = None):
        self.user_agent = user_agent
        self._pool = pool or urllib3.PoolManager(num_pools=16, maxsize=4)

    def close(self) -> None:
        """Close the pooled connections."""
        self._pool.clear()

    def get(
        self,
        url: str,
        limits: Limits,
        *,
        etag: str | None = None,
        last_modified: str | None = None,
        follow_redirects: bool = True,
    ) -> Fetched:
        """GET ``url``: 200 → body and validators, 304 → not modified, anything else FetchError.

        ``follow_redirects`` False refuses any redirect (used for links a feed hands us, so a
        feed cannot point the station at another host through a redirect).
        """
        target, auth = split_credentials(url)
        headers = {
            "User-Agent": self.user_agent,
            "Accept": ACCEPT,
            "Accept-Encoding": "gzip, deflate",
        }
        if auth:
            headers["Authorization"] = auth
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        redirects = MAX_REDIRECTS if follow_redirects else 0
        started = time.monotonic()
        try:
            response = self._pool.request(
                "GET",
                target,
                headers=headers,
                timeout=urllib3.Timeout(connect=limits.connect_timeout, read=limits.read_timeout),
                retries=urllib3.Retry(
                    total=None,
                    connect=0,
                    read=0,
                    status=0,
                    other=0,
                    redirect=redirects,
                    raise_on_redirect=follow_redirects,
                ),
                preload_content=False,
                decode_content=True,
            )
        except u3.HTTPError as ex:
            raise FetchError(describe_error(ex, limits)) from None
        try:
            return self._answer(response, limits, started)
        except BaseException:
            # Part of the answer may be unread: this connection must not serve another request.
            response.close()
            raise
        finally:
            response.release_conn()

    def _answer(self, response: Any, limits: Limits, started: float) -> Fetched:
        status = int(response.status)
        if status == 304:
            return Fetched(304, etag=response.headers.get("ETag"))
        if status != 200:
            retry_after = parse_retry_after(response.headers.get("Retry-After"))
            if 300 <= status < 400:
                raise FetchError(f"HTTP {status}: redirect refused", status=status)
            reason = getattr(response, "reason", "") or ""
            raise FetchError(
                f"HTTP {status} {reason}".strip(), status=status, retry_after=retry_after
            )
        declared = response.headers.get("Content-Length")
        if declared and declared.isdigit() and int(declared) > limits.max_bytes:
            raise FetchError(_too_large(limits.max_bytes, int(declared)), status=status)
        body = self._read(response, limits, started)
        return Fetched(
            200,
            body,
            content_type=response.headers.get("Content-Type"),
            etag=response.headers.get("ETag"),
            last_modified=response.headers.get("Last-Modified"),
        )

    @staticmethod
    def _read(response: Any, limits: Limits, started: float) -> bytes:
        chunks: list[bytes] = []
        size = 0
        try:
            while True:
                chunk = response.read(CHUNK)
                if not chunk:
                    break
                size += len(chunk)
                if size > limits.max_bytes:
                    raise FetchError(_too_large(limits.max_bytes), status=200)
                if time.monotonic() - started > limits.deadline:
                    raise FetchError(
                        f"transfer took longer than {limits.deadline:g} s; abandoned", status=200
                    )
                chunks.append(chunk)
        except u3.HTTPError as ex:
            raise FetchError(describe_error(ex, limits), status=200) from None
        return b"".join(chunks)


def _too_large(limit: int, declared: int | None = None) -> str:
    said = f" (the server announced {declared} bytes)" if declared is not None else ""
    return f"answer larger than the limit of {limit} bytes{said}; refused"


def describe_error(ex: BaseException, limits: Limits) -> str:
    """Turn a urllib3 error into a short reason without the URL."""
    reason: BaseException = ex
    if isinstance(ex, u3.MaxRetryError) and ex.reason is not None:
        reason = ex.reason
    if isinstance(reason, u3.ConnectTimeoutError):
        return f"connection timed out after {limits.connect_timeout:g} s"
    if isinstance(reason, u3.ReadTimeoutError | TimeoutError):
        return f"no data for {limits.read_timeout:g} s (read timeout)"
    if isinstance(reason, u3.NameResolutionError):
        return f"cannot resolve the host {getattr(reason.conn, 'host', '')}".strip()
    if isinstance(reason, u3.NewConnectionError):
        return f"cannot connect: {_errno_text(reason)}"
    if isinstance(reason, u3.SSLError):
        return f"TLS error: {_errno_text(reason)}"
    if isinstance(reason, u3.DecodeError):
        return "the compressed answer could not be decoded"
    if isinstance(reason, u3.ProtocolError):
        return "connection broken before the answer was complete"
    if isinstance(reason, u3.LocationValueError):
        return "the URL is not usable"
    if isinstance(reason, u3.ResponseError) or isinstance(ex, u3.MaxRetryError):
        return "too many redirects"
    return f"request failed ({type(reason).__name__})"


def _errno_text(ex: BaseException) -> str:
    """Return the innermost OS error text (``Connection refused``), else the class name."""
    inner: BaseException | None = ex
    while inner is not None:
        if isinstance(inner, OSError) and inner.strerror:
            return inner.strerror
        inner = inner.__cause__ or inner.__context__
    text = str(ex).rsplit(":", 1)[-1].strip()
    return text[:120] or type(ex).__name__
