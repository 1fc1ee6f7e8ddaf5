"""The compiled CAP reader reads what the full path reads, and declines everything else.

``alertstation._native.capread.read`` is held to its twin, ``cap.read_fields`` over the hardened
lxml tree, on generated messages (every CAP field with repeats, blanks, comments, processing
instructions, CDATA, nested markup and foreign elements) and on mutated samples. Whatever it
declines, the full path still reads or refuses exactly as it did without it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lxml import etree

from alertstation.alerts import cap, capfast
from alertstation.alerts.cap import parse_cap_feed, parse_cap_xml, read_fields
from alertstation.alerts.dispatch import parse_any
from alertstation.alerts.parsing import MAX_MESSAGE_BYTES, AlertParseError, parse_xml_document
from alertstation.settings import native_required
from tests.alerts.test_cap_fast_read import EXAMPLES, PKI, VALUES, message, messages
from tests.alerts.test_parse_fuzz import FUZZ, mutated

capread = pytest.importorskip("alertstation._native.capread")

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "alerts"
CAP12 = "urn:oasis:names:tc:emergency:cap:1.2"


def full_path(parse: Any, data: bytes) -> Any:
    """What ``parse`` makes of ``data`` with the compiled reader switched off."""
    saved = capfast._native
    capfast._native = None
    try:
        return outcome(parse, data)
    finally:
        capfast._native = saved


def outcome(parse: Any, data: bytes) -> Any:
    try:
        return parse(data)
    except AlertParseError as ex:
        return ("AlertParseError", str(ex))


def twin(data: bytes) -> dict[str, Any]:
    return read_fields(parse_xml_document(data))


def test_the_reader_is_usable_where_the_kernels_are_required() -> None:
    assert capread.UNUSABLE == ""
    if native_required():
        assert capfast.available()


@EXAMPLES
@given(data=messages())
def test_generated_messages_read_as_the_tree_reads_them(data: bytes) -> None:
    fields = capread.read(data)
    if etree.QName(etree.fromstring(data)).namespace in cap.CAP_NAMESPACES:
        assert fields == twin(data)  # read, never declined: these are plain CAP messages
    else:
        assert fields is None  # no namespace: not a CAP alert to the feed path either


@EXAMPLES
@given(data=messages())
def test_generated_messages_parse_the_same_with_and_without_the_reader(data: bytes) -> None:
    for parse in (parse_cap_feed, parse_cap_xml, parse_any):
        assert outcome(parse, data) == full_path(parse, data)
    if not isinstance(full_path(parse_cap_xml, data), tuple):
        assert cap._fast_alert(data, "cap-xml") == parse_cap_xml(data)  # and read it: not declined


def test_every_kind_of_field_text_reads_as_the_tree_reads_it() -> None:
    data = message(
        {"vtec": "<![CDATA[/O.NEW.KOUN.SV.W.0001.250102T0304Z-250102T0500Z/]]>",
         "ending": " 2025-06-01T03:04:00-05:00\n"},
        identifier="\n  X-<!-- c -->1  ",
        sender="a@b<?pi x?>.example",
        status=" Actual ",
        msgType="<![CDATA[Update]]>",
        note="a <b>bold</b> note &amp; more",
        incidents="one<x:i xmlns:x='urn:other'> two</x:i> three",
    )  # fmt: skip
    alert = cap._fast_alert(data, "cap-xml")
    assert alert is not None and alert == full_path(parse_cap_xml, data)
    assert (alert.identifier, alert.sender, alert.msg_type) == ("X-1", "a@b.example", "Update")
    assert alert.note == "a bold note & more" and alert.incidents == ("one", "two", "three")
    assert alert.infos[0].vtec[0].etn == 1 and alert.infos[0].ends is not None


NAMES = sorted(
    {*VALUES, "alert", "info", "area", "eventCode", "parameter", "geocode", "Signatur", "x"}
)


@st.composite
def trees(draw: st.DrawFn, depth: int = 0) -> str:
    """Any CAP element name at any depth, in the CAP namespace or another, with mixed content."""
    parts = []
    for _ in range(draw(st.integers(0, 5 if depth < 4 else 0))):
        kind = draw(st.sampled_from(["element", "element", "text", "comment", "pi", "cdata"]))
        if kind == "element":
            name = draw(st.sampled_from(NAMES))
            prefix = draw(st.sampled_from(["", "", "", "o:"]))
            declare = ' xmlns:o="urn:other"' if prefix else ""
            inner = draw(trees(depth + 1))
            parts.append(f"<{prefix}{name}{declare}>{inner}</{prefix}{name}>")
        elif kind == "text":
            parts.append(draw(st.sampled_from([" ", "\n\t", "a", " b c ", "&amp;", "&#233;", "é"])))
        else:
            parts.append(
                {"comment": "<!-- c -->", "pi": "<?p q?>", "cdata": "<![CDATA[ <d> ]]>"}[kind]
            )
    return "".join(parts)


@EXAMPLES
@given(body=trees(), namespace=st.sampled_from(sorted(cap.CAP_NAMESPACES)))
def test_any_arrangement_of_cap_names_reads_as_the_tree_reads_it(body: str, namespace: str) -> None:
    data = f'<alert xmlns="{namespace}">{body}</alert>'.encode()
    assert capread.read(data) == twin(data)


@FUZZ
@given(data=mutated())
def test_mutated_samples_read_as_the_tree_reads_them_or_are_declined(data: bytes) -> None:
    found = capfast.fast_fields(data)  # the byte checks first, as the parsers call it
    if found is not None:
        assert found[0] == twin(data)
    for parse in (parse_cap_feed, parse_any):
        assert outcome(parse, data) == full_path(parse, data)


def test_fixtures_read_as_the_tree_reads_them() -> None:
    for path in sorted(FIXTURES.glob("cap*.xml")):
        data = path.read_bytes()
        assert capread.read(data) == twin(data), path.name
        assert capfast.fast_fields(data) is not None, path.name
        assert parse_cap_feed(data) == full_path(parse_cap_feed, data), path.name


def deep(levels: int) -> bytes:
    inner = "<x>" * levels + "deep" + "</x>" * levels
    return (
        message()
        .replace(b"<note>", b"")
        .replace(b"<identifier>", f"<note>{inner}</note><identifier>".encode(), 1)
    )


SAMPLE = (FIXTURES / "cap12_svr_new.xml").read_bytes()
DECLINED = {
    "doctype": SAMPLE.replace(b"<alert", b"<!DOCTYPE alert><alert", 1),
    "signature": None,  # filled below: a signed message is checked on the tree
    "utf-16": SAMPLE.decode().replace('encoding="UTF-8"', 'encoding="UTF-16"').encode("utf-16"),
    "latin-1 text": SAMPLE.decode()
    .replace("UTF-8", "ISO-8859-1", 1)
    .replace("Severe Thunderstorm", "Sévère Thunderstorm", 1)
    .encode("latin-1"),
    "two documents": SAMPLE + SAMPLE,
    "malformed": SAMPLE.replace(b"</identifier>", b"</identifer>", 1),
    "not an alert": b'<alerts xmlns="urn:other"><x/></alerts>',
    "no namespace": SAMPLE.replace(f'xmlns="{CAP12}"'.encode(), b"", 1),
    "unbound prefix": SAMPLE.replace(b"<identifier>", b"<p:x/><identifier>", 1),
    "too deep": deep(70),
    "long name": SAMPLE.replace(b"<identifier>", b"<" + b"n" * 2000 + b"/><identifier>", 1),
    "missing identifier": message(identifier=None),
    "bad status": message(status="actual"),
}


@pytest.mark.parametrize("name", sorted(DECLINED))
def test_what_the_reader_declines_parses_as_before(name: str) -> None:
    data = DECLINED[name]
    if data is None:
        from tests.fixtures.alerts.signing import signed_sample

        data = signed_sample(PKI)
    expected = full_path(lambda d: parse_any(d, trust=PKI.anchors), data)
    assert outcome(lambda d: parse_any(d, trust=PKI.anchors), data) == expected
    if name in ("missing identifier", "bad status"):
        assert capread.read(data) is not None  # read, but its fields do not check
        assert cap._fast_alert(data, "cap-xml") is None
    else:
        assert capfast.fast_fields(data) is None


BODY = SAMPLE[SAMPLE.index(b"<alert") :]


def before_identifier(text: bytes) -> bytes:
    return BODY.replace(b"<identifier>", text + b"<identifier>", 1)


EDGES = {
    # XML declarations: expat takes any version number, libxml2 does not.
    "version 1.1": b'<?xml version="1.1" encoding="UTF-8"?>\n' + BODY,
    "version 2.0": b'<?xml version="2.0" encoding="UTF-8"?>\n' + BODY,
    "version 1.x": b'<?xml version="1.x"?>\n' + BODY,
    "single quotes": b"<?xml version='1.0' encoding='UTF-8'?>\n" + BODY,
    "standalone maybe": b'<?xml version="1.0" standalone="maybe"?>\n' + BODY,
    "encoding utf8": b'<?xml version="1.0" encoding="utf8"?>\n' + BODY,
    "encoding latin-1, ASCII text": b'<?xml version="1.0" encoding="ISO-8859-1"?>\n' + BODY,
    "byte order mark": b"\xef\xbb\xbf" + BODY,
    "space before the declaration": b" " + SAMPLE,
    # Namespaces: each refused by one parser is refused by the other.
    "empty prefixed namespace": before_identifier(b'<p:x xmlns:p=""/>'),
    "xml prefix rebound": before_identifier(b'<x xmlns:xml="urn:x"/>'),
    "xmlns prefix declared": before_identifier(b'<x xmlns:xmlns="urn:x"/>'),
    "relative namespace": before_identifier(b'<x xmlns="rel/ative"/>'),
    "attribute twice by namespace": before_identifier(
        b'<x xmlns:a="urn:a" xmlns:b="urn:a" a:q="1" b:q="2"/>'
    ),
    "two colons": before_identifier(b'<a:b:c xmlns:a="urn:a"/>'),
    # Characters and markup.
    "reference to U+0001": BODY.replace(b"<identifier>", b"<identifier>&#1;", 1),
    "reference to a surrogate": BODY.replace(b"<identifier>", b"<identifier>&#xD800;", 1),
    "U+FFFE": BODY.replace(b"<identifier>", b"<identifier>\xef\xbf\xbe", 1),
    "C1 control": BODY.replace(b"<identifier>", b"<identifier>\xc2\x85", 1),
    "no-break space": BODY.replace(b"<identifier>", b"<identifier>\xc2\xa0", 1),
    "CR LF": BODY.replace(b"\n", b"\r\n"),
    "CR": BODY.replace(b"\n", b"\r"),
    "undefined entity": BODY.replace(b"<identifier>", b"<identifier>&foo;", 1),
    "]]> in text": BODY.replace(b"<identifier>", b"<identifier>]]>", 1),
    "PI named XmL": before_identifier(b"<?XmL a?>"),
    "PI named xml-stylesheet": before_identifier(b"<?xml-stylesheet a?>"),
    "-- in a comment": before_identifier(b"<!-- a -- b -->"),
    "comment after the root": BODY + b"<!-- end -->",
    "3,000 attributes": before_identifier(
        b"<x " + b" ".join(b'a%d="1"' % i for i in range(3000)) + b"/>"
    ),
    "1.5 MB of text": before_identifier(b"<note>" + b"x" * 1_500_000 + b"</note>"),
}


@pytest.mark.parametrize("name", sorted(EDGES))
def test_edge_cases_parse_as_without_the_reader(name: str) -> None:
    data = EDGES[name]
    assert outcome(parse_any, data) == full_path(parse_any, data)


def test_nesting_within_the_limit_is_read() -> None:
    data = deep(40)
    fields = capread.read(data)
    assert fields is not None and fields == twin(data)
    assert fields["note"] == "deep"


def test_a_doctype_is_declined_even_when_the_byte_check_is_bypassed() -> None:
    # capfast refuses the bytes "<!DOCTYPE" before reading; the reader also declines on its own.
    assert capread.read(DECLINED["doctype"]) is None
    with pytest.raises(AlertParseError, match="DOCTYPE"):
        parse_cap_feed(DECLINED["doctype"])


def test_a_message_over_the_message_limit_takes_the_full_path() -> None:
    padding = b"<!--" + b"x" * (MAX_MESSAGE_BYTES + 1) + b"-->"
    data = SAMPLE.replace(b"<identifier>", padding + b"<identifier>", 1)
    assert capread.read(data) is not None
    assert capfast.fast_fields(data) is None
    assert parse_cap_feed(data) == full_path(parse_cap_feed, data)


def test_parsing_without_the_reader_still_works(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(capfast, "_native", None)
    assert not capfast.available()
    [alert] = parse_cap_feed(SAMPLE)
    assert alert.identifier and alert.raw == SAMPLE.decode("utf-8-sig")
