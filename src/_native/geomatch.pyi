"""Dense integer ids for SAME and UGC geocodes, and alert matching against a bit table.

Call these through ``alertstation.alerts.matching``, which validates input first. SAME
``PSSCCC`` has id ``int(PSSCCC)``; UGC ``SSTNNN`` has id
``UGC_BASE + ((L1*26 + L2)*2 + T)*1000 + NNN`` (A=0..Z=25, T: Z=0, C=1). Codes are read after
removing surrounding ASCII whitespace, letters in either case; anything else is -1.
"""

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

SAME_SPACE: int  # 1,000,000 SAME ids: 0 .. 999999
UGC_BASE: int  # 1,000,000: first UGC id
UGC_PAIRS: int  # 676 two-letter prefixes
ID_SPACE: int  # 2,352,000 ids in all
TABLE_BYTES: int  # 294,000: one bit per id
INVALID_ID: int  # -1

def encode(code: object) -> int:
    """Return the id of one code (a str), or -1 when it is not a valid SAME or UGC code."""

def encode_many(codes: Iterable[object]) -> npt.NDArray[np.int32]:
    """Return an int32 array with the id of each code, -1 for invalid ones (and non-str)."""

def encode_lists(
    alerts: Iterable[Iterable[object]],
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int64]]:
    """Return (flat int32 ids, int64 offsets of length n + 1); invalid codes are left out.

    A bare str in place of an alert's code list is a TypeError.
    """

def build_table(
    configured: npt.NDArray[np.int32],
    pair_state: npt.NDArray[np.int16],
    state_pair: npt.NDArray[np.int16],
) -> npt.NDArray[np.uint8]:
    """Return the TABLE_BYTES-byte bit table of the alert ids that match a configured id.

    Bit ``id & 7`` of byte ``id >> 3`` is set when the alert id relates to at least one
    configured id (equal, or through the nation, whole-state or whole-county rules).
    ``pair_state`` (676 entries) maps a UGC letter pair to its state FIPS number and
    ``state_pair`` (100 entries) the reverse, -1 for none. ValueError for an id outside the id
    space or a table of the wrong size or range. Releases the GIL while it fills the table.
    """

def match_one(table: npt.NDArray[np.uint8], codes: Iterable[object]) -> bool:
    """Return whether any code of one alert is set in the table; invalid codes are ignored."""

def match_lists(
    table: npt.NDArray[np.uint8], alerts: Iterable[Iterable[object]]
) -> npt.NDArray[np.bool_]:
    """Return whether each alert's codes hold one set in the table; invalid codes are ignored.

    Reads Python objects, so it keeps the GIL. A bare str as an alert's list is a TypeError.
    """

def match_encoded(
    table: npt.NDArray[np.uint8], flat: npt.NDArray[np.int32], offsets: npt.NDArray[np.int64]
) -> npt.NDArray[np.bool_]:
    """Return whether each alert's ids ``flat[offsets[i]:offsets[i + 1]]`` hold one set.

    ``offsets`` holds n + 1 non-decreasing entries within 0..len(flat) (else ValueError); ids
    outside the id space are ignored. Releases the GIL.
    """
