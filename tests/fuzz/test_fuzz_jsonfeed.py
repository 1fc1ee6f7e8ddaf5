"""Fuzz the JSON feed's single-alert forms: bare Features, properties objects and addresses.

``tests/alerts/test_parse_fuzz.py`` covers random bytes, random JSON and FeatureCollections with
arbitrary property values. Here: a real feature with fields removed or replaced (``type``,
``sender``, ``properties`` itself), arbitrary ``@id``/``id`` addresses for the sender fallback,
the bare properties form and ``@graph`` with odd members, through ``parse_json_feed`` and through
``parse_any`` under each JSON media type. Every answer is a list of Alert/ParseProblem or an
AlertParseError, and no Alert comes out without a sender.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from alertstation.alerts.dispatch import parse_any
from alertstation.alerts.jsonfeed import parse_json_feed
from alertstation.alerts.model import Alert, ParseProblem
from alertstation.alerts.parsing import AlertParseError
from tests.fuzz.fuzzing import fuzz, mutated

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "alerts"
FEED_BYTES = (FIXTURES / "api_feed.json").read_bytes()
FEED = json.loads(FEED_BYTES)
FEATURES = FEED["features"]

JSON_LEAF = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
)
JSON_VALUE = st.recursive(
    JSON_LEAF,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=10,
)
ADDRESSES = st.text(max_size=40) | st.sampled_from(
    [
        "https://api.weather.gov/alerts/urn:oid:1",
        "HTTPS://API.WEATHER.GOV./alerts/x",
        "https://evilweather.gov/x",
        "https://weather.gov.example.org/x",
        "http://[::1",
        "http://[::1]:99999/x",
        "http://user:pw@host:notaport/x",
        "http://",
        "https:///path",
        "ftp://api.weather.gov/x",
        "urn:oid:2.49.0.1.840.0.1",
        "//api.weather.gov/x",
        "http://\u0430pi.weather.gov/x",
        "http://xn--80ak6aa92e.com/",
        "http://" + "a" * 300 + ".org/",
    ]
)
MEDIA_TYPES = [None, "application/geo+json", "application/ld+json", "application/json; charset=x"]
DROPPABLE = ["type", "geometry", "id", "properties"]
PROPERTY_KEYS = ["sender", "@id", "id", "sent", "messageType", "status", "@type", "references"]


def _outcome(entries: list[Alert | ParseProblem]) -> None:
    for entry in entries:
        if isinstance(entry, Alert):
            assert entry.sender and entry.identifier
            assert entry.sender == entry.sender.strip()
        else:
            assert isinstance(entry, ParseProblem) and entry.reason and entry.position >= 0


def _parse_everywhere(body: bytes) -> None:
    for media in MEDIA_TYPES:
        try:
            _outcome(parse_any(body, media))
        except AlertParseError as ex:
            assert str(ex)
    try:
        _outcome(parse_json_feed(body))
    except AlertParseError as ex:
        assert str(ex)


@st.composite
def single_alerts(draw: st.DrawFn) -> bytes:
    """One real feature as a bare Feature, a properties object or a one-member @graph, altered."""
    feature: dict[str, Any] = copy.deepcopy(draw(st.sampled_from(FEATURES)))
    for key in draw(st.lists(st.sampled_from(DROPPABLE), max_size=2, unique=True)):
        feature.pop(key, None)
    props = feature.get("properties")
    if isinstance(props, dict):
        for key in draw(st.lists(st.sampled_from(PROPERTY_KEYS), max_size=3, unique=True)):
            if draw(st.booleans()):
                props.pop(key, None)
            else:
                props[key] = draw(ADDRESSES | JSON_VALUE)
        if draw(st.booleans()):
            props["@id"] = draw(ADDRESSES)
    if draw(st.booleans()):
        feature["id"] = draw(ADDRESSES | JSON_VALUE)
    form = draw(st.sampled_from(["feature", "properties", "graph"]))
    if form == "properties" and isinstance(props, dict):
        document: Any = props
    elif form == "graph":
        document = {"@graph": [props if props is not None else feature]}
    else:
        document = feature
    return json.dumps(document).encode()


@fuzz(90)
@given(body=single_alerts())
@example(body=json.dumps({"properties": {"sent": "2025-06-01T03:04:00-05:00"}}).encode())
@example(body=json.dumps({"@id": "http://[::1", "sent": 1, "messageType": "Alert"}).encode())
def test_single_alert_forms_give_entries_or_the_parse_error(body: bytes) -> None:
    _parse_everywhere(body)


@fuzz(90)
@given(body=mutated(FEED_BYTES, most=3))
def test_mutated_feed_bytes_through_every_json_media_type(body: bytes) -> None:
    _parse_everywhere(body)
    _parse_everywhere(b"\xef\xbb\xbf" + body)  # as a Windows editor saves it
