"""Match alert geocodes (SAME and UGC) against the station's configured codes through dense ids.

Every code becomes an integer id by arithmetic on its characters (no hashing, see
docs/matching.md): SAME ``PSSCCC`` is the number itself, in [0, 1000000); UGC ``SSTNNN`` (two
letters, ``Z`` or ``C``, three digits) is ``UGC_BASE + ((L1*26 + L2)*2 + T)*1000 + NNN``, in
[1000000, 2352000). A ``GeocodeMatcher`` turns its configured codes once into a bit table of
every alert id that matches one of them, so matching costs one bit test per alert code, and a
store that keeps geocodes as ids can be re-matched without touching strings.

The compiled module ``alertstation._native.geomatch`` does the work. This module validates
input, keeps a small pure-Python reference of every kernel function (the oracle the tests
compare against) and falls back to it only when the compiled module is missing; with
``ALERTSTATION_REQUIRE_NATIVE=1`` a missing compiled module is an ImportError instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType, ModuleType
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from alertstation.kernel_loader import load_kernel

Int32Array = npt.NDArray[np.int32]
Int64Array = npt.NDArray[np.int64]
UInt8Array = npt.NDArray[np.uint8]
BoolArray = npt.NDArray[np.bool_]

SAME_SPACE: Final[int] = 1_000_000
UGC_BASE: Final[int] = 1_000_000
UGC_PAIRS: Final[int] = 26 * 26
ID_SPACE: Final[int] = UGC_BASE + UGC_PAIRS * 2 * 1000  # 2,352,000
TABLE_BYTES: Final[int] = ID_SPACE // 8  # 294,000: one bit per id
INVALID_ID: Final[int] = -1
NATION: Final[str] = "000000"

# State FIPS number of each two-letter postal code UGC uses: the 50 states, DC and the five
# inhabited territories. Marine UGC prefixes (AM, AN, GM, LM, PZ, ...) have no FIPS number.
STATE_FIPS: Final[Mapping[str, int]] = MappingProxyType(
    {
        "AL": 1, "AK": 2, "AZ": 4, "AR": 5, "CA": 6, "CO": 8, "CT": 9, "DE": 10, "DC": 11,
        "FL": 12, "GA": 13, "HI": 15, "ID": 16, "IL": 17, "IN": 18, "IA": 19, "KS": 20,
        "KY": 21, "LA": 22, "ME": 23, "MD": 24, "MA": 25, "MI": 26, "MN": 27, "MS": 28,
        "MO": 29, "MT": 30, "NE": 31, "NV": 32, "NH": 33, "NJ": 34, "NM": 35, "NY": 36,
        "NC": 37, "ND": 38, "OH": 39, "OK": 40, "OR": 41, "PA": 42, "RI": 44, "SC": 45,
        "SD": 46, "TN": 47, "TX": 48, "UT": 49, "VT": 50, "VA": 51, "WA": 53, "WV": 54,
        "WI": 55, "WY": 56, "AS": 60, "GU": 66, "MP": 69, "PR": 72, "VI": 78,
    }
)  # fmt: skip
FIPS_STATE: Final[Mapping[int, str]] = MappingProxyType({v: k for k, v in STATE_FIPS.items()})

_WHITESPACE: Final[str] = " \t\n\r\x0b\x0c"
_UGC_KINDS: Final[str] = "ZC"


def _pair_index(letters: str) -> int:
    """Return the index (0..675) of an upper-case two-letter UGC prefix."""
    return (ord(letters[0]) - 65) * 26 + (ord(letters[1]) - 65)


def _state_tables() -> tuple[npt.NDArray[np.int16], npt.NDArray[np.int16]]:
    """Return (state FIPS of each letter pair, letter pair of each state FIPS), -1 for none."""
    pair_state = np.full(UGC_PAIRS, -1, dtype=np.int16)
    state_pair = np.full(100, -1, dtype=np.int16)
    for postal, fips in STATE_FIPS.items():
        pair_state[_pair_index(postal)] = fips
        state_pair[fips] = _pair_index(postal)
    pair_state.flags.writeable = False
    state_pair.flags.writeable = False
    return pair_state, state_pair


PAIR_STATE, STATE_PAIR = _state_tables()


# --- pure-Python reference: same signatures and semantics as alertstation._native.geomatch -----


def reference_encode(code: object) -> int:
    """Return the id of one code (a str), or -1 when it is not a valid SAME or UGC code."""
    if not isinstance(code, str):
        return INVALID_ID
    text = code.strip(_WHITESPACE)
    if len(text) != 6 or not text.isascii():
        return INVALID_ID
    text = text.upper()
    if text.isdigit():
        return int(text)
    letters, kind, number = text[:2], text[2], text[3:]
    if not (letters.isalpha() and kind in _UGC_KINDS and number.isdigit()):
        return INVALID_ID
    return UGC_BASE + (_pair_index(letters) * 2 + _UGC_KINDS.index(kind)) * 1000 + int(number)


def reference_encode_many(codes: Iterable[object]) -> Int32Array:
    """Return an int32 array with the id of each code, -1 for invalid ones."""
    return np.array([reference_encode(code) for code in codes], dtype=np.int32)


def _code_list(codes: object) -> list[object]:
    """Return one alert's geocodes as a list; a bare str is a TypeError, as in the kernel."""
    if isinstance(codes, str):
        raise TypeError(
            "each alert's geocodes must be an iterable of code strings, got a single str"
        )
    if not isinstance(codes, Iterable):
        raise TypeError("each alert's geocodes must be an iterable of str")
    return list(codes)


def reference_encode_lists(alerts: Iterable[Iterable[object]]) -> tuple[Int32Array, Int64Array]:
    """Return (flat int32 ids, int64 offsets of length n + 1), leaving invalid codes out."""
    flat: list[int] = []
    offsets = [0]
    for codes in alerts:
        flat.extend(i for i in map(reference_encode, _code_list(codes)) if i != INVALID_ID)
        offsets.append(len(flat))
    return np.array(flat, dtype=np.int32), np.array(offsets, dtype=np.int64)


def reference_build_table(
    configured: Int32Array, pair_state: npt.NDArray[np.int16], state_pair: npt.NDArray[np.int16]
) -> UInt8Array:
    """Return the bit table (bit ``id & 7`` of byte ``id >> 3``) of the alert ids that match."""
    hits = np.zeros(ID_SPACE, dtype=bool)
    for code in (int(c) for c in configured):
        if code == 0:
            hits[:] = True
            break
        hits[[code, 0]] = True
        if code >= UGC_BASE:
            state = int(pair_state[(code - UGC_BASE) // 2000])
            if state > 0:
                hits[state * 1000] = True
                if (code - UGC_BASE) // 1000 % 2 == 1 and code % 1000:
                    # a UGC county is its SAME county, which matches each of its parts
                    hits[[p * 100_000 + state * 1000 + code % 1000 for p in range(10)]] = True
            continue
        part, state, county = code // 100_000, code // 1000 % 100, code % 1000
        if state:
            hits[state * 1000] = True
        if part == 0 and county == 0 and state:
            for p in range(10):
                hits[p * 100_000 + state * 1000 : p * 100_000 + state * 1000 + 1000] = True
            pair = int(state_pair[state])
            if pair >= 0:
                hits[UGC_BASE + pair * 2000 : UGC_BASE + pair * 2000 + 2000] = True
        else:
            if part == 0:
                hits[[p * 100_000 + state * 1000 + county for p in range(1, 10)]] = True
            else:
                hits[state * 1000 + county] = True
            pair = int(state_pair[state])
            if county and pair >= 0:
                hits[UGC_BASE + pair * 2000 + 1000 + county] = True  # its UGC county
    return np.packbits(hits, bitorder="little")


def _reference_hit(table: UInt8Array, code: int) -> bool:
    """Return whether an id is inside the id space and set in the table."""
    return 0 <= code < ID_SPACE and bool((int(table[code >> 3]) >> (code & 7)) & 1)


def reference_match_one(table: UInt8Array, codes: Iterable[object]) -> bool:
    """Return whether any code of one alert's geocodes is set in the table."""
    return any(_reference_hit(table, reference_encode(code)) for code in _code_list(codes))


def reference_match_lists(table: UInt8Array, alerts: Iterable[Iterable[object]]) -> BoolArray:
    """Return a bool array: whether each alert's geocodes hold a code set in the table."""
    return np.array([reference_match_one(table, codes) for codes in alerts], dtype=bool)


def reference_match_encoded(table: UInt8Array, flat: Int32Array, offsets: Int64Array) -> BoolArray:
    """Return a bool array: whether each alert's ids ``flat[offsets[i]:offsets[i+1]]`` match."""
    if len(offsets) < 1:
        raise ValueError("offsets must hold n + 1 entries, got an empty array")
    bounds = [int(o) for o in offsets]
    for index in range(len(bounds)):
        previous = bounds[index - 1] if index else 0
        if bounds[index] < previous or bounds[index] > len(flat):
            raise ValueError(
                f"offsets[{index}] = {bounds[index]} is out of order or outside 0..{len(flat)}"
            )
    return np.array(
        [
            any(_reference_hit(table, int(code)) for code in flat[low:high])
            for low, high in zip(bounds, bounds[1:], strict=False)
        ],
        dtype=bool,
    )


# --- implementation choice ------------------------------------------------------------------

_native: ModuleType | None = load_kernel("geomatch")

HAS_NATIVE: Final[bool] = _native is not None

_encode_impl: Callable[[object], int]
_encode_many_impl: Callable[[Any], Int32Array]
_encode_lists_impl: Callable[[Any], tuple[Int32Array, Int64Array]]
_build_table_impl: Callable[..., UInt8Array]
_match_one_impl: Callable[[UInt8Array, Any], bool]
_match_lists_impl: Callable[[UInt8Array, Any], BoolArray]
_match_encoded_impl: Callable[[UInt8Array, Int32Array, Int64Array], BoolArray]
if _native is not None:
    _encode_impl = _native.encode
    _encode_many_impl = _native.encode_many
    _encode_lists_impl = _native.encode_lists
    _build_table_impl = _native.build_table
    _match_one_impl = _native.match_one
    _match_lists_impl = _native.match_lists
    _match_encoded_impl = _native.match_encoded
else:
    _encode_impl = reference_encode
    _encode_many_impl = reference_encode_many
    _encode_lists_impl = reference_encode_lists
    _build_table_impl = reference_build_table
    _match_one_impl = reference_match_one
    _match_lists_impl = reference_match_lists
    _match_encoded_impl = reference_match_encoded


# --- validation -----------------------------------------------------------------------------


def _invalid_code(code: object) -> ValueError:
    """Return the error for a code that is neither SAME nor UGC."""
    return ValueError(
        f"invalid zone code {code!r}: expected SAME PSSCCC (six digits) or UGC SSZNNN / "
        "SSCNNN (two letters, Z or C, three digits)"
    )


def _code_items(codes: Iterable[str]) -> list[Any]:
    """Return the codes as a list, refusing a bare str (which would iterate by character)."""
    if isinstance(codes, str | bytes):
        raise ValueError(f"codes must be an iterable of code strings, not a single {codes!r}")
    return list(codes)


def _as_ids(flat_ids: npt.ArrayLike) -> Int32Array:
    """Return stored ids as contiguous int32; ids outside the id space become -1 (ignored)."""
    array = np.asarray(flat_ids)
    if array.ndim != 1:
        raise ValueError(f"flat_ids must be a 1-D array, got {array.ndim} dimensions")
    if array.size == 0:
        return np.empty(0, dtype=np.int32)
    if array.dtype == np.int32:
        return np.ascontiguousarray(array)
    if array.dtype.kind not in "iu":
        raise ValueError(f"flat_ids must be an integer array, got dtype {array.dtype}")
    inside = (array >= 0) & (array < ID_SPACE)
    return np.where(inside, array, INVALID_ID).astype(np.int32)


def _as_offsets(offsets: npt.ArrayLike) -> Int64Array:
    """Return CSR offsets as contiguous int64 after checking shape and dtype."""
    array = np.asarray(offsets)
    if array.ndim != 1 or array.size == 0:
        raise ValueError("offsets must be a 1-D array of n + 1 entries")
    if array.dtype.kind not in "iu":
        raise ValueError(f"offsets must be an integer array, got dtype {array.dtype}")
    return np.ascontiguousarray(array, dtype=np.int64)


# --- public API -----------------------------------------------------------------------------


def encode_code(code: str) -> int:
    """Return the id of a SAME or UGC code, or raise ValueError naming an invalid one.

    Surrounding ASCII whitespace is ignored and letters may be in either case.
    """
    code_id = _encode_impl(code)
    if code_id == INVALID_ID:
        raise _invalid_code(code)
    return code_id


def code_id_or_invalid(code: object) -> int:
    """Return the id of a code, or ``INVALID_ID`` (-1) when it is not a valid code."""
    return int(_encode_impl(code))


def encode_codes(codes: Iterable[str], *, skip_invalid: bool = False) -> Int32Array:
    """Return the ids of codes as an int32 array, in order.

    An invalid code raises ValueError naming it, or is left out with ``skip_invalid=True``.
    """
    items = _code_items(codes)
    ids = _encode_many_impl(items)
    invalid = np.flatnonzero(ids == INVALID_ID)
    if invalid.size and not skip_invalid:
        raise _invalid_code(items[int(invalid[0])])
    return ids[ids != INVALID_ID] if invalid.size else ids


def encode_geocode_lists(
    alerts: Iterable[Iterable[str]],
) -> tuple[Int32Array, Int64Array]:
    """Return the stored form of many alerts' geocodes: (flat int32 ids, int64 offsets).

    Alert ``i`` owns ``flat[offsets[i]:offsets[i + 1]]``; ``offsets`` has n + 1 entries.
    Invalid codes are left out, as matching would ignore them.
    """
    return _encode_lists_impl(alerts)


def decode_id(code_id: int) -> str:
    """Return the normalised code (upper case, six characters) of an id."""
    code_id = int(code_id)
    if not 0 <= code_id < ID_SPACE:
        raise ValueError(f"id {code_id} is outside the id space 0..{ID_SPACE - 1}")
    if code_id < SAME_SPACE:
        return f"{code_id:06d}"
    block, number = divmod(code_id - UGC_BASE, 1000)
    pair, kind = divmod(block, 2)
    first, second = divmod(pair, 26)
    return f"{chr(65 + first)}{chr(65 + second)}{_UGC_KINDS[kind]}{number:03d}"


class GeocodeMatcher:
    """Match alerts' geocodes against configured SAME and UGC codes (immutable, thread-safe).

    An alert matches when one of its codes equals a configured code or a SAME wildcard
    relates them: 000000 (the nation) matches everything; a whole state 0SS000 matches every
    code of state SS, UGC zones of that state included; a whole county 0SSCCC matches its parts
    PSSCCC; a UGC county SSCNNN is the SAME county 0FFNNN (FF the FIPS number of SS) and so
    matches its parts too. The rule is symmetric between alert and configured codes
    (docs/matching.md).
    """

    __slots__ = ("_ids", "_table")

    def __init__(self, codes: Iterable[str]) -> None:
        """Build the matcher; raise ValueError naming the first invalid configured code."""
        ids = np.unique(encode_codes(codes))
        ids.flags.writeable = False
        self._ids: Int32Array = ids
        self._table: UInt8Array = _build_table_impl(ids, PAIR_STATE, STATE_PAIR)
        self._table.flags.writeable = False

    @property
    def ids(self) -> Int32Array:
        """Return the configured ids, sorted and without duplicates (read-only)."""
        return self._ids

    @property
    def codes(self) -> tuple[str, ...]:
        """Return the configured codes, normalised, in id order (SAME first, then UGC)."""
        return tuple(decode_id(code_id) for code_id in self._ids)

    def __len__(self) -> int:
        return int(self._ids.size)

    def __repr__(self) -> str:
        return f"GeocodeMatcher({len(self)} codes)"

    def matches(self, geocodes: Iterable[str]) -> bool:
        """Return whether one alert's geocodes match; invalid codes are ignored."""
        return bool(_match_one_impl(self._table, geocodes))

    def match_many(self, alerts: Iterable[Iterable[str]]) -> BoolArray:
        """Return a bool array, one entry per alert's list of geocodes.

        Invalid codes (malformed strings, non-str items) never raise: they match nothing. A
        bare str in place of an alert's list is a TypeError.
        """
        return _match_lists_impl(self._table, alerts)

    def match_encoded(self, flat_ids: npt.ArrayLike, offsets: npt.ArrayLike) -> BoolArray:
        """Return a bool array for alerts stored as ids (see ``encode_geocode_lists``).

        ``offsets`` holds n + 1 non-decreasing entries within 0..len(flat_ids); anything else
        is a ValueError. Ids outside the id space (such as -1) are ignored.
        """
        return _match_encoded_impl(self._table, _as_ids(flat_ids), _as_offsets(offsets))
