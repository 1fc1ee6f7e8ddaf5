"""The station's one outbound HTTP client (urllib3): every request the station makes goes here.

Used by the alert poller, the zone downloader, the audio sources and the decoder-monitor
and ENDEC feeds (``post``). What it guarantees:

* separate connect and read timeouts, and a deadline on the whole transfer, so a server that
  trickles one byte at a time cannot hold a caller: when the deadline passes, a timer shuts the
  request's socket down, which ends a wait anywhere (TLS handshake, status line, headers,
  body). :func:`deadline` sets one deadline over several requests (a playlist fetch and the
  entries it names); each request's own ``Limits.deadline`` can only shorten it;
* a size limit, checked against ``Content-Length`` before the body and counted while reading
  (after decompression);
* redirects followed one hop at a time, each hop shown first to the caller's ``on_redirect``
  check (which raises to refuse it, for example "same origin only"), and ``Authorization``
  dropped when a hop changes host;
* credentials in a URL (``user:password@``) moved into a Basic ``Authorization`` header, so they
  never reach a log line;
* errors as :class:`FetchError`, whose ``reason`` never contains the URL (which may carry a
  token), and whose ``status`` is the HTTP status when there was one.

Proxy environment variables are not used: the station talks to the hosts it is configured for.
"""

from __future__ import annotations

import base64
import math
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import IO, Any
from urllib.parse import unquote, urljoin, urlsplit, urlunsplit

import urllib3
from urllib3 import connection as u3_connection
from urllib3 import connectionpool as u3_pool
from urllib3 import exceptions as u3

from alertstation.version import __version__

USER_AGENT = f"AlertStation/{__version__}"
CHUNK = 64 * 1024
MAX_REDIRECTS = 3
#: Longest a whole transfer (headers and body) may take, whatever the timeouts say.
MAX_TRANSFER_SECONDS = 60.0


class FetchError(Exception):
    """A request failed; ``reason`` is safe to show (no URL), ``status`` the HTTP status if any."""

    def __init__(
        self, reason: str, *, status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.retry_after = retry_after


@dataclass(frozen=True)
class Limits:
    """Hold the timeouts (seconds), the largest body (bytes) and the deadline of one request."""

    connect_timeout: float = 5.0
    read_timeout: float = 15.0
    max_bytes: int = 16 * 1024 * 1024
    deadline: float = MAX_TRANSFER_SECONDS


@dataclass(frozen=True)
class Fetched:
    """Hold one answer: its status, body (empty for 304) and the headers callers read."""

    status: int
    body: bytes = b""
    content_type: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    url: str = ""

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
    return urlunsplit(parts._replace(netloc=netloc)), basic_auth(
        unquote(parts.username or ""), unquote(parts.password or "")
    )


def basic_auth(username: str, password: str) -> str:
    """Return the value of a Basic ``Authorization`` header."""
    pair = f"{username}:{password}".encode()
    return "Basic " + base64.b64encode(pair).decode("ascii")


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


def same_host(a: str, b: str) -> bool:
    """Tell whether two URLs name the same scheme, host and port."""
    pa, pb = urlsplit(a), urlsplit(b)
    try:
        return (pa.scheme, pa.hostname, pa.port) == (pb.scheme, pb.hostname, pb.port)
    except ValueError:
        return False


class Deadline:
    """A moment after which every connection watched by it is shut down.

    Made by :func:`deadline`; never later than the deadline it is made within (``parent``).
    """

    def __init__(self, seconds: float, parent: Deadline | None = None) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds
        if parent is not None and parent.at <= self.at:
            self.at, self.seconds = parent.at, parent.seconds
        self._expired = threading.Event()
        self._lock = threading.Lock()
        self._watched: list[tuple[Any, int | None]] = []
        self._timer: threading.Timer | None = None
        left = self.at - time.monotonic()
        if math.isfinite(left):
            self._timer = threading.Timer(max(0.0, left), self.expire)
            self._timer.daemon = True
            self._timer.start()

    @property
    def expired(self) -> bool:
        """Tell whether the deadline has passed (and the watched connections were shut)."""
        return self._expired.is_set()

    def error(self, status: int | None = None) -> FetchError:
        """Return the FetchError of a request this deadline ended."""
        return FetchError(
            f"took longer than the deadline of {self.seconds:g} s; abandoned", status=status
        )

    def watch(self, conn: Any, fd: int | None = None) -> None:
        """Shut ``conn``'s socket (or the raw ``fd`` while TLS wraps it) down at the deadline."""
        with self._lock:
            if self.expired:
                _shut(conn, fd)
            else:
                self._watched.append((conn, fd))

    def expire(self) -> None:
        """End now: shut every watched connection down (a blocked read then returns)."""
        with self._lock:
            self._expired.set()
            for conn, fd in self._watched:
                _shut(conn, fd)

    def cancel(self) -> None:
        """Forget the connections and stop the timer (the requests are over)."""
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            self._watched.clear()


def _shut(conn: Any, fd: int | None) -> None:
    sock = getattr(conn, "sock", None)
    try:
        if sock is not None and sock.fileno() != -1:
            sock.shutdown(socket.SHUT_RDWR)
        elif fd is not None:
            # TLS took the socket over (the raw object is detached): reach it by its descriptor.
            raw = socket.socket(fileno=fd)
            try:
                raw.shutdown(socket.SHUT_RDWR)
            finally:
                raw.detach()
    except OSError:
        pass  # already closed


_local = threading.local()


def current_deadline() -> Deadline | None:
    """Return the innermost deadline this thread's requests run under, if any."""
    stack = getattr(_local, "stack", None)
    return stack[-1] if stack else None


@contextmanager
def deadline(seconds: float) -> Iterator[Deadline]:
    """Run the requests of the ``with`` block (in this thread) under one deadline.

    Nested deadlines only shorten: a request's ``Limits.deadline`` or an inner block ends no
    later than the outer one.
    """
    current = Deadline(seconds, current_deadline())
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    stack.append(current)
    try:
        yield current
    finally:
        stack.remove(current)  # not pop(): a long-lived open() may end after a later one
        current.cancel()


class _WatchedConnection:
    """Mixed into urllib3's connections: each socket is watched by the caller's deadline."""

    def _new_conn(self) -> socket.socket:
        sock = super()._new_conn()  # type: ignore[misc]
        watching = current_deadline()
        if watching is not None:
            watching.watch(self, sock.fileno())
        return sock

    def request(self, *args: Any, **kwargs: Any) -> None:
        watching = current_deadline()
        if watching is not None and getattr(self, "sock", None) is not None:
            watching.watch(self)  # a kept-alive connection, reused
        super().request(*args, **kwargs)  # type: ignore[misc]


class _HTTPConnection(_WatchedConnection, u3_connection.HTTPConnection):
    pass


class _HTTPSConnection(_WatchedConnection, u3_connection.HTTPSConnection):
    pass


class _HTTPPool(u3_pool.HTTPConnectionPool):
    ConnectionCls = _HTTPConnection


class _HTTPSPool(u3_pool.HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection


def _watched_pool() -> urllib3.PoolManager:
    pool = urllib3.PoolManager(num_pools=16, maxsize=4)
    pool.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}
    return pool


class OutboundClient:
    """Make requests through one shared, thread-safe urllib3 pool."""

    def __init__(
        self, user_agent: str = USER_AGENT, pool: urllib3.PoolManager | None = None
    ) -> None:
        self.user_agent = user_agent
        self._pool = pool or _watched_pool()

    def close(self) -> None:
        """Close the pooled connections."""
        self._pool.clear()

    @contextmanager
    def open(
        self,
        url: str,
        limits: Limits,
        *,
        headers: Mapping[str, str] | None = None,
        max_redirects: int = MAX_REDIRECTS,
        on_redirect: Callable[[str, str], None] | None = None,
        ok: Callable[[int], bool] = lambda status: 200 <= status < 300 or status == 304,
    ) -> Iterator[Any]:
        """Open ``url`` and yield the streaming urllib3 response (``.status``, ``.headers``).

        Redirects are followed up to ``max_redirects`` hops; ``on_redirect(from_url, to_url)``
        sees each hop first and raises to refuse it. A status that ``ok`` refuses raises
        :class:`FetchError` carrying it.
        Read the body with :func:`read_limited` or ``response.read(n)``.
        """
        target, auth = split_credentials(url)
        sent = {"User-Agent": self.user_agent, **(headers or {})}
        if auth and "Authorization" not in sent:
            sent["Authorization"] = auth
        with deadline(limits.deadline) as ending:
            response = self._follow(target, sent, limits, max_redirects, on_redirect, ending)
            status = int(response.status)
            try:
                if not ok(status):
                    if 300 <= status < 400:
                        raise FetchError(f"HTTP {status}: redirect refused", status=status)
                    reason = getattr(response, "reason", "") or ""
                    raise FetchError(
                        f"HTTP {status} {reason}".strip(),
                        status=status,
                        retry_after=parse_retry_after(response.headers.get("Retry-After")),
                    )
                try:
                    yield response
                except u3.HTTPError as ex:  # a read in the caller's block failed
                    raise (
                        ending.error(status)
                        if ending.expired
                        else FetchError(describe_error(ex, limits), status=status)
                    ) from None
                if ending.expired:
                    raise ending.error(status)  # what was read may be cut short
            except BaseException:
                # Part of the answer may be unread: this connection must not serve another.
                response.close()
                raise
            finally:
                response.release_conn()

    def get(
        self,
        url: str,
        limits: Limits,
        *,
        headers: Mapping[str, str] | None = None,
        max_redirects: int = MAX_REDIRECTS,
        on_redirect: Callable[[str, str], None] | None = None,
    ) -> Fetched:
        """GET ``url``: 2xx → the body within the limits, 304 → no body, otherwise FetchError."""
        started = time.monotonic()
        with self.open(
            url, limits, headers=headers, max_redirects=max_redirects, on_redirect=on_redirect
        ) as response:
            status = int(response.status)
            if status == 304:
                return Fetched(304, etag=response.headers.get("ETag"), url=response.url or url)
            body = read_limited(response, limits, started)
            return Fetched(
                status,
                body,
                content_type=response.headers.get("Content-Type"),
                etag=response.headers.get("ETag"),
                last_modified=response.headers.get("Last-Modified"),
                url=getattr(response, "url", None) or url,
            )

    def post(
        self,
        url: str,
        body: bytes,
        limits: Limits,
        *,
        headers: Mapping[str, str] | None = None,
    ) -> Fetched:
        """POST ``body`` to ``url``: 2xx → the answer within the limits, otherwise FetchError.

        A redirect is not followed (the body would have to be sent again somewhere else): it
        is an error like any other status outside 2xx.
        """
        started = time.monotonic()
        target, auth = split_credentials(url)
        sent = {"User-Agent": self.user_agent, **(headers or {})}
        if auth and "Authorization" not in sent:
            sent["Authorization"] = auth
        with deadline(limits.deadline) as ending:
            try:
                response = self._send("POST", target, sent, limits, body=body)
            except u3.HTTPError as ex:
                raise (
                    ending.error() if ending.expired else FetchError(describe_error(ex, limits))
                ) from None
            try:
                status = int(response.status)
                if not 200 <= status < 300:
                    reason = getattr(response, "reason", "") or ""
                    raise FetchError(
                        f"HTTP {status} {reason}".strip(),
                        status=status,
                        retry_after=parse_retry_after(response.headers.get("Retry-After")),
                    )
                answer = read_limited(response, limits, started)
                if ending.expired:
                    raise ending.error(status)
            except BaseException:
                response.close()
                raise
            finally:
                response.release_conn()
        return Fetched(
            status, answer, content_type=response.headers.get("Content-Type"), url=target
        )

    def _send(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        limits: Limits,
        body: bytes | None = None,
    ) -> Any:
        """One request, no retry and no redirect followed, its body left to be read."""
        return self._pool.request(
            method,
            url,
            body=body,
            headers=headers,
            timeout=urllib3.Timeout(connect=limits.connect_timeout, read=limits.read_timeout),
            retries=urllib3.Retry(total=None, connect=0, read=0, status=0, other=0, redirect=False),
            redirect=False,
            preload_content=False,
            decode_content=True,
            enforce_content_length=False,  # the readers count and name a short body
        )

    def _follow(
        self,
        url: str,
        headers: dict[str, str],
        limits: Limits,
        max_redirects: int,
        on_redirect: Callable[[str, str], None] | None,
        ending: Deadline,
    ) -> Any:
        current = url
        for hop in range(max_redirects + 1):
            try:
                response = self._send("GET", current, headers, limits)
            except u3.HTTPError as ex:
                raise (
                    ending.error() if ending.expired else FetchError(describe_error(ex, limits))
                ) from None
            if ending.expired:
                response.close()
                raise ending.error(response.status)
            location = response.headers.get("Location")
            if not (response.status in (301, 302, 303, 307, 308) and location):
                response.url = current
                return response
            if hop == max_redirects:
                return response  # the caller's ``ok`` decides: by default "redirect refused"
            following = urljoin(current, location)
            response.drain_conn()
            response.release_conn()
            if on_redirect is not None:
                on_redirect(current, following)
            if not same_host(current, following):
                headers = {k: v for k, v in headers.items() if k.lower() != "authorization"}
            current = following
        raise AssertionError("unreachable")  # pragma: no cover


def read_limited(response: Any, limits: Limits, started: float | None = None) -> bytes:
    """Read a whole body within ``limits`` (size and deadline) or raise FetchError."""
    chunks: list[bytes] = []
    copy_limited(response, _ListSink(chunks), limits, started)
    return b"".join(chunks)


def copy_limited(
    response: Any,
    sink: IO[bytes] | _ListSink,
    limits: Limits,
    started: float | None = None,
    progress: Callable[[int, int | None], None] | None = None,
) -> int:
    """Copy a body into ``sink`` within ``limits``; return the byte count.

    ``progress(done, total)`` is called after each chunk; ``total`` is ``Content-Length`` if
    the server gave one. A body shorter than its announced length is an error.
    """
    started = time.monotonic() if started is None else started
    declared = response.headers.get("Content-Length")
    total = int(declared) if declared and declared.isdigit() else None
    encoded = (response.headers.get("Content-Encoding") or "identity").lower() != "identity"
    if total is not None and total > limits.max_bytes:
        raise FetchError(_too_large(limits.max_bytes, total), status=response.status)
    done = 0
    try:
        while True:
            chunk = response.read(CHUNK)
            if not chunk:
                break
            done += len(chunk)
            if done > limits.max_bytes:
                raise FetchError(_too_large(limits.max_bytes), status=response.status)
            if time.monotonic() - started > limits.deadline:
                raise FetchError(
                    f"took longer than the deadline of {limits.deadline:g} s; abandoned",
                    status=response.status,
                )
            sink.write(chunk)
            if progress is not None:
                progress(done, total)
    except u3.HTTPError as ex:
        ending = current_deadline()
        if ending is not None and ending.expired:
            raise ending.error(response.status) from None
        raise FetchError(describe_error(ex, limits), status=response.status) from None
    ending = current_deadline()
    if ending is not None and ending.expired:
        raise ending.error(response.status)  # the body was cut short
    if total is not None and not encoded and done != total:
        raise FetchError(
            f"download truncated: received {done} of {total} bytes", status=response.status
        )
    return done


class _ListSink:
    def __init__(self, chunks: list[bytes]) -> None:
        self.write = chunks.append


def _too_large(limit: int, declared: int | None = None) -> str:
    said = f" (the server announced {declared} bytes)" if declared is not None else ""
    return f"answer larger than the limit of {limit} bytes{said}; refused"


def describe_error(ex: BaseException, limits: Limits) -> str:
    """Turn a urllib3 error into a short reason without the URL."""
    reason: BaseException = ex
    if isinstance(ex, u3.MaxRetryError) and ex.reason is not None:
        reason = ex.reason
    if isinstance(reason, u3.ReadTimeoutError | TimeoutError):
        return f"no data for {limits.read_timeout:g} s (read timeout)"
    if isinstance(reason, u3.NameResolutionError):
        return f"cannot resolve the host {getattr(reason.conn, 'host', '')}".strip()
    if isinstance(reason, u3.NewConnectionError):  # a subclass of ConnectTimeoutError
        return f"cannot connect: {_errno_text(reason)}"
    if isinstance(reason, u3.ConnectTimeoutError):
        return f"connection timed out after {limits.connect_timeout:g} s"
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
