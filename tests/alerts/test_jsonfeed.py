"""The agency's alerts JSON API: features, bad features, bad bodies, and parity with CAP XML."""

from __future__ import annotations

import copy
import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from alertstation.alerts.cap import parse_cap_xml
from alertstation.alerts.dispatch import parse_any
from alertstation.alerts.jsonfeed import parse_feature, parse_json_feed
from alertstation.alerts.model import Alert, ParseProblem, Reference
from alertstation.alerts.parsing import MAX_FEED_BYTES, MAX_FEED_ENTRIES, AlertParseError
from alertstation.alerts.vtec import EventKey

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "alerts"
FFW_ID = "urn:oid:2.49.0.1.840.0.aa10b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3.001.1"
NWS = "w-nws.webmaster@noaa.gov"


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


@pytest.fixture(scope="module")
def feed() -> dict[str, Any]:
    return json.loads((FIXTURES / "api_feed.json").read_text())


@pytest.fixture(scope="module")
def entries() -> list[Alert | ParseProblem]:
    return parse_json_feed((FIXTURES / "api_feed.json").read_bytes())


def alert_at(entries: list[Alert | ParseProblem], index: int) -> Alert:
    entry = entries[index]
    assert isinstance(entry, Alert), entry
    return entry


def test_feed_gives_one_entry_per_feature(entries: list[Alert | ParseProblem]) -> None:
    kinds = [type(e).__name__ for e in entries]
    assert kinds == ["Alert", "Alert", "Alert", "Alert", "ParseProblem", "Alert"]


def test_new_warning_fills_every_field(
    entries: list[Alert | ParseProblem], feed: dict[str, Any]
) -> None:
    alert = alert_at(entries, 0)
    assert (alert.identifier, alert.sender) == (FFW_ID, NWS)
    assert alert.sent == alert.effective == alert.onset == utc(2025, 6, 1, 3, 4)
    assert alert.expires == alert.ends == utc(2025, 6, 1, 9, 0)
    assert (alert.status, alert.msg_type, alert.scope) == ("Actual", "Alert", "Public")
    assert (alert.event, alert.category, alert.language) == ("Flash Flood Warning", "Met", "en-US")
    assert (alert.urgency, alert.severity, alert.certainty) == ("Immediate", "Severe", "Likely")
    assert alert.event_code == "FFW"
    assert alert.sender_name == "NWS Fort Worth TX"
    assert alert.headline.startswith("Flash Flood Warning issued May 31")
    assert alert.instruction.startswith("Turn around")
    assert alert.response_types == ("Avoid",)
    assert alert.area_desc == "Tarrant, TX; Dallas, TX"
    assert alert.same_codes == ("048439", "048113")
    assert alert.ugc_codes == ("TXC439", "TXC113")
    assert [str(v) for v in alert.vtec] == ["/O.NEW.KFWD.FF.W.0021.250601T0304Z-250601T0900Z/"]
    assert alert.eas_org == "WXR"
    assert alert.polygons == ("32.61,-97.52 32.61,-97.05 32.99,-97.05 32.99,-97.52 32.61,-97.52",)
    assert alert.source == "json-api"
    assert alert.signature.status == "unsigned"
    assert alert.references == ()
    assert json.loads(alert.raw) == feed["features"][0]
    assert alert.infos[0].parameter("BLOCKCHANNEL") == ("EAS", "NWEM")


def test_update_and_cancel_carry_references(entries: list[Alert | ParseProblem]) -> None:
    new, ext, can = (alert_at(entries, i) for i in range(3))
    assert ext.msg_type == "Update" and ext.vtec[0].action == "EXT"
    assert ext.references == (Reference(NWS, FFW_ID, utc(2025, 6, 1, 3, 4)),)
    assert can.msg_type == "Cancel" and can.vtec[0].is_terminal
    assert [r.identifier for r in can.references] == [new.identifier, ext.identifier]
    assert can.headline == "" and can.instruction == "" and can.onset is None and can.ends is None
    keys = {k for alert in (new, ext, can) for k in alert.event_keys()}
    assert keys == {EventKey("KFWD", "FF", "W", 21, 2025)}


def test_marine_advisory_without_geometry(entries: list[Alert | ParseProblem]) -> None:
    advisory = alert_at(entries, 3)
    assert advisory.ugc_codes == ("GMZ335", "GMZ330")
    assert advisory.same_codes == ("077335", "077330")
    assert advisory.polygons == ()
    assert advisory.vtec[0].action == "CON" and advisory.vtec[0].begin is None


def test_malformed_feature_is_a_problem_and_the_rest_still_parse(
    entries: list[Alert | ParseProblem],
) -> None:
    problem = entries[4]
    assert isinstance(problem, ParseProblem)
    assert problem.position == 4
    assert problem.identifier.endswith("b234c5d6e7.001.1")
    assert problem.reason.startswith("properties.sent: 'yesterday evening' is not a timestamp")


def test_multipolygon_gives_one_cap_polygon_per_part(entries: list[Alert | ParseProblem]) -> None:
    statement = alert_at(entries, 5)
    assert statement.polygons == (
        "29.7,-95.6 29.7,-95.3 29.9,-95.3 29.7,-95.6",
        "29.5,-95.1 29.5,-94.9 29.65,-94.9 29.5,-95.1",
    )
    assert statement.vtec == () and statement.event_code == "SPS"


def test_single_feature_and_json_ld_graph(feed: dict[str, Any]) -> None:
    feature = feed["features"][0]
    [alone] = parse_json_feed(json.dumps(feature))
    assert isinstance(alone, Alert) and alone.identifier == FFW_ID
    graph = {"@graph": [f["properties"] for f in feed["features"]]}
    from_graph = parse_json_feed(json.dumps(graph).encode())
    assert [type(e).__name__ for e in from_graph][:2] == ["Alert", "Alert"]
    assert from_graph[0].same_codes == alone.same_codes  # type: ignore[union-attr]


def bare_feature(feed: dict[str, Any], host: str | None = None) -> dict[str, Any]:
    """The fixture's first feature as a single alert without ``type`` or ``sender``."""
    feature = copy.deepcopy(feed["features"][0])
    del feature["type"]
    del feature["properties"]["sender"]
    if host is not None:
        for holder, key in ((feature, "id"), (feature["properties"], "@id")):
            holder[key] = holder[key].replace("api.example.org", host)
    return feature


def test_bare_feature_without_type_or_sender_takes_the_sender_from_its_address(
    feed: dict[str, Any],
) -> None:
    [alert] = parse_json_feed(json.dumps(bare_feature(feed)))
    assert isinstance(alert, Alert), alert
    assert (alert.identifier, alert.sender) == (FFW_ID, "api.example.org")
    assert alert.same_codes == ("048439", "048113")
    assert alert.sender_name == "NWS Fort Worth TX"
    # The stored raw is the feature alone and reads back to the same sender.
    [again] = parse_json_feed(alert.raw)
    assert isinstance(again, Alert) and again.sender == alert.sender


def test_bare_feature_from_the_agency_api_gets_the_agency_sender(feed: dict[str, Any]) -> None:
    [alert] = parse_any(json.dumps(bare_feature(feed, "api.weather.gov")).encode())
    assert isinstance(alert, Alert), alert
    assert alert.sender == NWS, "later messages reference the agency's CAP sender"
    typed = dict(bare_feature(feed, "API.Weather.gov."), type="Feature")
    [alert] = parse_json_feed(json.dumps(typed))
    assert isinstance(alert, Alert) and alert.sender == NWS


def test_bare_properties_object_is_one_alert(feed: dict[str, Any]) -> None:
    props = bare_feature(feed, "api.weather.gov")["properties"]
    [alert] = parse_json_feed(json.dumps(props))
    assert isinstance(alert, Alert), alert
    assert (alert.identifier, alert.sender, alert.event) == (FFW_ID, NWS, "Flash Flood Warning")


def test_a_body_with_a_byte_order_mark_is_read(feed: dict[str, Any]) -> None:
    body = b"\xef\xbb\xbf" + json.dumps(bare_feature(feed)).encode()
    [alert] = parse_any(body)
    assert isinstance(alert, Alert) and alert.identifier == FFW_ID


def test_a_given_sender_wins_over_the_address(feed: dict[str, Any]) -> None:
    feature = bare_feature(feed, "api.weather.gov")
    feature["properties"]["sender"] = "someone@example.org"
    [alert] = parse_json_feed(json.dumps(feature))
    assert isinstance(alert, Alert) and alert.sender == "someone@example.org"


@pytest.mark.parametrize("address", [None, "urn:oid:1.2.3", "http://", "http://[::1", 42])
def test_feature_without_sender_or_usable_address_is_a_problem(
    feed: dict[str, Any], address: Any
) -> None:
    feature = bare_feature(feed)
    feature["properties"]["@id"] = address
    feature["id"] = address
    [problem] = parse_json_feed(json.dumps(feature))
    assert isinstance(problem, ParseProblem), problem
    assert "properties.sender is missing or empty" in problem.reason
    assert problem.identifier == FFW_ID


def test_empty_collection() -> None:
    assert parse_json_feed(b'{"type": "FeatureCollection", "features": []}') == []


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"", "malformed JSON"),
        (b"{", "malformed JSON"),
        (b"[1, 2]", "JSON feed is a list; expected a FeatureCollection"),
        (b'"text"', "JSON feed is a string"),
        (b"null", "JSON feed is null"),
        (b'{"type": "Topology"}', "JSON feed type is 'Topology'"),
        (b'{"type": "FeatureCollection", "features": {}}', "features is an object, not a list"),
        (b'{"@graph": 3}', "@graph is an integer, not a list"),
        (b"[" * 5000 + b"]" * 5000, "malformed JSON"),
        (b'{"a": NaN}', "malformed JSON"),
    ],
)
def test_unusable_bodies_raise(body: bytes, message: str) -> None:
    with pytest.raises(AlertParseError, match=re.escape(message)):
        parse_json_feed(body)


def test_feed_size_limit() -> None:
    body = b'{"type": "FeatureCollection", "features": [], "pad": "' + b"x" * MAX_FEED_BYTES
    with pytest.raises(AlertParseError, match="JSON feed is .* over the limit"):
        parse_json_feed(body + b'"}')


def test_feature_count_limit() -> None:
    body = {"type": "FeatureCollection", "features": [None] * (MAX_FEED_ENTRIES + 1)}
    with pytest.raises(AlertParseError, match="features, over the limit of"):
        parse_json_feed(json.dumps(body))


def _mutated(feed: dict[str, Any], path: list[str | int], value: Any) -> dict[str, Any]:
    feature = copy.deepcopy(feed["features"][0])
    target = feature
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return feature


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (["properties"], [], "feature properties is a list, not an object"),
        (["properties", "id"], KeyError, "properties.id is missing or empty"),
        (["properties", "sender"], 7, "properties.sender is an integer, not a string"),
        (["properties", "sent"], None, "properties.sent is missing"),
        (["properties", "sent"], "2025-06-01T03:04:00", "not a timestamp with a UTC offset"),
        (["properties", "status"], "Real", "properties.status is 'Real'; expected one of"),
        (["properties", "messageType"], KeyError, "properties.messageType is missing"),
        (["properties", "scope"], "Everyone", "properties.scope is 'Everyone'"),
        (["properties", "geocode", "SAME"], "048439", None),
        (["properties", "geocode", "SAME"], [48439], "properties.geocode.SAME is not a list"),
        (["properties", "geocode"], ["048439"], "properties.geocode is a list, not an object"),
        (["properties", "parameters", "VTEC"], ["/O.NEW.KFWD/"], "parameters.VTEC: malformed"),
        (["properties", "references"], {}, "properties.references is an object, not a list"),
        (["properties", "references"], [{"identifier": "x"}], "references[0]: properties.sender"),
        (
            ["properties", "references"],
            [{"identifier": "x", "sender": "y"}],
            "references[0] has no sent time",
        ),
        (["properties", "references"], ["x"], "references[0] is a string, not an object"),
        (["geometry"], "POLYGON", "geometry is a string, not an object"),
        (["geometry", "type"], "Point", "geometry type 'Point' is not a Polygon"),
        (["geometry", "coordinates"], [], "geometry polygon has no outer ring"),
        (["geometry", "coordinates"], [[[1.0]]], "geometry point [1.0] is not"),
        (["geometry", "coordinates"], [[[True, 2]]], "is not [longitude, latitude]"),
        (["properties", "onset"], None, None),
        (["properties", "eventCode"], None, None),
    ],
)
def test_bad_feature_fields_are_named(
    feed: dict[str, Any], path: list[str | int], value: Any, message: str | None
) -> None:
    feature = _mutated(feed, path, value)
    [entry] = parse_json_feed(json.dumps({"type": "FeatureCollection", "features": [feature]}))
    if message is None:
        assert isinstance(entry, Alert)
        return
    assert isinstance(entry, ParseProblem) and entry.position == 0
    assert message in entry.reason
    with pytest.raises(AlertParseError):
        parse_feature(feature)


def test_feature_that_is_not_an_object() -> None:
    [entry] = parse_json_feed(b'{"type": "FeatureCollection", "features": [3]}')
    assert entry == ParseProblem(0, "feature is an integer, not an object")


def test_json_and_cap_xml_give_the_same_codes_and_vtec() -> None:
    xml = parse_cap_xml((FIXTURES / "cap12_svr_con.xml").read_bytes())
    info = xml.infos[0]
    feature = {
        "type": "Feature",
        "geometry": None,
        "properties": {
            "id": xml.identifier,
            "sender": xml.sender,
            "sent": "2025-05-14T17:40:00-05:00",
            "status": "Actual",
            "messageType": "Update",
            "event": info.event,
            "areaDesc": info.area_desc,
            "expires": "2025-05-14T18:00:00-05:00",
            "geocode": {"SAME": ["040109"], "UGC": ["OKC109"]},
            "eventCode": {"SAME": ["SVS"]},
            "parameters": {
                "EAS-ORG": ["WXR"],
                "VTEC": ["/O.CON.KOUN.SV.W.0045.000000T0000Z-250514T2300Z/"],
            },
            "references": [
                {"identifier": r.identifier, "sender": r.sender, "sent": r.sent.isoformat()}
                for r in xml.references
            ],
        },
    }
    [api] = parse_json_feed(json.dumps(feature))
    assert isinstance(api, Alert)
    for name in (
        "identifier",
        "sender",
        "sent",
        "msg_type",
        "expires",
        "same_codes",
        "ugc_codes",
        "vtec",
        "event_code",
        "eas_org",
        "references",
        "area_desc",
        "event",
    ):
        assert getattr(api, name) == getattr(xml, name), name
    assert api.event_keys() == xml.event_keys()
