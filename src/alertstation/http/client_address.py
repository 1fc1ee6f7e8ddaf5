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
