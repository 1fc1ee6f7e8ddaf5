"""Fuzz CAP XML field by field: whatever a field holds, the answer is an Alert or AlertParseError.

``tests/alerts/test_parse_fuzz.py`` throws random and bit-flipped bytes at the parsers; here the
documents stay well-formed XML and the values inside change: every leaf element of the real
samples gets arbitrary text, elements are dropped or repeated, and attributes appear where none
belong. That reaches the field readers (timestamps, enumerations, codes, polygons, VTEC), which
random bytes almost never get past the XML screen to see.
"""

from __future__ import annotations

import copy
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from lxml import etree

from alertstation.alerts.cap import parse_cap_feed, parse_cap_xml
from alertstation.alerts.dispatch import parse_any
from alertstation.alerts.model import Alert, ParseProblem
from alertstation.alerts.parsing import AlertParseError
from tests.fuzz.fuzzing import fuzz

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "alerts"
SAMPLES = {
    name: (FIXTURES / name).read_bytes()
    for name in ("cap11_svr_new.xml", "cap12_svr_new.xml", "cap12_svr_can.xml", "ipaws_feed.xml")
}
# Text lxml can hold: no surrogates, no control characters other than tab and newline.
XML_TEXT = st.text(
    alphabet=st.characters(exclude_categories=("Cs", "Cc")) | st.sampled_from("\t\n"),
    max_size=60,
)
FIELD_VALUES = XML_TEXT | st.sampled_from(
    [
        "",
        " ",
        "2025-06-01T03:04:00-05:00",
        "2025-02-30T03:04:00-05:00",
        "9999-12-31T23:59:59+14:00",
        "0001-01-01T00:00:00-23:59",
        "2025-06-01T03:04:00",
        "Actual",
        "Alert",
        "Update",
        "Cancel",
        "Public",
        "Restricted",
        "Private",
        "Met",
        "Extreme",
        "/O.NEW.KFWD.FF.W.0021.250601T0304Z-250601T0900Z/",
        "/O.NEW.KFWD.FF.W.0021.000000T0000Z-000000T0000Z/",
        "/O.CAN.KFWD.FF.W.0021.991231T2359Z-000101T0000Z/",
        "048439",
        "000000",
        "32.61,-97.52 32.61,-97.05",
        "91,181 -91,-181 32,-97",
        "nan,nan inf,-inf",
        "w-nws.webmaster@noaa.gov,x,2025-06-01T03:04:00-05:00",
        "a,b,c d,e,f",
        ",,",
    ]
)


def _leaves(root: etree._Element) -> list[etree._Element]:
    return [el for el in root.iter() if isinstance(el.tag, str) and len(el) == 0]


def _containers(root: etree._Element) -> list[etree._Element]:
    return [el for el in root.iter() if isinstance(el.tag, str) and len(el) and el is not root]


@st.composite
def rewritten(draw: st.DrawFn) -> bytes:
    """A real sample, still well-formed, with field values, elements and attributes changed."""
    root = etree.fromstring(SAMPLES[draw(st.sampled_from(sorted(SAMPLES)))])
    for _ in range(draw(st.integers(1, 6))):
        how = draw(st.sampled_from(["text", "text", "text", "drop", "repeat", "attribute"]))
        if how == "text":
            leaves = _leaves(root)
            if leaves:
                draw(st.sampled_from(leaves)).text = draw(FIELD_VALUES)
        elif how == "attribute":
            leaves = _leaves(root)
            if leaves:
                draw(st.sampled_from(leaves)).set("junk", draw(XML_TEXT))
        else:
            candidates = _leaves(root) + _containers(root)
            if not candidates:
                continue
            element = draw(st.sampled_from(candidates))
            parent = element.getparent()
            if parent is None:
                continue
            if how == "drop":
                parent.remove(element)
            else:
                parent.insert(parent.index(element), copy.deepcopy(element))
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


def _check(entries: list[Alert | ParseProblem]) -> None:
    for entry in entries:
        if isinstance(entry, Alert):
            assert entry.identifier and entry.sender and entry.sent.tzinfo is not None
        else:
            assert isinstance(entry, ParseProblem) and entry.reason


@fuzz(80)
@given(document=rewritten())
def test_any_field_value_gives_an_alert_or_the_parse_error(document: bytes) -> None:
    try:
        alert = parse_cap_xml(document)
    except AlertParseError as ex:
        assert str(ex)
    else:
        _check([alert])
    try:
        _check(parse_any(document, "application/cap+xml"))
    except AlertParseError as ex:
        assert str(ex)


@fuzz(25)
@given(documents=st.lists(rewritten(), min_size=2, max_size=4))
def test_back_to_back_documents_each_give_an_entry_or_the_feed_fails_whole(
    documents: list[bytes],
) -> None:
    body = b"\n".join(documents)
    try:
        entries = parse_cap_feed(body)
    except AlertParseError as ex:
        assert str(ex)
        return
    _check(entries)
