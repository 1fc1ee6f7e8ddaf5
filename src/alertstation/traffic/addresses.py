"""Client addresses as the traffic log keeps them: masked, versioned and grouped into visitors.

A visitor is an IPv4 address or an IPv6 /64 (one household or host usually holds a whole /64).
With ``anonymize_ip`` on, the recorder stores only the masked address (IPv4 /24, IPv6 /48), so
the visitor key is built from the masked address too.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache

from alertstation.http.demo import IPV4_MASK_BITS, IPV6_MASK_BITS

IPV6_VISITOR_BITS = 64
INTERNAL = frozenset({"127.0.0.1", "::1"})


@lru_cache(maxsize=4096)
def parse(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """Return the address in ``text`` (IPv4-mapped IPv6 folded to IPv4); None when it is not one."""
    try:
        address = ipaddress.ip_address(text.strip())
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


@lru_cache(maxsize=4096)
def mask_address(text: str) -> str:
    """Return the address with its host part zeroed: IPv4 to its /24, IPv6 to its /48.

    Raises ValueError when ``text`` is not an address.
    """
    address = parse(text)
    if address is None:
        raise ValueError(f"{text!r} is not an IP address")
    bits = IPV4_MASK_BITS if address.version == 4 else IPV6_MASK_BITS
    return str(ipaddress.ip_network(f"{address}/{bits}", strict=False).network_address)


@lru_cache(maxsize=4096)
def visitor_key(text: str) -> str:
    """Return the visitor an address belongs to: the IPv4 address itself, or its IPv6 /64."""
    address = parse(text)
    if address is None:
        return text
    if address.version == 4:
        return str(address)
    return str(ipaddress.ip_network(f"{address}/{IPV6_VISITOR_BITS}", strict=False))


def ip_version(text: str) -> int:
    """Return 4 or 6 (4 for text that is not an address, which the recorder never stores)."""
    address = parse(text)
    return 6 if address is not None and address.version == 6 else 4


def is_internal(text: str) -> bool:
    """Tell whether the address is the station's own loopback (127.0.0.0/8 or ::1)."""
    if text in INTERNAL:
        return True
    address = parse(text)
    return address is not None and address.is_loopback
