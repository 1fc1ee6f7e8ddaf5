"""Fuzz ``SameHeader.parse``: any text gives a header that encodes back to it, or a ValueError.

``tests/eas/test_same.py`` mutates one field of a valid header at a time and checks the error
names it. Here the text is arbitrary within the header's alphabet (so the splitting on ``-`` and
``+`` meets every count and order), valid headers get bytes inserted, deleted and swapped, and
non-ASCII digits and look-alike characters appear where digits and letters belong.
"""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from alertstation.same import SameHeader
from tests.fuzz.fuzzing import fuzz

VALID = [
    "ZCZC-WXR-TOR-039173-039051+0030-1241720-KCLE/NWS-",
    "ZCZC-EAS-RWT-000000+0015-0011200-WTSP/TV-",
    "ZCZC-CIV-EVI-048439-048113-048121+0600-3662359-ABCDEFGH-",
    "ZCZC-PEP-EAN-000000+9930-0010000-WHITEHSE-",
]
HEADER_ALPHABET = "ZCN-+/ 0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
ODD = [
    "\u0660",  # Arabic-Indic zero: str.isdigit() says yes
    "\uff11",  # fullwidth one
    "\u00b2",  # superscript two: isdigit() but int() refuses
    "\u0131",  # dotless i
    "\u212a",  # Kelvin sign, upper-cases to K
    "\x00",
    "\n",
    "-",
    "+",
    "",
]


def _check(text: str) -> None:
    try:
        header = SameHeader.parse(text)
    except ValueError as ex:
        assert str(ex)
        return
    assert header.encode() == text
    assert SameHeader.parse(header.encode()) == header


@st.composite
def edited(draw: st.DrawFn) -> str:
    """A valid header with one to three characters replaced, inserted or removed."""
    chars = list(draw(st.sampled_from(VALID)))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(chars) - 1))
        new = draw(st.sampled_from(ODD) | st.sampled_from(HEADER_ALPHABET))
        how = draw(st.sampled_from(["replace", "insert", "delete"]))
        if how == "replace":
            chars[at] = new
        elif how == "insert":
            chars.insert(at, new)
        else:
            del chars[at]
    return "".join(chars)


@fuzz(100)
@given(text=edited())
@example(text="ZCZC-WXR-TOR-039173+00\u00b230-1241720-KCLE/NWS-")
@example(text="ZCZC-WXR-TOR-0391\u00b23+0030-1241720-KCLE/NWS-")
@example(text="ZCZC-WXR-TOR-039173+0030-124\u00b2720-KCLE/NWS-")
def test_edited_headers_parse_back_or_fail_with_value_error(text: str) -> None:
    _check(text)


@fuzz(100)
@given(
    text=st.text(alphabet=HEADER_ALPHABET, max_size=80).map(lambda t: "ZCZC-" + t)
    | st.text(max_size=60)
)
def test_header_alphabet_soup_parses_back_or_fails_with_value_error(text: str) -> None:
    _check(text)
