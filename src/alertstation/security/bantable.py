"""Find client addresses in a set of IPv4/IPv6 addresses and CIDR ranges: the ban gate's table.

``BanTable(entries)`` takes entries that are address/CIDR strings, ``ipaddress`` objects or any
object with a ``value`` string (an ``IpFilter`` row), and answers ``contains``, ``lookup``
(longest-prefix match, returning the entry) and ``contains_many`` (a numpy bool array).

The compiled module ``alertstation._native.cidr`` does the work: one table of sorted, disjoint
128-bit intervals searched by bisection. This module validates and converts, keeps a pure
``ipaddress`` reference of the same functions (the oracle the tests compare against, and the
fallback when the compiled module is missing) and, with ``ALERTSTATION_REQUIRE_NATIVE=1``, turns
a missing compiled module into an ImportError.

Decisions (see docs/security.md):

- An IPv4-mapped IPv6 address (``::ffff:a.b.c.d``) *is* the IPv4 address ``a.b.c.d``, both as an
  entry (``::ffff:10.0.0.0/104`` is ``10.0.0.0/8``) and as a query.
- An IPv6 range never covers an IPv4 address, so ``::/0`` bans all of IPv6 and nothing else;
  IPv4-compatible (``::a.b.c.d``) and NAT64 (``64:ff9b::/96``) addresses are plain IPv6.
- Of two entries naming the same range, the first given is the one ``lookup`` returns.
- Ranges with host bits set (``10.1.2.3/8``) and scoped addresses (``fe80::1%eth0``) are
  refused with ValueError rather than guessed at.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from types import ModuleType
from typing import Any, Final, Generic, TypeVar

import numpy as np
import numpy.typing as npt

from alertstation.kernel_loader import load_kernel

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
Keys = npt.NDArray[np.uint64]
Lengths = npt.NDArray[np.uint8]
Flags = npt.NDArray[np.uint8]
Labels = npt.NDArray[np.int32]
E = TypeVar("E")

NO_MATCH: Final[int] = -1
NOT_PARSED: Final[int] = -2
MAPPED_PREFIX_LEN: Final[int] = 96  # ::ffff:0:0/96 holds every IPv4 address
_MAPPED: Final[int] = 0xFFFF << 32
_MASK64: Final[int] = (1 << 64) - 1
_KEY_BITS: Final[int] = 128


# --- canonical parsing: plain ipaddress, the last word on what an entry or address is ---------


def parse_network(value: str | IPAddress | IPNetwork) -> IPNetwork:
    """Return the range ``value`` names; a single address is a /32 or /128.

    IPv4-mapped IPv6 folds to IPv4. Raises ValueError for anything that is not one address or
    one CIDR range: host bits set, a scope id, a netmask that is not a prefix, text that is not
    an address.
    """
    if isinstance(value, ipaddress.IPv4Network | ipaddress.IPv6Network):
        network: IPNetwork = value
    elif isinstance(value, ipaddress.IPv4Address | ipaddress.IPv6Address):
        network = ipaddress.ip_network(value)
    elif isinstance(value, str):
        if "%" in value:
            raise ValueError(f"{value!r}: scoped addresses (with %zone) are not accepted")
        try:
            network = ipaddress.ip_network(value, strict=True)
        except ValueError as ex:
            raise ValueError(f"{value!r} is not an IPv4/IPv6 address or CIDR range: {ex}") from None
    else:
        raise ValueError(f"expected an address or CIDR range, got {type(value).__name__}")
    if isinstance(network, ipaddress.IPv6Network) and network.prefixlen >= MAPPED_PREFIX_LEN:
        mapped = network.network_address.ipv4_mapped
        if mapped is not None:
            return ipaddress.IPv4Network((mapped, network.prefixlen - MAPPED_PREFIX_LEN))
    if getattr(network.network_address, "scope_id", None):
        raise ValueError(f"{value!r}: scoped addresses (with %zone) are not accepted")
    return network


def parse_address(value: str | IPAddress) -> IPAddress:
    """Return the address ``value`` names, IPv4-mapped IPv6 folded to IPv4; ValueError if none."""
    if isinstance(value, ipaddress.IPv4Address | ipaddress.IPv6Address):
        address: IPAddress = value
    elif isinstance(value, str):
        try:
            address = ipaddress.ip_address(value)
        except ValueError as ex:
            raise ValueError(f"{value!r} is not an IPv4/IPv6 address: {ex}") from None
    else:
        raise ValueError(f"expected an IPv4/IPv6 address, got {type(value).__name__}")
    if isinstance(address, ipaddress.IPv6Address):
        if address.scope_id:
            raise ValueError(f"{value!r}: scoped addresses (with %zone) are not accepted")
        if address.ipv4_mapped is not None:
            return address.ipv4_mapped
    return address


def normalise(value: str | IPAddress | IPNetwork) -> str:
    """Return the canonical text of an entry: ``192.0.2.7``, ``10.0.0.0/8``, ``2001:db8::/32``."""
    network = parse_network(value)
    if network.prefixlen == network.max_prefixlen:
        return str(network.network_address)
    return str(network)


def is_range(value: str | IPAddress | IPNetwork) -> bool:
    """Tell whether an entry covers more than one address."""
    network = parse_network(value)
    return network.prefixlen < network.max_prefixlen


def address_key(value: str | IPAddress) -> tuple[int, int]:
    """Return the 128-bit key (hi, lo) of an address; IPv4 is keyed as ::ffff:a.b.c.d."""
    address = parse_address(value)
    number = int(address)
    if address.version == 4:
        number |= _MAPPED
    return number >> 64, number & _MASK64


def network_key(value: str | IPAddress | IPNetwork) -> tuple[int, int, int]:
    """Return (hi, lo, key length) of a range; an IPv4 /n has key length 96 + n."""
    network = parse_network(value)
    number = int(network.network_address)
    length = network.prefixlen
    if network.version == 4:
        number |= _MAPPED
        length += MAPPED_PREFIX_LEN
    return number >> 64, number & _MASK64, length


# --- pure-Python reference of alertstation._native.cidr -------------------------------------


def reference_parse_networks(values: list[Any]) -> tuple[Keys, Lengths, Flags]:
    """Return (keys, key lengths, ok) like the kernel's ``parse_networks``."""
    keys = np.zeros((len(values), 2), dtype=np.uint64)
    lengths = np.zeros(len(values), dtype=np.uint8)
    ok = np.zeros(len(values), dtype=np.uint8)
    for index, value in enumerate(values):
        if not isinstance(value, str):
            continue
        try:
            hi, lo, length = network_key(value)
        except ValueError:
            continue
        keys[index] = (hi, lo)
        lengths[index] = length
        ok[index] = 1
    return keys, lengths, ok


def reference_parse_addresses(values: list[Any]) -> tuple[Keys, Flags]:
    """Return (keys, ok) like the kernel's ``parse_addresses``."""
    keys = np.zeros((len(values), 2), dtype=np.uint64)
    ok = np.zeros(len(values), dtype=np.uint8)
    for index, value in enumerate(values):
        if not isinstance(value, str):
            continue
        try:
            keys[index] = address_key(value)
        except ValueError:
            continue
        ok[index] = 1
    return keys, ok


class ReferencePrefixTable:
    """Longest-prefix match with one dict per prefix length, tried longest first."""

    def __init__(self, keys: npt.ArrayLike, plens: npt.ArrayLike) -> None:
        key_array = np.asarray(keys, dtype=np.uint64).reshape(-1, 2)
        lengths = np.asarray(plens, dtype=np.uint8)
        if lengths.shape[0] != key_array.shape[0]:
            raise ValueError(f"{key_array.shape[0]} keys but {lengths.shape[0]} prefix lengths")
        self._by_length: dict[int, dict[int, int]] = {}
        for index, ((hi, lo), length) in enumerate(
            zip(key_array.tolist(), lengths.tolist(), strict=True)
        ):
            if length > _KEY_BITS:
                raise ValueError(f"prefix length {length} at index {index} is over 128")
            start = (hi << 64) | lo
            if start & _host_mask(length):
                raise ValueError(f"prefix at index {index} has host bits set beyond /{length}")
            self._by_length.setdefault(length, {}).setdefault(start, index)
        # The IPv4 hole: IPv6 ranges never cover IPv4 keys; a real entry of that extent wins.
        self._by_length.setdefault(MAPPED_PREFIX_LEN, {}).setdefault(_MAPPED, NO_MATCH)
        self._lengths = sorted(self._by_length, reverse=True)
        self.prefix_count = int(key_array.shape[0])

    def find(self, value: object) -> int:
        """Return the label for an address string, -1 when nothing covers it, -2 if refused."""
        if not isinstance(value, str):
            return NOT_PARSED
        try:
            hi, lo = address_key(value)
        except ValueError:
            return NOT_PARSED
        return self.find_key(hi, lo)

    def find_key(self, hi: int, lo: int) -> int:
        """Return the label for a key, -1 when nothing covers it."""
        key = (int(hi) << 64) | int(lo)
        for length in self._lengths:
            label = self._by_length[length].get(key & ~_host_mask(length))
            if label is not None:
                return label
        return NO_MATCH

    def find_many(self, values: list[Any]) -> Labels:
        """Return int32 labels for a list of address strings: -1 no match, -2 refused."""
        return np.array([self.find(value) for value in values], dtype=np.int32)

    def contains_many(self, values: list[Any]) -> tuple[npt.NDArray[np.bool_], int]:
        """Return (covered, refused) like the kernel's: refused items read False."""
        labels = self.find_many(values)
        return labels >= 0, int(np.count_nonzero(labels == NOT_PARSED))

    def find_keys(self, keys: Keys) -> Labels:
        """Return int32 labels for keys uint64[n, 2]."""
        pairs = np.asarray(keys, dtype=np.uint64).reshape(-1, 2).tolist()
        return np.array([self.find_key(hi, lo) for hi, lo in pairs], dtype=np.int32)


def _host_mask(length: int) -> int:
    return (1 << (_KEY_BITS - length)) - 1


# --- implementation choice ------------------------------------------------------------------

_native: ModuleType | None = load_kernel("cidr")

HAS_NATIVE: Final[bool] = _native is not None

_parse_networks_impl: Any
_parse_addresses_impl: Any
_table_impl: Any
if _native is not None:
    _parse_networks_impl = _native.parse_networks
    _parse_addresses_impl = _native.parse_addresses
    _table_impl = _native.PrefixTable
else:
    _parse_networks_impl = reference_parse_networks
    _parse_addresses_impl = reference_parse_addresses
    _table_impl = ReferencePrefixTable


# --- public API -----------------------------------------------------------------------------


def entry_value(entry: object) -> str | IPAddress | IPNetwork:
    """Return what an entry names: itself for text and ipaddress objects, else its ``value``."""
    if isinstance(entry, str | ipaddress.IPv4Address | ipaddress.IPv6Address):
        return entry
    if isinstance(entry, ipaddress.IPv4Network | ipaddress.IPv6Network):
        return entry
    value = getattr(entry, "value", None)
    if isinstance(value, str):
        return value
    raise ValueError(f"an entry must be an address, a range or have a value string: {entry!r}")


class BanTable(Generic[E]):
    """Answer which entry, if any, covers an address: membership and longest-prefix match."""

    __slots__ = ("_entries", "_table")

    def __init__(self, entries: Iterable[E]) -> None:
        """Build the table; ValueError names the first entry that is not an address or range."""
        self._entries: list[E] = list(entries)
        values = [entry_value(entry) for entry in self._entries]
        texts = [value if isinstance(value, str) else str(value) for value in values]
        keys, lengths, ok = _parse_networks_impl(texts)
        for index in np.flatnonzero(ok == 0).tolist():
            try:
                hi, lo, length = network_key(values[index])
            except ValueError as ex:
                raise ValueError(f"entries[{index}]: {ex}") from None
            keys[index] = (hi, lo)
            lengths[index] = length
        self._table = _table_impl(keys, lengths)

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def entries(self) -> Sequence[E]:
        """Return the entries in the order given."""
        return tuple(self._entries)

    def index_of(self, address: str | IPAddress) -> int:
        """Return the position of the longest entry covering ``address``, -1 when none does."""
        index: int = self._table.find(address)
        if index == NOT_PARSED:
            hi, lo = address_key(address)  # ipaddress objects, and text only ipaddress takes
            index = self._table.find_key(hi, lo)
        return index

    def contains(self, address: str | IPAddress) -> bool:
        """Tell whether any entry covers ``address``; ValueError when it is not an address."""
        index: int = self._table.find(address)
        if index == NOT_PARSED:
            index = self.index_of(address)
        return index >= 0

    def lookup(self, address: str | IPAddress) -> E | None:
        """Return the entry with the longest range covering ``address``, None when none does."""
        index: int = self._table.find(address)
        if index == NOT_PARSED:
            index = self.index_of(address)
        return None if index < 0 else self._entries[index]

    def indexes(self, addresses: Iterable[str | IPAddress]) -> Labels:
        """Return, for each address, the position of its longest covering entry or -1."""
        values = addresses if type(addresses) is list else list(addresses)
        # Parsed and searched in one compiled pass; what the fast parser refuses (ipaddress
        # objects, text only ipaddress takes) goes through ipaddress, which has the last word.
        labels: Labels = self._table.find_many(values)
        for index in np.flatnonzero(labels == NOT_PARSED).tolist():
            try:
                hi, lo = address_key(values[index])
            except ValueError as ex:
                raise ValueError(f"addresses[{index}]: {ex}") from None
            labels[index] = self._table.find_key(hi, lo)
        return labels

    def contains_many(self, addresses: Iterable[str | IPAddress]) -> npt.NDArray[np.bool_]:
        """Return a bool array: whether each address is covered by some entry."""
        values = addresses if type(addresses) is list else list(addresses)
        covered: npt.NDArray[np.bool_]
        covered, refused = self._table.contains_many(values)
        if refused:  # ipaddress objects, text only ipaddress takes, or not addresses at all
            return self.indexes(values) >= 0
        return covered
