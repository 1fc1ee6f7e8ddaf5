"""The one-hop client address rule, including spoof attempts."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from alertstation.http.client_address import client_address, forwarded_scheme, parse_address
from alertstation.settings import parse_networks

LOOPBACK = parse_networks("127.0.0.0/8,::1/128")
PROXY_NET = parse_networks("10.0.0.5/32")


@pytest.mark.parametrize(
    ("peer", "xff", "expected"),
    [
        # trusted proxy appended the real client on the right
        ("127.0.0.1", "203.0.113.7", "203.0.113.7"),
        # the client sent its own X-Forwarded-For; only the proxy's right-most entry counts
        ("127.0.0.1", "1.2.3.4, 203.0.113.7", "203.0.113.7"),
        ("127.0.0.1", "1.2.3.4,203.0.113.7", "203.0.113.7"),
        # spoofed loopback on the left is ignored
        ("127.0.0.1", "127.0.0.1, 198.51.100.9", "198.51.100.9"),
        # IPv6 client, in brackets with a port, and IPv4-mapped
        ("::1", "2001:db8::1", "2001:db8::1"),
        ("::1", "[2001:db8::1]:443", "2001:db8::1"),
        ("127.0.0.1", "::ffff:198.51.100.2", "198.51.100.2"),
        ("127.0.0.1", "198.51.100.2:5555", "198.51.100.2"),
        # no header from the trusted proxy: the proxy itself is the client (local call)
        ("127.0.0.1", None, "127.0.0.1"),
        ("127.0.0.1", "", "127.0.0.1"),
    ],
)
def test_trusted_proxy_uses_rightmost_entry(peer: str, xff: str | None, expected: str) -> None:
    assert client_address(peer, xff, LOOPBACK) == expected


@pytest.mark.parametrize(
    "xff",
    [
        "203.0.113.7, garbage",
        "203.0.113.7, unknown",
        "203.0.113.7, ",
        "203.0.113.7,",
        "203.0.113.7, 1.2.3.4.5",
        "203.0.113.7, fe80::1%eth0",
        "203.0.113.7, [2001:db8::1",
        "203.0.113.7, 198.51.100.2:99999",
        "203.0.113.7, " + "1" * 80,
        "203.0.113.7, 0x7f.1",
        "203.0.113.7, example.com",
        "203.0.113.7, 198.51.100.2 198.51.100.3",
    ],
)
def test_malformed_rightmost_falls_back_to_peer_never_to_left_entries(xff: str) -> None:
    assert client_address("127.0.0.1", xff, LOOPBACK) == "127.0.0.1"


@pytest.mark.parametrize(
    ("peer", "xff"),
    [
        ("198.51.100.20", "127.0.0.1"),
        ("198.51.100.20", "203.0.113.7"),
        ("198.51.100.20", "1.1.1.1, 2.2.2.2"),
        ("2001:db8::20", "::1"),
    ],
)
def test_untrusted_peer_headers_are_ignored(peer: str, xff: str) -> None:
    assert client_address(peer, xff, LOOPBACK) == str(ipaddress.ip_address(peer))


def test_configured_proxy_network_is_trusted_and_loopback_then_is_not() -> None:
    assert client_address("10.0.0.5", "203.0.113.7", PROXY_NET) == "203.0.113.7"
    assert client_address("127.0.0.1", "203.0.113.7", PROXY_NET) == "127.0.0.1"


def test_unparseable_peer_yields_unspecified_address() -> None:
    assert client_address(None, "203.0.113.7", LOOPBACK) == "0.0.0.0"
    assert client_address("not-an-ip", "203.0.113.7", LOOPBACK) == "0.0.0.0"


def test_forwarded_scheme_only_from_trusted_proxy() -> None:
    assert forwarded_scheme("127.0.0.1", "https", "http", LOOPBACK) == "https"
    assert forwarded_scheme("127.0.0.1", "http, https", "http", LOOPBACK) == "https"
    assert forwarded_scheme("127.0.0.1", "gopher", "http", LOOPBACK) == "http"
    assert forwarded_scheme("198.51.100.20", "https", "http", LOOPBACK) == "http"


def test_parse_address_forms() -> None:
    assert str(parse_address(" 192.0.2.1 ")) == "192.0.2.1"
    assert str(parse_address("[::1]")) == "::1"
    assert parse_address("[::1]x") is None
    assert parse_address("192.0.2.1:") is None
    assert parse_address(None) is None


address = st.one_of(st.ip_addresses(v=4), st.ip_addresses(v=6)).map(str)
junk = st.text(max_size=30)


@given(
    peer=address,
    entries=st.lists(st.one_of(address, junk), max_size=5),
    trusted_peer=st.booleans(),
)
def test_result_is_always_the_peer_or_the_proxys_own_entry(
    peer: str, entries: list[str], trusted_peer: bool
) -> None:
    peer_address = parse_address(peer)  # IPv4-mapped peers are folded to IPv4
    assert peer_address is not None
    trusted = (ipaddress.ip_network(peer_address),) if trusted_peer else ()
    xff = ",".join(entries) if entries else None
    result = client_address(peer, xff, trusted)
    allowed = {str(peer_address)}
    if trusted_peer and entries:
        rightmost = parse_address(xff.rsplit(",", 1)[-1]) if xff else None
        if rightmost is not None:
            allowed = {str(rightmost)}
    assert result in allowed
