"""Shared ground of the fuzz tests: one bounded budget and byte mutations of valid samples.

Every fuzz test runs derandomized (the same examples on every run, so a failure found here is
found again) with no example database, a bounded number of examples and no deadline: the whole
``tests/fuzz`` set stays well under a minute on a loaded 2-core machine.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

SUPPRESSED = [
    HealthCheck.too_slow,
    HealthCheck.data_too_large,
    HealthCheck.filter_too_much,
    HealthCheck.function_scoped_fixture,
]


def fuzz(examples: int) -> settings:
    """Return the fuzz settings with ``examples`` examples per test."""
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=SUPPRESSED,
    )


#: Byte strings that break parsers: markup, quotes, NUL, lone UTF-8 lead bytes, BOMs.
NASTY = [
    b"<",
    b">",
    b"&",
    b"&x;",
    b"]]>",
    b"<!DOCTYPE a>",
    b"\x00",
    b"\xff\xfe",
    b"\xef\xbb\xbf",
    b"\xc3",
    b"\xed\xa0\x80",
    b'"',
    b"\\",
    b"-",
    b"+",
    b"/",
    b"\r\n",
    b"\xff\xff\xff\xff",
    b"\x00\x00\x00\x80",
]


@st.composite
def mutated(draw: st.DrawFn, sample: bytes, protect: int = 0, most: int = 4) -> bytes:
    """``sample`` with 1..``most`` bytes flipped, deleted, inserted, spliced or cut off.

    The first ``protect`` bytes are left alone (a magic number or header worth keeping).
    """
    data = bytearray(sample)
    for _ in range(draw(st.integers(1, most))):
        if len(data) <= protect:
            break
        at = draw(st.integers(protect, len(data) - 1))
        how = draw(st.sampled_from(["flip", "delete", "insert", "truncate", "splice", "word"]))
        if how == "flip":
            data[at] = draw(st.integers(0, 255))
        elif how == "delete":
            del data[at : at + draw(st.integers(1, 16))]
        elif how == "insert":
            data[at:at] = draw(st.sampled_from(NASTY))
        elif how == "truncate":
            del data[at:]
        elif how == "splice":
            data[at:at] = draw(st.binary(max_size=24))
        else:
            # Overwrite four bytes with an extreme little-endian word (a size or a count).
            word = draw(st.sampled_from([0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 16, 40]))
            data[at : at + 4] = word.to_bytes(4, "little")
    return bytes(data)
