"""The one-pass CAP reader returns and rejects exactly what the per-field reader of 2.8.0 did.

``tests/alerts/cap_reference.py`` is that reader, unchanged. Generated messages mix every field
CAP defines with repeats, blanks, bad values, comments, processing instructions, CDATA, nested
markup and elements of other namespaces; each reads to the same ``Alert`` or fails with the same
error message under both readers.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from alertstation.alerts.cap import alert_from_element, is_cap_alert, parse_cap_feed, parse_cap_xml
from alertstation.alerts.parsing import (
    AlertParseError,
    decode_text,
    parse_timestamp,
    parse_xml_document,
    strict_timestamp,
)
from alertstation.alerts.signature import check_signature
from tests.alerts import cap_reference
from tests.fixtures.alerts.signing import make_pki, signed_sample

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "alerts"
CAP12 = "urn:oasis:names:tc:emergency:cap:1.2"
CAP11 = "urn:oasis:names:tc:emergency:cap:1.1"
PKI = make_pki()

EXAMPLES = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

TIMES = [
    "2025-01-02T03:04:05-00:00", "2025-06-01T03:04:00-05:00", "2025-01-02T03:04:05Z",
    "2025-01-02T03:04-00:00", "2025-01-02T03:04:05.123+01:30", "2025-13-02T03:04:05-00:00",
    "2025-01-02 03:04:05-00:00", "yesterday", "",
]  # fmt: skip
VTEC = [
    "/O.NEW.KOUN.SV.W.0001.250102T0304Z-250102T0500Z/",
    "/O.CON.KOUN.SV.W.0001.000000T0000Z-250102T0500Z/",
    "/O.NEW.KOUN.SV.W.0001.250102T0304Z-250102T0500Z/ "
    "/O.EXP.KOUN.TO.A.0002.000000T0000Z-250102T0400Z/",
    "/O.BAD.KOUN.SV.W.0001.250102T0304Z-250102T0500Z/",
    "/O.NEW.KOUN.SV.W.0001.251302T0304Z-250102T0500Z/",
    "/O.NEW.KOUN.SV.W.0001.250102T0600Z-250102T0500Z/",
    "garbage",
    "",
]
VALUES: dict[str, list[str]] = {
    "identifier": ["X-1", "", "  spaced id  ", "ÿ-ünïcode"],
    "sender": ["a@b.example", "w-nws.webmaster@noaa.gov", ""],
    "sent": TIMES,
    "status": ["Actual", "Test", "Exercise", "actual", ""],
    "msgType": ["Alert", "Update", "Cancel", "Ack", "Bogus", ""],
    "scope": ["Public", "Private", "Everyone", ""],
    "references": [
        "a@b.example,X-0,2025-01-01T00:00:00-00:00",
        "a@b.example,X-0,2025-01-01T00:00:00-00:00 c@d,Y,2025-01-01T01:00:00Z",
        "a@b.example,X-0",
        ",X-0,2025-01-01T00:00:00-00:00",
        "a,b,not-a-time",
        "",
    ],
    "note": ["a note", "", "   "],
    "incidents": ["one two  three", ""],
    "language": ["en-US", "es-US", "EN", "fr-CA", ""],
    "category": ["Met", "Safety", ""],
    "event": ["Severe Thunderstorm Warning", "Flood Watch", ""],
    "responseType": ["Shelter", "Monitor", ""],
    "urgency": ["Immediate", "Expected", ""],
    "severity": ["Severe", "Minor", ""],
    "certainty": ["Observed", "Likely", ""],
    "effective": TIMES,
    "onset": TIMES,
    "expires": TIMES,
    "senderName": ["NWS Norman OK", ""],
    "headline": ["Headline", ""],
    "description": ["Hail and damaging wind.\n\n  More.", ""],
    "instruction": ["Take shelter.", ""],
    "web": ["https://example.org/x", ""],
    "areaDesc": ["Cleveland, OK", "", "McClain"],
    "polygon": ["35.1,-97.5 35.2,-97.4 35.1,-97.3 35.1,-97.5", ""],
    "circle": ["35.1,-97.5 10", ""],
    "valueName": ["SAME", "UGC", "FIPS6", "VTEC", "eventEndingTime", "EAS-ORG", "", "other"],
    "value": ["040027", "OKC027 OKC087", "WXR", "", *VTEC, *TIMES],
}
ALERT_FIELDS = ["identifier", "sender", "sent", "status", "msgType", "scope", "references",
                "note", "incidents"]  # fmt: skip
INFO_FIELDS = ["language", "category", "event", "responseType", "urgency", "severity",
               "certainty", "effective", "onset", "expires", "senderName", "headline",
               "description", "instruction", "web"]  # fmt: skip
AREA_FIELDS = ["areaDesc", "polygon", "circle"]


@st.composite
def text_of(draw: st.DrawFn, name: str) -> str:
    """A field's content: a value, perhaps padded, split by a comment or PI, in CDATA or markup."""
    # Mostly the first (valid) values, so that messages get past the early checks often.
    valid = st.sampled_from(VALUES[name][:1])
    value = draw(st.one_of(valid, valid, st.sampled_from(VALUES[name])))
    how = draw(st.sampled_from(["plain", "plain", "padded", "comment", "pi", "cdata", "markup"]))
    half = len(value) // 2
    return {
        "plain": value,
        "padded": f" \n\t{value}\n ",
        "comment": f"{value[:half]}<!-- aside -->{value[half:]}",
        "pi": f"{value[:half]}<?pi x?>{value[half:]}",
        "cdata": f"<![CDATA[{value}]]>",
        "markup": f"{value[:half]}<b>{value[half:]}</b>",
    }[how]


@st.composite
def noise(draw: st.DrawFn) -> str:
    """Something between fields: nothing, whitespace, a comment, a PI or a foreign element."""
    return draw(
        st.sampled_from(
            [
                "",
                "",
                "\n  ",
                "<!-- c -->",
                "<?pi data?>",
                '<x:identifier xmlns:x="urn:other">other</x:identifier>',
                '<x:info xmlns:x="urn:other"><x:event>E</x:event></x:info>',
                "<unknownField>u</unknownField>",
            ]
        )
    )


@st.composite
def leaves(draw: st.DrawFn, names: list[str], prefix: str, most: int = 12) -> list[str]:
    fields = draw(st.lists(st.sampled_from(names), max_size=most))
    return [
        f"<{prefix}{name}>{draw(text_of(name))}</{prefix}{name}>{draw(noise())}" for name in fields
    ]


@st.composite
def pair(draw: st.DrawFn, tag: str, prefix: str) -> str:
    parts = draw(st.lists(st.sampled_from(["valueName", "value"]), max_size=4))
    inner = "".join(f"<{prefix}{n}>{draw(text_of(n))}</{prefix}{n}>{draw(noise())}" for n in parts)
    return f"<{prefix}{tag}>{inner}</{prefix}{tag}>"


@st.composite
def area(draw: st.DrawFn, prefix: str) -> str:
    parts = draw(leaves(AREA_FIELDS, prefix, 4))
    parts += [draw(pair("geocode", prefix)) for _ in range(draw(st.integers(0, 4)))]
    return f"<{prefix}area>{''.join(draw(st.permutations(parts)))}</{prefix}area>"


@st.composite
def info(draw: st.DrawFn, prefix: str) -> str:
    parts = draw(leaves(INFO_FIELDS, prefix, 10))
    for tag, most in (("eventCode", 2), ("parameter", 4)):
        parts += [draw(pair(tag, prefix)) for _ in range(draw(st.integers(0, most)))]
    parts += [draw(area(prefix)) for _ in range(draw(st.integers(0, 2)))]
    return f"<{prefix}info>{''.join(draw(st.permutations(parts)))}</{prefix}info>"


@st.composite
def messages(draw: st.DrawFn) -> bytes:
    """A CAP message (1.2, 1.1, prefixed or without namespace) with generated fields."""
    namespace = draw(st.sampled_from([CAP12, CAP11, ""]))
    prefix = draw(st.sampled_from(["", "cap:"])) if namespace else ""
    declare = f' xmlns{":cap" if prefix else ""}="{namespace}"' if namespace else ""
    # Mostly complete headers, so that generated messages get past the first check often.
    required = [f"<{prefix}{n}>{draw(text_of(n))}</{prefix}{n}>" for n in ALERT_FIELDS[:6]]
    parts = [part for part in required if draw(st.integers(0, 15))]
    parts += draw(leaves(ALERT_FIELDS, prefix, 4))
    parts += [draw(info(prefix)) for _ in range(draw(st.integers(0, 2)))]
    body = "".join(draw(st.permutations(parts)))
    return f"<{prefix}alert{declare}>{body}</{prefix}alert>".encode()


def outcome(read: Any, root: etree._Element) -> Any:
    """What one reader makes of an element: the Alert, or the error's type and message."""
    try:
        return read(root, source="cap-xml", raw="raw")
    except Exception as ex:  # the reference may fail in any way; so must the new reader
        return (type(ex).__name__, str(ex))


def reference_document(raw: bytes) -> Any:
    """parse_cap_xml as 2.8.0 built it: reference reader, decode_text, then replace()."""
    try:
        root = parse_xml_document(raw)
        assert is_cap_alert(root)
        text = decode_text(raw, root.getroottree().docinfo.encoding)
        alert = cap_reference.alert_from_element(root, source="cap-xml", raw=text)
        return replace(alert, signature=check_signature(raw, root, PKI.anchors))
    except AlertParseError as ex:
        return ("AlertParseError", str(ex))


def current_document(raw: bytes) -> Any:
    try:
        return parse_cap_xml(raw, trust=PKI.anchors)
    except AlertParseError as ex:
        return ("AlertParseError", str(ex))


@EXAMPLES
@given(data=messages())
def test_generated_messages_read_as_the_reference_reads_them(data: bytes) -> None:
    root = etree.fromstring(data)
    assert outcome(alert_from_element, root) == outcome(cap_reference.alert_from_element, root)


GOOD_INFO = (
    "<info><language>es-US</language><category>Met</category><event>E</event>"
    "<parameter><valueName>VTEC</valueName><value>{vtec}</value></parameter>"
    "<parameter><valueName>eventEndingTime</valueName><value>{ending}</value></parameter>"
    "<expires>{expires}</expires><area><areaDesc>A</areaDesc><geocode><valueName>SAME"
    "</valueName><value>040027 040087</value></geocode></area></info>"
)
HEADER = {
    "identifier": "X-1", "sender": "a@b.example", "sent": TIMES[0], "status": "Actual",
    "msgType": "Update", "scope": "Public", "references": VALUES["references"][1],
}  # fmt: skip
INFO = {"vtec": VTEC[2], "ending": TIMES[1], "expires": TIMES[4]}


def message(info: dict[str, str] | None = None, **header: str | None) -> bytes:
    fields = {**HEADER, **header}
    body = "".join(f"<{k}>{v}</{k}>" for k, v in fields.items() if v is not None)
    body += GOOD_INFO.format(**{**INFO, **(info or {})}) + "<info><event>2</event></info>"
    return f'<alert xmlns="{CAP12}">{body}</alert>'.encode()


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (message(), None),
        (message(sent=None), "alert has no <sent> time"),
        (message(sent="yesterday"), "alert sent: "),
        (message({"vtec": VTEC[3]}), "info 0 parameter VTEC: "),
        (message({"ending": "soon"}), "info 0 eventEndingTime: "),
        (message({"expires": TIMES[5]}), "info 0 expires: "),
        (message(identifier=""), "alert has no <identifier>"),
        (message(sender=None), "alert has no <sender>"),
        (message(status="actual"), "<status> is 'actual'"),
        (message(msgType=None), "alert has no <msgType>"),
        (message(scope="Everyone"), "<scope> is 'Everyone'"),
        (message(references="a,b"), "references entry 'a,b'"),
        (message(references="a,b,c"), "references entry 'b': "),
    ],
)
def test_each_check_fails_as_the_reference_fails(data: bytes, error: str | None) -> None:
    root = etree.fromstring(data)
    result = outcome(alert_from_element, root)
    assert result == outcome(cap_reference.alert_from_element, root)
    if error is None:
        assert result.infos[0].geocodes("SAME") == ("040027", "040087")
        assert result.event == "2"  # the first English block is the primary one
        assert len(result.references) == 2 and len(result.infos[0].vtec) == 2
    else:
        assert result[0] == "AlertParseError"
        assert result[1].startswith(error)


def test_fixtures_and_a_signed_message_read_as_the_reference_reads_them() -> None:
    samples = {path.name: path.read_bytes() for path in sorted(FIXTURES.glob("cap*.xml"))}
    samples["signed.xml"] = signed_sample(PKI)
    samples["tampered.xml"] = samples["signed.xml"].replace(b"Severe", b"Extreme", 1)
    for name, raw in samples.items():
        assert current_document(raw) == reference_document(raw), name
        assert not isinstance(current_document(raw), tuple), name
    assert current_document(samples["signed.xml"]).signature.verified
    assert current_document(samples["tampered.xml"]).signature.status == "failed"


def test_text_in_another_encoding_reads_as_the_reference_reads_it() -> None:
    raw = (FIXTURES / "cap12_svr_new.xml").read_text().replace("UTF-8", "ISO-8859-1", 1)
    raw = raw.replace("Severe Thunderstorm", "Sévère Thunderstorm", 1)
    data = raw.encode("latin-1")
    assert current_document(data) == reference_document(data)
    assert "Sévère" in current_document(data).raw


@EXAMPLES
@given(data=messages())
def test_generated_messages_parse_the_same_through_the_feed_path(data: bytes) -> None:
    expected = reference_document(data) if is_cap_alert(etree.fromstring(data)) else None
    if expected is None:
        return
    [entry] = parse_cap_feed(data, trust=PKI.anchors)
    if isinstance(expected, tuple):
        assert entry.reason == expected[1]  # type: ignore[union-attr]
    else:
        assert entry == expected


def timestamp_outcome(parse: Any, text: Any) -> Any:
    try:
        value = parse(text, "field")
    except AlertParseError as ex:
        return ("AlertParseError", str(ex))
    assert value.tzinfo is UTC
    return value


TIMESTAMP_LIKE = st.one_of(
    st.from_regex(
        r"\s?\d{4}-[01]\d-[0-3]\dT[0-2]\d:[0-6]\d(:[0-6]\d(\.\d{1,7})?)?(Z|[+-][0-2]\d:[0-6]\d)\s?",
        fullmatch=True,
    ),
    st.from_regex(r"[0-9٠-٩T:+\-Z. ]{10,30}", fullmatch=True),
    st.text(max_size=30),
    st.sampled_from(TIMES),
)


@EXAMPLES
@given(text=TIMESTAMP_LIKE)
def test_kept_timestamps_parse_as_the_strict_parser_parses_them(text: str) -> None:
    expected = timestamp_outcome(strict_timestamp, text)
    assert timestamp_outcome(parse_timestamp, text) == expected  # first seen
    assert timestamp_outcome(parse_timestamp, text) == expected  # kept


def test_a_bad_timestamp_seen_before_still_names_its_field() -> None:
    for what in ("alert sent", "info 0 expires"):
        with pytest.raises(AlertParseError, match=f"^{what}: 'soon' is not a timestamp"):
            parse_timestamp("soon", what)
