"""CAP XML messages and XML feeds: fields, versions, feeds, and hostile input."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from lxml import etree

from alertstation.alerts.cap import parse_cap_feed, parse_cap_xml
from alertstation.alerts.dispatch import parse_any
from alertstation.alerts.model import Alert, ParseProblem, Reference
from alertstation.alerts.parsing import (
    MAX_FEED_BYTES,
    MAX_FEED_ENTRIES,
    MAX_MESSAGE_BYTES,
    AlertParseError,
)
from alertstation.alerts.vtec import EventKey

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "alerts"
NEW_ID = "urn:oid:2.49.0.1.840.0.4c1a5f0e2b7d9a3c61e8f04b2d97a5c3e10b6f28.001.1"
CON_ID = "urn:oid:2.49.0.1.840.0.9d3e71b05a2c48f6e1d07c3b58a2e94f6c01d7b3.001.1"
NWS = "w-nws.webmaster@noaa.gov"


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def minimal(body: str = "", *, ns: str = "urn:oasis:names:tc:emergency:cap:1.2") -> bytes:
    return (
        f'<alert xmlns="{ns}"><identifier>X-1</identifier><sender>a@b.example</sender>'
        "<sent>2025-01-02T03:04:05-00:00</sent><status>Actual</status><msgType>Alert</msgType>"
        f"<scope>Public</scope>{body}</alert>"
    ).encode()


# --- one message ---------------------------------------------------------------------------


def test_cap12_message_fills_every_field() -> None:
    alert = parse_cap_xml(fixture("cap12_svr_new.xml"))
    assert (alert.identifier, alert.sender) == (NEW_ID, NWS)
    assert alert.sent == utc(2025, 5, 14, 22, 15)
    assert (alert.status, alert.msg_type, alert.scope) == ("Actual", "Alert", "Public")
    assert alert.references == ()
    # The Spanish block comes first; the English one is the primary.
    assert alert.language == "en-US"
    assert alert.event == "Severe Thunderstorm Warning"
    assert (alert.category, alert.urgency, alert.severity, alert.certainty) == (
        "Met",
        "Immediate",
        "Severe",
        "Observed",
    )
    assert alert.event_code == "SVR"
    assert alert.effective == alert.onset == utc(2025, 5, 14, 22, 15)
    assert alert.expires == alert.ends == utc(2025, 5, 14, 23, 0)
    assert alert.sender_name == "NWS Norman OK"
    assert alert.headline.startswith("Severe Thunderstorm Warning issued May 14")
    assert alert.description.endswith("quarter size hail.")
    assert "\n35 mph." in alert.description
    assert alert.instruction.startswith("For your protection")
    assert alert.response_types == ("Shelter",)
    assert alert.area_desc == "Canadian, OK; Oklahoma, OK"
    assert alert.same_codes == ("040017", "040109")
    assert alert.ugc_codes == ("OKC017", "OKC109")
    assert alert.geocodes == {"040017", "040109", "OKC017", "OKC109"}
    assert [str(v) for v in alert.vtec] == ["/O.NEW.KOUN.SV.W.0045.250514T2215Z-250514T2300Z/"]
    assert alert.eas_org == "WXR"
    assert alert.polygons == ("35.35,-97.95 35.62,-97.95 35.62,-97.33 35.35,-97.33 35.35,-97.95",)
    assert alert.source == "cap-xml"
    assert alert.signature.status == "unsigned"
    assert alert.raw == fixture("cap12_svr_new.xml").decode("utf-8")


def test_every_info_language_is_kept() -> None:
    alert = parse_cap_xml(fixture("cap12_svr_new.xml"))
    assert [info.language for info in alert.infos] == ["es-US", "en-US"]
    spanish = alert.info_for("es")
    assert spanish is not None and spanish.event == "Aviso de Tormenta Eléctrica Severa"
    assert alert.info_for("en-us") is alert.infos[1]
    assert alert.info_for("fr") is None
    assert spanish.geocodes("UGC") == alert.ugc_codes


def test_first_info_is_primary_when_none_is_english() -> None:
    info = (
        "<info><language>es-US</language><event>Aviso</event></info>"
        "<info><language>fr-CA</language><event>Avertissement</event></info>"
    )
    assert parse_cap_xml(minimal(info)).event == "Aviso"


def test_missing_language_means_english() -> None:
    info = (
        "<info><language>es-US</language><event>Aviso</event></info><info><event>W</event></info>"
    )
    alert = parse_cap_xml(minimal(info))
    assert (alert.event, alert.language) == ("W", "en-US")


def test_alert_without_info_has_empty_info_fields() -> None:
    alert = parse_cap_xml(minimal())
    assert alert.infos == () and alert.event == "" and alert.same_codes == ()
    assert alert.effective is None


def test_effective_defaults_to_sent() -> None:
    alert = parse_cap_xml(minimal("<info><event>Test</event></info>"))
    assert alert.effective == alert.sent == utc(2025, 1, 2, 3, 4, 5)


def test_cap11_and_cap12_parse_to_the_same_alert() -> None:
    cap12 = parse_cap_xml(fixture("cap12_svr_new.xml"))
    cap11 = parse_cap_xml(fixture("cap11_svr_new.xml"))
    assert replace(cap11, raw="", infos=()) == replace(cap12, raw="", infos=())
    # Parameters keep their text as written (the 1.1 twin writes its times in UTC).
    assert [replace(i, parameters=()) for i in cap11.infos] == [
        replace(i, parameters=()) for i in cap12.infos
    ]
    assert cap11.raw.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<cap:alert')


def test_timestamps_with_offsets_become_utc() -> None:
    alert = parse_cap_xml(
        minimal(
            "<info><effective>2025-01-02T08:34:05+05:30</effective>"
            "<onset>2025-01-01T22:04:05-05:00</onset><expires>2025-01-02T03:04:05Z</expires>"
            "</info>"
        )
    )
    assert alert.effective == alert.onset == alert.expires == utc(2025, 1, 2, 3, 4, 5)
    assert all(t.tzinfo is UTC for t in (alert.sent, alert.effective, alert.onset, alert.expires))


def test_update_carries_references() -> None:
    alert = parse_cap_xml(fixture("cap12_svr_con.xml"))
    assert alert.msg_type == "Update"
    assert alert.references == (Reference(NWS, NEW_ID, utc(2025, 5, 14, 22, 15)),)
    assert alert.references[0] == (NWS, NEW_ID, utc(2025, 5, 14, 22, 15))


def test_cancel_references_the_whole_chain() -> None:
    alert = parse_cap_xml(fixture("cap12_svr_can.xml"))
    assert alert.msg_type == "Cancel"
    assert [ref.identifier for ref in alert.references] == [NEW_ID, CON_ID]
    assert alert.vtec[0].action == "CAN" and alert.vtec[0].is_terminal


def test_new_con_can_share_one_event_key() -> None:
    names = ["cap12_svr_new.xml", "cap12_svr_con.xml", "cap12_svr_can.xml"]
    keys = {key for name in names for key in parse_cap_xml(fixture(name)).event_keys()}
    assert keys == {EventKey("KOUN", "SV", "W", 45, 2025)}


def test_geocode_values_holding_several_codes_are_split() -> None:
    area = (
        "<info><area><areaDesc>Coast</areaDesc>"
        "<geocode><valueName>UGC</valueName><value>TXZ211 TXZ212</value></geocode>"
        "<geocode><valueName>FIPS6</valueName><value>048201</value></geocode>"
        "<geocode><valueName>UGC</valueName><value>TXZ211</value></geocode>"
        "</area></info>"
    )
    alert = parse_cap_xml(minimal(area))
    assert alert.ugc_codes == ("TXZ211", "TXZ212")
    assert alert.same_codes == ("048201",)


def test_text_input_and_other_encodings_are_read() -> None:
    latin = minimal("<info><event>Avis météo</event></info>").decode("utf-8")
    declared = '<?xml version="1.0" encoding="ISO-8859-1"?>' + latin
    alert = parse_cap_xml(declared.encode("iso-8859-1"))
    assert alert.event == "Avis météo"
    assert "Avis météo" in alert.raw
    assert parse_cap_xml(latin).event == "Avis météo"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (minimal().replace(b"<identifier>X-1</identifier>", b""), "no <identifier>"),
        (minimal().replace(b"<sent>2025-01-02T03:04:05-00:00</sent>", b""), "no <sent>"),
        (minimal().replace(b"Actual", b"Real"), "<status> is 'Real'"),
        (minimal().replace(b">Alert<", b">Notice<"), "<msgType> is 'Notice'"),
        (minimal().replace(b"<scope>Public</scope>", b""), "no <scope>"),
        (minimal().replace(b"-00:00", b""), "not a timestamp with a UTC offset"),
        (minimal().replace(b"2025-01-02", b"2025-02-30"), "not a valid time"),
        (minimal("<references>only-two,parts</references>"), "not 'sender,identifier,sent'"),
        (minimal("<references>a,b,yesterday</references>"), "references entry 'b'"),
        (
            minimal(
                "<info><parameter><valueName>VTEC</valueName><value>/O.NEW/</value>"
                "</parameter></info>"
            ),
            "info 0 parameter VTEC: malformed P-VTEC",
        ),
        (minimal("<info><expires>soon</expires></info>"), "info 0 expires"),
        (minimal(ns="http://www.incident.com/cap/1.0"), "not a CAP 1.2 or 1.1 <alert>"),
        (b"<message/>", "root element is <message> (no namespace)"),
        (b"", "empty body"),
        (b"<alert>", "malformed XML at line 1"),
        (b"   \n", "empty body"),
    ],
)
def test_bad_messages_raise_a_precise_error(body: bytes, message: str) -> None:
    with pytest.raises(AlertParseError, match=re.escape(message)):
        parse_cap_xml(body)


def test_error_type_is_a_value_error() -> None:
    assert issubclass(AlertParseError, ValueError)


def test_two_documents_are_not_one_message() -> None:
    body = fixture("cap12_svr_new.xml") + fixture("cap12_svr_con.xml")
    with pytest.raises(AlertParseError, match="found 2; use parse_cap_feed"):
        parse_cap_xml(body)


# --- feeds ---------------------------------------------------------------------------------


def test_ipaws_wrapper_feed_parses_each_alert() -> None:
    entries = parse_cap_feed(fixture("ipaws_feed.xml"))
    assert len(entries) == 6
    *alerts, broken = entries
    assert all(isinstance(a, Alert) and a.source == "ipaws" for a in alerts)
    watch, upgrade, extend, expire, civil = alerts  # type: ignore[misc]
    assert [v.action for v in watch.vtec] == ["NEW"]
    assert [(v.action, v.significance) for v in upgrade.vtec] == [("UPG", "A"), ("NEW", "W")]
    assert upgrade.references[0].identifier == watch.identifier
    assert extend.vtec[0].action == "EXT" and extend.vtec[0].end == utc(2025, 2, 13, 18)
    assert expire.vtec[0].is_terminal and expire.vtec[0].begin is None
    assert {k for a in (upgrade, extend, expire) for k in a.event_keys()} >= {
        EventKey("KBOX", "WS", "W", 3, 2025)
    }
    assert civil.vtec == () and civil.eas_org == "CIV" and civil.event_code == "CEM"
    assert civil.infos[0].areas[0].circles == ("42.3480,-71.0420 1.5",)
    assert civil.same_codes == ("025025",) and civil.ugc_codes == ()
    assert broken == ParseProblem(5, "alert has no <sent> time", "MA-SUFFOLK-EMA-2025-0211-0008")


def test_wrapper_entry_raw_is_a_standalone_alert() -> None:
    first = parse_cap_feed(fixture("ipaws_feed.xml"))[0]
    assert isinstance(first, Alert)
    assert first.raw.startswith('<alert xmlns="urn:oasis:names:tc:emergency:cap:1.2">')
    assert "ns1" not in first.raw
    assert parse_cap_xml(first.raw).identifier == first.identifier


def test_back_to_back_documents_are_a_feed() -> None:
    broken = minimal().replace(b"<sender>a@b.example</sender>", b"")
    body = fixture("cap12_svr_new.xml") + b"\n" + fixture("cap12_svr_con.xml") + broken
    entries = parse_cap_feed(body)
    assert [type(e).__name__ for e in entries] == ["Alert", "Alert", "ParseProblem"]
    assert {e.source for e in entries if isinstance(e, Alert)} == {"ipaws"}
    assert entries[2] == ParseProblem(2, "alert has no <sender> (required by CAP)")


def test_atom_feed_parses_embedded_alerts_and_reports_links() -> None:
    tornado, linked, broken = parse_cap_feed(fixture("atom_feed.xml"))
    assert isinstance(tornado, Alert)
    assert tornado.event == "Tornado Warning" and tornado.event_code == "TOR"
    assert tornado.vtec[0].phenomenon == "TO"
    assert tornado.source == "cap-xml"
    assert isinstance(linked, ParseProblem) and linked.position == 1
    assert linked.link.startswith("https://alerts.example.org/cap/urn:oid:")
    assert linked.identifier.endswith("9d12.001.1")
    assert "embeds no CAP <alert>" in linked.reason
    assert isinstance(broken, ParseProblem) and broken.position == 2
    assert broken.reason.startswith("<status> is 'Real'")
    assert broken.identifier.endswith("4f6a85.001.1")


def test_feed_of_one_alert() -> None:
    assert [a.identifier for a in parse_cap_feed(fixture("cap12_svr_new.xml"))] == [NEW_ID]  # type: ignore[union-attr]
    [problem] = parse_cap_feed(minimal().replace(b"Actual", b"Real"))
    assert isinstance(problem, ParseProblem) and problem.identifier == "X-1"


def test_empty_wrapper_is_an_empty_feed() -> None:
    assert parse_cap_feed(b'<alerts xmlns="http://gov.fema.ipaws.services/feed"/>') == []


def test_wrapper_children_that_are_not_alerts_are_reported() -> None:
    body = b"<alerts><note>maintenance</note>" + minimal() + b"</alerts>"
    problem, alert = parse_cap_feed(body)
    assert problem == ParseProblem(0, "entry is <note> (no namespace), not a CAP alert")
    assert isinstance(alert, Alert)


def test_unknown_feed_root_is_an_error() -> None:
    with pytest.raises(AlertParseError, match="not a CAP alert, an <alerts> wrapper or an ATOM"):
        parse_cap_feed(b'<rss version="2.0"><channel/></rss>')


def test_parse_any_picks_the_parser() -> None:
    xml = fixture("cap12_svr_new.xml")
    json = fixture("api_feed.json")
    assert [a.source for a in parse_any(xml)] == ["cap-xml"]  # type: ignore[union-attr]
    assert len(parse_any(json)) == 6
    assert len(parse_any(json, "application/geo+json; charset=utf-8")) == 6
    assert len(parse_any(fixture("atom_feed.xml"), "application/atom+xml")) == 3
    assert len(parse_any(fixture("ipaws_feed.xml"), "application/xml")) == 6
    assert len(parse_any(xml.decode(), "text/plain")) == 1
    with pytest.raises(AlertParseError, match="malformed JSON"):
        parse_any(xml, "application/json")
    with pytest.raises(AlertParseError, match="cannot tell the format"):
        parse_any(b"ZCZC-WXR-SVR-040109+0045-1342215-KOUN/NWS-")
    with pytest.raises(AlertParseError, match="expected bytes or text"):
        parse_any(42)  # type: ignore[arg-type]


# --- hostile XML ---------------------------------------------------------------------------

SECRET = "TOP-SECRET-DO-NOT-LEAK"


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    path = tmp_path / "secret.txt"
    path.write_text(SECRET)
    return path


@pytest.fixture
def no_lxml(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if anything reaches lxml's parser."""

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("hostile XML reached lxml")

    monkeypatch.setattr(etree, "fromstring", refuse)


def hostile_documents(secret: Path) -> dict[str, bytes]:
    url = secret.as_uri()
    laughs = "".join(
        f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' if i else '<!ENTITY l0 "lol">' for i in range(10)
    )
    return {
        "external entity": (
            f'<?xml version="1.0"?><!DOCTYPE alert [<!ENTITY x SYSTEM "{url}">]>'
            '<alert xmlns="urn:oasis:names:tc:emergency:cap:1.2"><identifier>&x;</identifier>'
            "</alert>"
        ).encode(),
        "parameter entity": (
            f'<!DOCTYPE alert [<!ENTITY % p SYSTEM "{url}"> %p;]><alert/>'
        ).encode(),
        "external DTD": f'<!DOCTYPE alert SYSTEM "{url}"><alert/>'.encode(),
        "billion laughs": (
            f"<!DOCTYPE alert [{laughs}]>"
            '<alert xmlns="urn:oasis:names:tc:emergency:cap:1.2"><note>&l9;</note></alert>'
        ).encode(),
        "plain doctype": b"<!DOCTYPE alert>" + minimal(),
        "utf-16 doctype": (
            '<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE alert><alert/>'
        ).encode("utf-16"),
        "second document": minimal() + f'<!DOCTYPE a SYSTEM "{url}"><a/>'.encode(),
    }


@pytest.mark.parametrize(
    "name",
    [
        "external entity",
        "parameter entity",
        "external DTD",
        "billion laughs",
        "plain doctype",
        "utf-16 doctype",
        "second document",
    ],
)
@pytest.mark.usefixtures("no_lxml")
def test_doctype_is_refused_before_any_parsing(name: str, secret_file: Path) -> None:
    body = hostile_documents(secret_file)[name]
    for parse in (parse_cap_xml, parse_cap_feed, parse_any):
        with pytest.raises(AlertParseError, match="DOCTYPE declaration") as caught:
            parse(body)
        assert SECRET not in str(caught.value)


def test_doctype_inside_a_feed_entry_stops_the_whole_feed(secret_file: Path) -> None:
    body = fixture("cap12_svr_new.xml") + hostile_documents(secret_file)["external entity"]
    with pytest.raises(AlertParseError, match=r"DOCTYPE declaration \(near byte [1-9][0-9]*\)"):
        parse_cap_feed(body)


@pytest.mark.usefixtures("no_lxml")
def test_fifty_megabytes_are_refused_unread(monkeypatch: pytest.MonkeyPatch) -> None:
    body = b"<alert>" + b" " * (50 * 1024 * 1024) + b"</alert>"
    with pytest.raises(AlertParseError, match=r"over the limit of 2097152 bytes; refused unread"):
        parse_cap_xml(body)
    with pytest.raises(AlertParseError, match=f"over the limit of {MAX_FEED_BYTES} bytes"):
        parse_cap_feed(body)
    with pytest.raises(AlertParseError, match="over the limit"):
        parse_any(body)


def test_message_limit_is_two_mebibytes() -> None:
    assert MAX_MESSAGE_BYTES == 2 * 1024 * 1024
    padding = b"x" * (MAX_MESSAGE_BYTES - len(minimal("<note></note>")))
    at_limit = minimal(f"<note>{padding.decode()}</note>")
    assert len(at_limit) == MAX_MESSAGE_BYTES
    assert parse_cap_xml(at_limit).note == padding.decode()
    with pytest.raises(AlertParseError, match="CAP message is 2097153 bytes"):
        parse_cap_xml(at_limit.replace(b"<note>", b"<note>x"))


def test_oversized_entry_in_a_feed_becomes_a_problem() -> None:
    big = minimal("<note>" + "y" * MAX_MESSAGE_BYTES + "</note>")
    entries = parse_cap_feed(b"<alerts>" + big + minimal() + b"</alerts>")
    assert isinstance(entries[0], ParseProblem) and "over the limit" in entries[0].reason
    assert isinstance(entries[1], Alert)


def test_deep_nesting_is_an_error_not_a_crash() -> None:
    body = minimal("<note>" + "<x>" * 5000 + "</x>" * 5000 + "</note>")
    with pytest.raises(AlertParseError):
        parse_cap_xml(body)


def test_feed_entry_count_is_limited() -> None:
    over = MAX_FEED_ENTRIES + 1
    with pytest.raises(AlertParseError, match=f"more than {MAX_FEED_ENTRIES} XML documents"):
        parse_cap_feed(b"<a/>" * over)
    with pytest.raises(AlertParseError, match=f"feed has {over} entries, over the limit"):
        parse_cap_feed(b"<alerts>" + b"<a/>" * over + b"</alerts>")
    atom = b'<feed xmlns="http://www.w3.org/2005/Atom">' + b"<entry/>" * over + b"</feed>"
    with pytest.raises(AlertParseError, match=f"feed has {over} entries"):
        parse_cap_feed(atom)
    assert len(parse_cap_feed(b"<a/>" * MAX_FEED_ENTRIES)) == MAX_FEED_ENTRIES


def test_malformed_later_document_names_where_it_starts() -> None:
    first = fixture("cap12_svr_new.xml")
    with pytest.raises(AlertParseError, match=f"document starting at byte {len(first)}"):
        parse_cap_feed(first + b"<alert><oops></alert>")


def test_timestamps_need_ascii_digits() -> None:
    with pytest.raises(AlertParseError, match="not a timestamp"):
        parse_cap_xml(minimal().replace(b"2025-01-02", "２０２５-01-02".encode()))


def test_text_split_by_comments_or_markup_reads_whole_and_the_first_of_repeats_wins() -> None:
    body = (
        "<note>first <!-- an aside -->half<b>bold</b> tail</note><note>second</note>"
        "<info><event>  Flood <?pi x?>Watch </event><category>Met</category>"
        "<category><!-- empty --></category><category>Safety</category></info>"
    )
    alert = parse_cap_xml(minimal(body))
    assert alert.note == "first halfbold tail"
    assert alert.infos[0].event == "Flood Watch"
    assert alert.infos[0].categories == ("Met", "Safety")


def test_a_single_message_reads_the_same_through_the_feed_path() -> None:
    for name in ("cap12_svr_new.xml",):
        raw = fixture(name)
        assert parse_cap_feed(raw) == [parse_cap_xml(raw)]
