"""Fuzz address and CIDR parsing: the client-address rules, the ban table and its kernel.

``tests/security/test_bantable.py`` checks the kernel against ``ipaddress`` on address-like
text and ``tests/http/test_client_address.py`` checks ``client_address`` with valid peers.
Here every entry point gets arbitrary text, near-miss spellings (brackets, ports, zone ids,
mapped and compatible IPv6, leading zeros, full-width digits, very long strings) and objects
that are not text at all:

- ``client_address``/``parse_address``/``forwarded_scheme`` never raise and return a real address
  (or ``0.0.0.0`` for an impossible peer);
- ``bantable.parse_network``/``parse_address``/``BanTable`` answer or raise ValueError;
- the compiled ``parse_networks``/``parse_addresses``/``PrefixTable.find`` never raise and never
  accept what ``ipaddress`` refuses;
- ``ALERTSTATION_TRUSTED_PROXIES`` parsing raises only SettingsError (a ValueError), and an IP
  filter's value is either stored in canonical form or refused with ``Invalid``.
"""

from __future__ import annotations

import ipaddress

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from alertstation._native import cidr as native_cidr
from alertstation.errors import Invalid
from alertstation.http.client_address import client_address, forwarded_scheme, parse_address
from alertstation.security import bantable
from alertstation.security.bans.entries import check_value
from alertstation.settings import SettingsError, parse_networks
from tests.fuzz.fuzzing import fuzz

NEAR_MISSES = [
    "",
    " ",
    "1.2.3.4",
    "01.2.3.4",
    "1.2.3.4:80",
    "1.2.3.4:65536",
    "1.2.3.4:",
    "1.2.3.4/32",
    "1.2.3.4/33",
    "1.2.3.4/-1",
    "1.2.3.4/0x8",
    "1.2.3.0/255.255.255.0",
    "1.2.3.0/0.0.0.255",
    "[::1]",
    "[::1]:8080",
    "[::1",
    "::1]",
    "[1.2.3.4]",
    "::ffff:1.2.3.4",
    "::ffff:10.0.0.0/104",
    "::1.2.3.4",
    "fe80::1%eth0",
    "fe80::1%25eth0",
    "::/0",
    "0.0.0.0/0",
    "1:2:3:4:5:6:7:8:9",
    "1::2::3",
    "\uff11.2.3.4",
    "1.2.3.4\x00",
    "1.2.3.4\n",
    "1.2.3.4, 5.6.7.8",
    "unknown",
    "_hidden",
    "a" * 200,
    "1" * 70,
    "ffff:" * 20,
]
TEXT = st.sampled_from(NEAR_MISSES) | st.text(
    alphabet="0123456789abcdefABCDEF:.[]/%, x", max_size=50
)
ANY_TEXT = TEXT | st.text(max_size=40)
NOT_TEXT = st.none() | st.integers() | st.binary(max_size=8) | st.floats() | st.lists(st.integers())


@fuzz(150)
@given(peer=st.none() | ANY_TEXT, forwarded=st.none() | ANY_TEXT, trust_peer=st.booleans())
@example(peer="[::1]:99999", forwarded="1.2.3.4", trust_peer=True)
def test_client_address_is_always_a_real_address(
    peer: str | None, forwarded: str | None, trust_peer: bool
) -> None:
    parsed = parse_address(peer)
    assert parsed is None or isinstance(parsed, ipaddress.IPv4Address | ipaddress.IPv6Address)
    trusted = (ipaddress.ip_network(parsed),) if (trust_peer and parsed is not None) else ()
    answer = client_address(peer, forwarded, trusted)
    ipaddress.ip_address(answer)  # a real, normalised address
    assert parsed is not None or answer == "0.0.0.0"
    assert forwarded_scheme(peer, forwarded, "http", trusted) in ("http", "https")


@fuzz(150)
@given(value=ANY_TEXT | NOT_TEXT)
def test_ban_table_parsing_answers_or_raises_value_error(value: object) -> None:
    for parse in (bantable.parse_network, bantable.parse_address, bantable.normalise):
        try:
            parse(value)  # type: ignore[arg-type]
        except ValueError as ex:
            assert str(ex)
    try:
        table = bantable.BanTable([value])
    except ValueError as ex:
        assert str(ex)
    else:
        assert len(table) == 1
        assert table.contains(str(bantable.parse_network(value).network_address))  # type: ignore[arg-type]
    try:
        check_value(value)
    except Invalid as ex:
        assert ex.status == 422 and ex.message


@fuzz(120)
@given(values=st.lists(ANY_TEXT | NOT_TEXT, max_size=8), query=ANY_TEXT | NOT_TEXT)
def test_the_kernel_never_raises_and_never_accepts_what_ipaddress_refuses(
    values: list[object], query: object
) -> None:
    keys, lengths, ok = native_cidr.parse_networks(values)
    _, _, ref_ok = bantable.reference_parse_networks(values)
    assert len(ok) == len(values) and not (ok.astype(bool) & ~ref_ok.astype(bool)).any()
    addr_keys, addr_ok = native_cidr.parse_addresses(values)
    _, ref_addr_ok = bantable.reference_parse_addresses(values)
    assert not (addr_ok.astype(bool) & ~ref_addr_ok.astype(bool)).any()
    accepted = ok.astype(bool)
    table = native_cidr.PrefixTable(keys[accepted], lengths[accepted])
    label = table.find(query)
    assert label in (native_cidr.NO_MATCH, native_cidr.NOT_PARSED) or (
        0 <= label < int(np.count_nonzero(accepted))
    )
    assert table.find_keys(addr_keys).shape == (len(values),)


@fuzz(80)
@given(parts=st.lists(ANY_TEXT, max_size=5))
@example(parts=["10.0.0.0/8", "fe80::1%eth0"])
def test_trusted_proxies_parse_or_raise_settings_error(parts: list[str]) -> None:
    try:
        networks = parse_networks(",".join(parts))
    except SettingsError as ex:
        assert str(ex).startswith("ALERTSTATION_TRUSTED_PROXIES")
    else:
        assert all(isinstance(n, ipaddress.IPv4Network | ipaddress.IPv6Network) for n in networks)
