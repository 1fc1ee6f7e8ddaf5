"""Decide the client address of a request: the station trusts exactly one proxy hop.

When the direct peer is a trusted proxy, the client is the right-most X-Forwarded-For entry: the
one that proxy appended. Entries to its left were sent by the client and can say anything, so
they are never used. When the right-most entry is missing or malformed, the peer address is the
answer: no address the proxy did not add is ever returned. A peer that is not a trusted proxy is
the client, whatever headers it sent.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

# Longest textual IPv6 form with brackets and a port; anything longer is not one address.
_MAX_ENTRY_LENGTH = 64


def parse_address(text: str | None) -> IPAddress | None:
    """Parse one address as a proxy or socket reports it; None when it is not one address.

    Accepts plain IPv4/IPv6, ``[v6]``, ``[v6]:port`` and ``v4:port``; folds IPv4-mapped IPv6
    to IPv4. Zone ids, host names, lists and obfuscated identifiers are rejected.
    """
    if text is None:
        return None
    token = text.strip()
    if not token or len(token) > _MAX_ENTRY_LENGTH:
        return None
    if token.startswith("["):
        end = token.find("]")
        if end < 0 or (token[end + 1 :] and not _is_port_suffix(token[end + 1 :])):
            return None
        token = token[1:end]
    elif token.count(":") == 1:
        host, _, port = token.partition(":")
        if not _is_port_suffix(":" + port):
            return None
        token = host
    if "%" in token:
        return None
    try:
        address = ipaddress.ip_address(token)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _is_port_suffix(text: str) -> bool:
    port = text[1:]
    return text.startswith(":") and port.isdigit() and len(port) <= 5 and int(port) <= 65535


def is_trusted(address: IPAddress | None, trusted: Iterable[IPNetwork]) -> bool:
    """Tell whether ``address`` lies in any of the trusted proxy networks."""
    return address is not None and any(address in network for network in trusted)


def _rightmost_forwarded(forwarded_for: str | None) -> str | None:
    if not forwarded_for:
        return None
    return forwarded_for.rsplit(",", 1)[-1]


def client_address(
    peer: str | None, forwarded_for: str | None, trusted: Iterable[IPNetwork]
) -> str:
    """Return the client address for a request from ``peer`` carrying ``forwarded_for``.

    ``forwarded_for`` is the X-Forwarded-For header with every occurrence joined by commas in
    arrival order (what WSGI servers hand over). The result is a normalised address string, or
    ``"0.0.0.0"`` when the peer itself is not a valid address (never seen from a real socket).
    """
    peer_address = parse_address(peer)
    if is_trusted(peer_address, trusted):
        forwarded = parse_address(_rightmost_forwarded(forwarded_for))
        if forwarded is not None:
            return str(forwarded)
    return str(peer_address) if peer_address is not None else "0.0.0.0"


def forwarded_scheme(
    peer: str | None, forwarded_proto: str | None, direct_scheme: str, trusted: Iterable[IPNetwork]
) -> str:
    """Return the scheme the client used: the proxy's X-Forwarded-Proto when the peer is trusted."""
    if is_trusted(parse_address(peer), trusted) and forwarded_proto:
        proto = forwarded_proto.rsplit(",", 1)[-1].strip().lower()
        if proto in ("http", "https"):
            return proto
    return direct_scheme


@dataclass(frozen=True, slots=True)
class RequestOrigin:
    """Where one request came from: the client address, its scheme, and whether a proxy sent it."""

    client_ip: str
    scheme: str
    from_proxy: bool


# Bounds of the per-process answer caches: a busy station sees a few thousand client addresses
# at once; past that the least recently seen are forgotten (and parsed again when they return).
_PEER_CACHE_SIZE = 1024
_ENTRY_CACHE_SIZE = 4096


@lru_cache(maxsize=_ENTRY_CACHE_SIZE)
def _normalised_entry(entry: str) -> str | None:
    address = parse_address(entry)
    return str(address) if address is not None else None


def _normalised(entry: str | None) -> str | None:
    """Return ``str(parse_address(entry))``, or None; short entries are remembered."""
    if entry is None:
        return None
    if len(entry) > 2 * _MAX_ENTRY_LENGTH:  # not one address, or padded: parse, do not keep
        address = parse_address(entry)
        return str(address) if address is not None else None
    return _normalised_entry(entry)


class TrustedProxies:
    """The one-hop rule of :func:`client_address` and :func:`forwarded_scheme`, for every request.

    Gives the same answers as those functions with the same networks, but each peer string is
    parsed once and its answer (normalised address, trusted or not) kept in a bounded LRU cache,
    as is the normalised form of each X-Forwarded-For entry; a request costs two cache look-ups.
    """

    def __init__(self, networks: Iterable[IPNetwork], cache_size: int = _PEER_CACHE_SIZE) -> None:
        self.networks: tuple[IPNetwork, ...] = tuple(networks)
        self._peer = lru_cache(maxsize=cache_size)(self._examine_peer)
        # Whole answers by (peer, X-Forwarded-For, X-Forwarded-Proto, scheme): a returning
        # client costs one look-up. Emptied when full; long headers are never kept.
        self._origins: dict[tuple[str | None, str | None, str | None, str], RequestOrigin] = {}
        self._origins_size = 4 * cache_size

    def _examine_peer(self, peer: str | None) -> tuple[str, bool]:
        address = parse_address(peer)
        text = str(address) if address is not None else "0.0.0.0"
        return text, is_trusted(address, self.networks)

    def peer(self, peer: str | None) -> tuple[str, bool]:
        """Return (the normalised peer address or ``"0.0.0.0"``, whether it is a trusted proxy)."""
        if peer is not None and len(peer) > 2 * _MAX_ENTRY_LENGTH:
            return self._examine_peer(peer)
        return self._peer(peer)

    def origin(
        self,
        peer: str | None,
        forwarded_for: str | None,
        forwarded_proto: str | None,
        direct_scheme: str,
    ) -> RequestOrigin:
        """Return the request's client address, scheme, and whether a trusted proxy sent it."""
        key = (peer, forwarded_for, forwarded_proto, direct_scheme)
        origins = self._origins
        origin = origins.get(key)
        if origin is not None:
            return origin
        peer_text, trusted = self.peer(peer)
        if not trusted:
            origin = RequestOrigin(peer_text, direct_scheme, False)
        else:
            client = _normalised(_rightmost_forwarded(forwarded_for)) or peer_text
            scheme = direct_scheme
            if forwarded_proto:
                proto = forwarded_proto.rsplit(",", 1)[-1].strip().lower()
                if proto in ("http", "https"):
                    scheme = proto
            origin = RequestOrigin(client, scheme, True)
        if (forwarded_for is None or len(forwarded_for) <= 2 * _MAX_ENTRY_LENGTH) and (
            forwarded_proto is None or len(forwarded_proto) <= _MAX_ENTRY_LENGTH
        ):
            if len(origins) >= self._origins_size:
                origins.clear()
            origins[key] = origin
        return origin
