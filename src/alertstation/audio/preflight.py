"""Reach a stream: its request headers (credentials), playlist resolution and the preflight test.

Every request goes through :class:`alertstation.http.outbound.OutboundClient`. Credentials
(``auth_header`` wins over Basic ``auth_username``/``auth_password``) go on the playlist fetch,
the media fetch and the preflight; a playlist entry on another host gets none, as a redirect to
another host would not. No message here carries the URL's query or a credential.
"""

from __future__ import annotations

import configparser
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

from alertstation.audio.sources import SourceConfig
from alertstation.http.outbound import (
    FetchError,
    Limits,
    OutboundClient,
    basic_auth,
    deadline,
    same_host,
)

PLAYLIST_TYPES = {
    "audio/x-mpegurl": "m3u",
    "audio/mpegurl": "m3u",
    "application/x-mpegurl": "m3u",
    "application/vnd.apple.mpegurl": "m3u",
    "audio/x-scpls": "pls",
    "application/pls+xml": "pls",
}
PLAYLIST_LIMITS = Limits(connect_timeout=5.0, read_timeout=10.0, max_bytes=64 * 1024, deadline=20)
PREFLIGHT_LIMITS = Limits(connect_timeout=5.0, read_timeout=10.0, deadline=20)
PREFLIGHT_BYTES = 4096
#: The deadline of one whole preflight (playlist fetch, entries, the stream's first bytes).
PREFLIGHT_SECONDS = 20.0
MAX_ENTRIES = 10
FORBIDDEN = "forbidden: the stream requires authentication or is restricted"


def auth_headers(config: SourceConfig) -> dict[str, str]:
    """Return the ``Authorization`` header a source's credentials make (empty when none)."""
    if config.auth_header:
        return {"Authorization": config.auth_header}
    if config.auth_username:
        return {"Authorization": basic_auth(config.auth_username, config.auth_password or "")}
    return {}


def describe_status(status: int | None, reason: str) -> str:
    """Return the operator's message for a failed fetch (HTTP status first when there is one)."""
    if status == 403:
        return f"{FORBIDDEN} (HTTP 403)"
    if status == 401:
        return "unauthorized: the stream needs credentials, or refused the ones given (HTTP 401)"
    if status == 404:
        return "not found: no stream at this URL (HTTP 404)"
    return reason


def playlist_kind(url: str, content_type: str | None) -> str | None:
    """Return ``m3u`` or ``pls`` when the URL or content type names a playlist, else None."""
    media = (content_type or "").split(";")[0].strip().lower()
    if media in PLAYLIST_TYPES:
        return PLAYLIST_TYPES[media]
    path = urlsplit(url).path.lower()
    if path.endswith((".m3u", ".m3u8")):
        return "m3u"
    if path.endswith(".pls"):
        return "pls"
    return None


def parse_playlist(text: str, kind: str, base: str) -> list[str]:
    """Return the http(s) entries of an M3U or PLS playlist, in order, made absolute."""
    entries: list[str] = []
    if kind == "pls":
        parser = configparser.RawConfigParser(strict=False, interpolation=None)
        try:
            parser.read_string(text)
        except configparser.Error:
            return []
        section = next((s for s in parser.sections() if s.lower() == "playlist"), None)
        if section is None:
            return []
        numbered = []
        for key, value in parser.items(section):
            if key.lower().startswith("file") and key[4:].isdigit():
                numbered.append((int(key[4:]), value.strip()))
        candidates = [value for _, value in sorted(numbered)]
    else:
        candidates = [
            line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")
        ]
    for candidate in candidates:
        url = urljoin(base, candidate)
        if urlsplit(url).scheme in ("http", "https"):
            entries.append(url)
    return entries[:MAX_ENTRIES]


@dataclass(frozen=True)
class PreflightResult:
    """What the preflight found: reachable or not, the HTTP status and an operator's message."""

    ok: bool
    status: int | None
    message: str
    content_type: str | None = None
    resolved_url: str | None = None
    icy_name: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """Return the JSON form."""
        return {
            "ok": self.ok,
            "status": self.status,
            "message": self.message,
            "content_type": self.content_type,
            "resolved_url": self.resolved_url,
            "icy_name": self.icy_name,
        }


def headers_for(config: SourceConfig, target: str, extra: Mapping[str, str] | None = None) -> dict:
    """Return the request headers for ``target``: credentials only on the source's own host."""
    headers = dict(extra or {})
    if same_host(config.url, target):
        headers.update(auth_headers(config))
    return headers


def resolve_stream(client: OutboundClient, config: SourceConfig) -> str:
    """Return the media URL: the source URL, or a playlist's first reachable entry.

    Raises FetchError (with the status of the last failure) when nothing can be reached.
    """
    url = config.url
    if playlist_kind(url, None) is None:
        return url
    fetched = client.get(url, PLAYLIST_LIMITS, headers=headers_for(config, url))
    kind = playlist_kind(url, fetched.content_type) or "m3u"
    entries = parse_playlist(fetched.body.decode("utf-8", "replace"), kind, fetched.url or url)
    if not entries:
        raise FetchError("the playlist holds no http or https entry")
    itself = {_without_fragment(url), _without_fragment(fetched.url or url)}
    entries = [entry for entry in entries if _without_fragment(entry) not in itself]
    if not entries:
        raise FetchError("the playlist names only itself")
    last: FetchError | None = None
    for entry in entries:
        try:
            with client.open(
                entry, PREFLIGHT_LIMITS, headers=headers_for(config, entry)
            ) as response:
                response.close()  # the body is endless: never hand this connection back
                return entry
        except FetchError as ex:
            last = ex
    assert last is not None
    raise FetchError(f"no playlist entry answered: {last.reason}", status=last.status)


def _without_fragment(url: str) -> str:
    return url.split("#", 1)[0]


def preflight(
    client: OutboundClient, config: SourceConfig, seconds: float = PREFLIGHT_SECONDS
) -> PreflightResult:
    """Connect to a stream as the monitor will and report the real HTTP status.

    Reads the headers and a few bytes only. A playlist is resolved first; the status of the
    first reachable entry (or of the failure) is reported. The whole check, playlist included,
    ends within ``seconds`` however slowly the upstream answers.
    """
    try:
        with deadline(seconds):
            target = resolve_stream(client, config)
            headers = headers_for(config, target, {"Icy-MetaData": "1"})
            with client.open(target, PREFLIGHT_LIMITS, headers=headers) as response:
                status = int(response.status)
                content_type = response.headers.get("Content-Type")
                icy_name = response.headers.get("icy-name")
                response.read(PREFLIGHT_BYTES)
                response.close()  # the body is endless: never hand this connection back
    except FetchError as ex:
        return PreflightResult(False, ex.status, describe_status(ex.status, ex.reason))
    if playlist_kind(target, content_type) is not None and target != config.url:
        return PreflightResult(False, status, "the playlist entry is itself a playlist")
    return PreflightResult(
        True,
        status,
        f"reachable (HTTP {status})",
        content_type=content_type,
        resolved_url=target,
        icy_name=icy_name[:255] if icy_name else None,
    )


class PreflightGate:
    """Let at most ``limit`` preflights of this process run at once; the next one is refused.

    A preflight holds a web thread up to its deadline, so a few slow upstreams must never take
    every thread: a preflight beyond the limit is refused at once (the caller answers 429).
    """

    def __init__(self, limit: int, seconds: float = PREFLIGHT_SECONDS) -> None:
        self.limit = limit
        self.seconds = seconds
        self._slots = threading.BoundedSemaphore(limit)

    def run(self, client: OutboundClient, config: SourceConfig) -> PreflightResult | None:
        """Return the preflight's result, or None when ``limit`` preflights are running."""
        if not self._slots.acquire(blocking=False):
            return None
        try:
            return preflight(client, config, self.seconds)
        finally:
            self._slots.release()


__all__ = [
    "PREFLIGHT_SECONDS",
    "PreflightGate",
    "FORBIDDEN",
    "PreflightResult",
    "auth_headers",
    "describe_status",
    "parse_playlist",
    "playlist_kind",
    "preflight",
    "resolve_stream",
]
