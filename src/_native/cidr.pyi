"""One prefix table for IPv4 and IPv6: membership and longest-prefix match by binary search.

Call these through ``alertstation.security.bantable``, which validates input first. Keys are
128-bit integers split into (hi, lo) uint64 words; IPv4 ``a.b.c.d`` is keyed as
``::ffff:a.b.c.d`` and an IPv4 ``/n`` has key length ``96 + n``.
"""

import numpy as np
import numpy.typing as npt

NO_MATCH: int  # -1: no prefix covers the address
NOT_PARSED: int  # -2: the fast parser refused the text; the caller decides
MAPPED_PREFIX_LEN: int  # 96: key length of ::ffff:0:0/96, all of IPv4

def parse_networks(
    values: list[object],
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint8], npt.NDArray[np.uint8]]:
    """Return (keys uint64[n, 2], key lengths uint8[n], ok uint8[n]) for address/CIDR strings.

    ``ok[i]`` is 0 where ``values[i]`` is not a str, is not plain ``inet_pton`` text, has a
    malformed length or has host bits set.
    """

def parse_addresses(values: list[object]) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint8]]:
    """Return (keys uint64[n, 2], ok uint8[n]) for address strings; ok is 0 where refused."""

def _use_ssse3(on: bool) -> bool:
    """Let the batch parse dotted quads and IPv6 groups with SSSE3 (the default where the CPU
    has it) or not; return whether it now does. For tests of the other path."""

class PrefixTable:
    """Longest-prefix match over 128-bit keys; labels are the indexes of the given prefixes."""

    prefix_count: int

    def __init__(self, keys: npt.ArrayLike, plens: npt.ArrayLike) -> None:
        """Build from keys uint64[n, 2] and key lengths uint8[n]; ValueError on host bits set.

        Of equal prefixes the first keeps the label. IPv6 prefixes never cover IPv4 keys.
        """

    def __len__(self) -> int:
        """Return the number of intervals the prefixes cut the key space into."""

    def intervals(self) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int32]]:
        """Return copies of (interval starts uint64[m, 2], labels int32[m])."""

    def find(self, value: object) -> int:
        """Return the label for an address string, -1 when nothing covers it, -2 if refused."""

    def find_key(self, hi: int, lo: int) -> int:
        """Return the label for a key, -1 when nothing covers it."""

    def find_many(self, values: list[object]) -> npt.NDArray[np.int32]:
        """Return int32 labels for address strings: -1 no match, -2 where ``find`` refuses.

        Reads each str in place, a chunk at a time sorted by family, with every buffer of the
        chunk on the stack: parses IPv4 and IPv6 text in separate runs (requesting each key's
        bucket as it goes), then searches each family in its own run, requesting intervals
        ahead; no Python object per item and no array but the result. Holds the GIL.
        """

    def contains_many(self, values: list[object]) -> tuple[npt.NDArray[np.bool_], int]:
        """Return (covered bool[n], refused): ``find_many`` as membership, and how many items
        it refused (read False; the caller decides them). Each chunk's labels become bools as
        it goes: no label array."""

    def find_keys(self, keys: npt.NDArray[np.uint64]) -> npt.NDArray[np.int32]:
        """Return int32 labels for keys uint64[n, 2]; releases the GIL while searching."""
