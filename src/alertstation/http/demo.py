"""What the demo role is not shown: attempted usernames and full visitor addresses.

A demo account is handed out to people who are shown the station; it must not learn who tried
to sign in, nor where the station's visitors and attackers come from. So every JSON answer to a
demo user (and the traffic CSV) passes through :func:`mask_for_demo`:

- a string that is an IP address, or a network, is masked to its /24 (IPv4) or /48 (IPv6)
  network, as the traffic log's ``anonymize_ip`` stores addresses; a network longer than that
  prefix is widened to it;
- attempted usernames (``username``, ``usernames``, and the ``detail`` of a failed sign-in
  event, which holds the name typed) are replaced with ``HIDDEN`` or an empty list.

The walk builds new containers, so a cached payload is never changed. See docs/decisions.md.
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import falcon

DEMO_ROLE = "demo"
IPV4_MASK_BITS = 24
IPV6_MASK_BITS = 48
HIDDEN = "(hidden)"
_USERNAME_KEYS = frozenset({"username", "attempted_username"})
_USERNAME_LISTS = frozenset({"usernames"})
_LOGIN_FAILURE = "login_failure"


def mask_ip(text: str) -> str:
    """Return the /24 (IPv4) or /48 (IPv6) network address of an address; ValueError when
    ``text`` is not one. IPv4-mapped IPv6 addresses are masked as IPv4."""
    address = ipaddress.ip_address(text.strip())
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    bits = IPV4_MASK_BITS if address.version == 4 else IPV6_MASK_BITS
    return str(ipaddress.ip_network(f"{address}/{bits}", strict=False).network_address)


def _masked_text(text: str) -> str:
    if not text or len(text) > 64 or not (":" in text or text[:1].isdigit()):
        return text  # cheap test first: most strings are not addresses
    try:
        return mask_ip(text)
    except ValueError:
        pass
    try:
        network = ipaddress.ip_network(text.strip(), strict=False)
    except ValueError:
        return text
    bits = IPV4_MASK_BITS if network.version == 4 else IPV6_MASK_BITS
    if network.prefixlen <= bits:
        return text
    return str(network.supernet(new_prefix=bits))


def mask_for_demo(value: Any) -> Any:
    """Return ``value`` (a JSON-like tree) with addresses masked and attempted usernames hidden."""
    if isinstance(value, str):
        return _masked_text(value)
    if isinstance(value, dict):
        failed_sign_in = value.get("kind") == _LOGIN_FAILURE
        result: dict[Any, Any] = {}
        for key, item in value.items():
            if key in _USERNAME_KEYS and item is not None:
                result[key] = HIDDEN
            elif key in _USERNAME_LISTS and isinstance(item, list):
                result[key] = []
            elif key == "detail" and failed_sign_in and item is not None:
                result[key] = HIDDEN
            else:
                result[key] = mask_for_demo(item)
        return result
    if isinstance(value, list | tuple):
        return [mask_for_demo(item) for item in value]
    return value


def is_demo(req: falcon.Request) -> bool:
    """Tell whether the request comes from a signed-in demo user."""
    user = getattr(req.context, "user", None)
    return user is not None and getattr(user, "role", None) == DEMO_ROLE


class DemoMasking:
    """Middleware: mask every JSON answer to a demo user (``mask_for_demo``)."""

    def process_response(
        self, req: falcon.Request, resp: falcon.Response, resource: object, req_succeeded: bool
    ) -> None:
        if resp.media is not None and is_demo(req):
            resp.media = mask_for_demo(resp.media)
