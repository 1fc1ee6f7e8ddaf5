"""TrustedProxies (the cached one-hop rule of the middleware) answers as the plain functions do."""

from __future__ import annotations

import ipaddress

from hypothesis import given
from hypothesis import strategies as st

from alertstation.http.client_address import (
    TrustedProxies,
    client_address,
    forwarded_scheme,
    is_trusted,
    parse_address,
)
from alertstation.settings import parse_networks

NETWORKS = [
    (),
    parse_networks("127.0.0.0/8,::1/128"),
    parse_networks("10.0.0.5/32"),
    parse_networks("192.0.2.0/24,2001:db8::/32"),
]
SPREAD = [
    None,
    "",
    " ",
    "127.0.0.1",
    " 127.0.0.1 ",
    "127.0.0.1:8080",
    "127.000.0.1",
    "10.0.0.5",
    "10.0.0.6",
    "192.0.2.200",
    "192.0.2.200:65535",
    "192.0.2.200:65536",
    "192.0.2.200:",
    "203.0.113.7",
    "255.255.255.255",
    "256.1.1.1",
    "1.2.3",
    "::1",
    "[::1]",
    "[::1]:443",
    "[::1]x",
    "::ffff:127.0.0.1",
    "::ffff:198.51.100.2",
    "2001:db8::1",
    "2001:DB8:0:0:0:0:0:1",
    "[2001:db8::1]:443",
    "fe80::1%eth0",
    "2001:db8::1, 203.0.113.7",
    "1.2.3.4,203.0.113.7",
    "1.2.3.4, ",
    "not-an-ip",
    "localhost",
    "0x7f.1",
    "unknown",
    "1.2.3.4" + " " * 200,
    "9" * 300,
]
PROTOS = [None, "", "https", "HTTP", "http, https", "gopher", "https, gopher"]


def expected(peer: str | None, xff: str | None, proto: str | None, networks: tuple) -> tuple:
    return (
        client_address(peer, xff, networks),
        forwarded_scheme(peer, proto, "http", networks),
        is_trusted(parse_address(peer), networks),
    )


def answer(proxies: TrustedProxies, peer: str | None, xff: str | None, proto: str | None) -> tuple:
    origin = proxies.origin(peer, xff, proto, "http")
    return origin.client_ip, origin.scheme, origin.from_proxy


def test_cached_answers_equal_the_one_hop_functions_for_a_spread_of_addresses() -> None:
    for networks in NETWORKS:
        proxies = TrustedProxies(networks, cache_size=8)  # small: entries are evicted and redone
        for _ in range(2):  # the second pass answers from the caches where they still hold it
            for peer in SPREAD:
                for xff in SPREAD:
                    for proto in PROTOS:
                        want = expected(peer, xff, proto, networks)
                        assert answer(proxies, peer, xff, proto) == want, (peer, xff, proto)


address = st.one_of(st.ip_addresses(v=4), st.ip_addresses(v=6)).map(str)
junk = st.text(max_size=30)


@given(
    peer=st.one_of(address, junk, st.none()),
    entries=st.lists(st.one_of(address, junk), max_size=4),
    proto=st.one_of(st.none(), st.sampled_from(PROTOS[1:]), junk),
    trusted_peer=st.booleans(),
)
def test_cached_answers_equal_the_one_hop_functions_for_any_input(
    peer: str | None, entries: list[str], proto: str | None, trusted_peer: bool
) -> None:
    parsed = parse_address(peer)
    networks = (ipaddress.ip_network(parsed),) if trusted_peer and parsed is not None else ()
    xff = ",".join(entries) if entries else None
    proxies = TrustedProxies(networks)
    want = expected(peer, xff, proto, networks)
    assert answer(proxies, peer, xff, proto) == want
    assert answer(proxies, peer, xff, proto) == want  # from the cache


def test_peer_cache_is_bounded() -> None:
    proxies = TrustedProxies(parse_networks("127.0.0.0/8"), cache_size=16)
    for n in range(1000):
        proxies.peer(f"198.51.{n // 256}.{n % 256}")
    assert proxies._peer.cache_info().currsize == 16
    assert proxies.peer("127.0.0.9") == ("127.0.0.9", True)
    assert proxies.peer("198.51.0.1") == ("198.51.0.1", False)


def test_origin_cache_is_bounded_and_skips_long_headers() -> None:
    networks = parse_networks("127.0.0.0/8")
    proxies = TrustedProxies(networks, cache_size=4)  # keeps at most 16 whole answers
    for n in range(1000):
        xff = f"198.51.{n // 256}.{n % 256}"
        assert answer(proxies, "127.0.0.1", xff, "https") == expected(
            "127.0.0.1", xff, "https", networks
        )
        assert len(proxies._origins) <= 16
    long_header = ",".join(["203.0.113.9"] * 20)
    proxies._origins.clear()
    assert proxies.origin("127.0.0.1", long_header, None, "http").client_ip == "203.0.113.9"
    assert proxies._origins == {}
