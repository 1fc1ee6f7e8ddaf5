"""Fuzz the parsers: whatever the bytes, the only exception is AlertParseError."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from alertstation.alerts.cap import parse_cap_feed, parse_cap_xml
from alertstation.alerts.dispatch import parse_any
from alertstation.alerts.jsonfeed import parse_json_feed
from alertstation.alerts.model import Alert, ParseProblem
from alertstation.alerts.parsing import AlertParseError
from alertstation.alerts.signature import TrustAnchors
from tests.fixtures.alerts.signing import make_pki, signed_sample

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "alerts"
SAMPLES = {path.name: path.read_bytes() for path in sorted(FIXTURES.glob("*.xml"))}
SAMPLES["api_feed.json"] = (FIXTURES / "api_feed.json").read_bytes()
PKI = make_pki()
TRUST: TrustAnchors = PKI.anchors
SAMPLES["signed.xml"] = signed_sample(PKI)

FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _check_alert(alert: Alert) -> None:
    assert alert.identifier and alert.sender
    for moment in (alert.sent, alert.effective, alert.onset, alert.expires, alert.ends):
        assert moment is None or moment.tzinfo is UTC
    assert alert.signature.status in {"verified", "unsigned", "failed"}


def _call(parse: Callable[[bytes], Any], data: bytes) -> None:
    try:
        result = parse(data)
    except AlertParseError as ex:
        assert str(ex)
        return
    entries = result if isinstance(result, list) else [result]
    for entry in entries:
        assert isinstance(entry, Alert | ParseProblem)
        if isinstance(entry, Alert):
            _check_alert(entry)
        else:
            assert entry.reason and entry.position >= 0


PARSERS: dict[str, Callable[[bytes], Any]] = {
    "cap_xml": lambda data: parse_cap_xml(data, trust=TRUST),
    "cap_feed": lambda data: parse_cap_feed(data, trust=TRUST),
    "json_feed": parse_json_feed,
    "any": lambda data: parse_any(data, trust=TRUST),
}


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    """A valid sample with a few bytes flipped, deleted, inserted or the tail cut off."""
    data = bytearray(SAMPLES[draw(st.sampled_from(sorted(SAMPLES)))])
    for _ in range(draw(st.integers(1, 4))):
        if not data:
            break
        at = draw(st.integers(0, len(data) - 1))
        how = draw(st.sampled_from(["flip", "delete", "insert", "truncate", "splice"]))
        if how == "flip":
            data[at] = draw(st.integers(0, 255))
        elif how == "delete":
            del data[at : at + draw(st.integers(1, 16))]
        elif how == "insert":
            data[at:at] = draw(
                st.sampled_from(
                    [
                        b"<",
                        b">",
                        b"&",
                        b"]]>",
                        b"<!DOCTYPE a>",
                        b"&x;",
                        b"\x00",
                        b"\xff\xfe",
                        b"<alert>",
                        b"</info>",
                        b'"',
                        b"-00:00",
                        b"\xc3",
                        b"<?xml version='1.0'?>",
                    ]
                )
            )
        elif how == "truncate":
            del data[at:]
        else:
            data[at:at] = draw(st.binary(max_size=24))
    return bytes(data)


JSON_LEAF = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
JSON_VALUE = st.recursive(
    JSON_LEAF,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
PROPERTY_NAMES = [
    "id",
    "sender",
    "sent",
    "effective",
    "onset",
    "expires",
    "ends",
    "status",
    "messageType",
    "scope",
    "category",
    "severity",
    "certainty",
    "urgency",
    "event",
    "headline",
    "areaDesc",
    "geocode",
    "parameters",
    "eventCode",
    "references",
    "language",
    "response",
]
PROPERTY_VALUES = (
    JSON_VALUE
    | st.sampled_from(["2025-06-01T03:04:00-05:00", "Actual", "Alert", "Update", "Public"])
    | st.fixed_dictionaries({"SAME": st.lists(st.text(max_size=8)), "VTEC": st.lists(st.text())})
)


@st.composite
def feature_collections(draw: st.DrawFn) -> bytes:
    """A FeatureCollection whose properties have the right names and arbitrary values."""
    features = []
    for _ in range(draw(st.integers(0, 3))):
        props = draw(st.dictionaries(st.sampled_from(PROPERTY_NAMES), PROPERTY_VALUES))
        geometry = draw(
            st.none()
            | JSON_VALUE
            | st.fixed_dictionaries(
                {"type": st.sampled_from(["Polygon", "MultiPolygon"]), "coordinates": JSON_VALUE}
            )
        )
        features.append({"type": "Feature", "geometry": geometry, "properties": props})
    return json.dumps({"type": "FeatureCollection", "features": features}).encode()


@pytest.mark.parametrize("parser", sorted(PARSERS))
@FUZZ
@given(data=st.binary(max_size=512))
def test_random_bytes(parser: str, data: bytes) -> None:
    _call(PARSERS[parser], data)


@pytest.mark.parametrize("parser", sorted(PARSERS))
@FUZZ
@given(data=mutated())
def test_mutated_samples(parser: str, data: bytes) -> None:
    _call(PARSERS[parser], data)


@FUZZ
@given(value=JSON_VALUE)
def test_random_json(value: Any) -> None:
    data = json.dumps(value).encode()
    _call(parse_json_feed, data)
    _call(PARSERS["any"], data)


@FUZZ
@given(data=feature_collections())
def test_feature_collections_with_arbitrary_values(data: bytes) -> None:
    _call(parse_json_feed, data)


@FUZZ
@given(text=st.text(max_size=300))
def test_random_text(text: str) -> None:
    for parser in (parse_cap_xml, parse_cap_feed, parse_json_feed, parse_any):
        _call(parser, text)  # type: ignore[arg-type]


def test_samples_parse_unchanged() -> None:
    for name, data in SAMPLES.items():
        entries = parse_any(data, trust=TRUST)
        assert any(isinstance(e, Alert) for e in entries), name
    signed = parse_cap_xml(SAMPLES["signed.xml"], trust=TRUST)
    assert signed.signature.verified
