"""The weather agency's alerts JSON API (GeoJSON) parsed into ``Alert``.

Accepted bodies: a FeatureCollection (``features[].properties``), a single Feature (with or
without ``"type": "Feature"``), a single bare properties object (the JSON-LD form of one alert),
or the JSON-LD form whose ``@graph`` lists the properties objects directly. Each feature becomes
an ``Alert`` with ``source="json-api"``, or a ``ParseProblem`` naming its position and the reason.

A feature without ``properties.sender`` takes its sender from the address it was published at:
the host of ``properties.@id`` (else the feature's ``id``, else ``properties.id``) when that is an
http(s) URL. The agency's API hosts (``weather.gov`` and its subdomains) stand for the agency's
CAP sender ``w-nws.webmaster@noaa.gov``, so references from later messages still match; any
other host stands for itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import orjson

from alertstation.alerts.model import (
    MSG_TYPES,
    SCOPES,
    STATUSES,
    Alert,
    AlertInfo,
    Area,
    ParseProblem,
    Reference,
    SignatureCheck,
)
from alertstation.alerts.parsing import (
    MAX_FEED_BYTES,
    MAX_FEED_ENTRIES,
    AlertParseError,
    as_bytes,
    check_size,
    parse_timestamp,
)
from alertstation.alerts.vtec import parse_vtec_strings

JSON_UNSIGNED = SignatureCheck("unsigned", "JSON API messages carry no XML signature")
#: The CAP sender of every message the agency's API (api.weather.gov) publishes.
AGENCY_SENDER = "w-nws.webmaster@noaa.gov"
AGENCY_DOMAIN = "weather.gov"


def parse_json_feed(data: bytes | str) -> list[Alert | ParseProblem]:
    """Parse a JSON API body into one entry per feature; bad features become ParseProblem.

    Raises AlertParseError when the body is not JSON or not a feature collection at all.
    """
    raw = as_bytes(data)
    check_size(raw, MAX_FEED_BYTES, "JSON feed")
    # A file saved by a Windows editor starts with a UTF-8 byte order mark; orjson refuses it.
    raw = raw.removeprefix(b"\xef\xbb\xbf")
    try:
        document = orjson.loads(raw)
    except orjson.JSONDecodeError as ex:
        raise AlertParseError(f"malformed JSON: {ex}") from None
    features = _features(document)
    if len(features) > MAX_FEED_ENTRIES:
        raise AlertParseError(
            f"feed has {len(features)} features, over the limit of {MAX_FEED_ENTRIES}"
        )
    results: list[Alert | ParseProblem] = []
    for position, feature in enumerate(features):
        try:
            results.append(parse_feature(feature))
        except AlertParseError as ex:
            results.append(ParseProblem(position, str(ex), identifier=_identifier_of(feature)))
    return results


def parse_feature(feature: Any) -> Alert:
    """Parse one GeoJSON Feature (or a bare properties object) of the JSON API."""
    if not isinstance(feature, dict):
        raise AlertParseError(f"feature is {_kind(feature)}, not an object")
    props = feature.get("properties")
    if not isinstance(props, dict):
        raise AlertParseError(f"feature properties is {_kind(props)}, not an object")
    get = _Fields(props)
    sent = get.time("sent")
    if sent is None:
        raise AlertParseError("properties.sent is missing")
    parameters = get.mapping_pairs("parameters")
    try:
        vtec = parse_vtec_strings([value for key, value in parameters if key == "VTEC"])
    except ValueError as ex:
        raise AlertParseError(f"properties.parameters.VTEC: {ex}") from None
    geocodes = get.mapping_pairs("geocode")
    area = Area(
        desc=get.text("areaDesc"),
        polygons=_polygons(feature.get("geometry")),
        geocodes=tuple((name, code) for name, value in geocodes for code in value.split()),
    )
    category = get.text("category")
    response = get.text("response")
    info = AlertInfo(
        language=get.text("language") or "en-US",
        categories=(category,) if category else (),
        event=get.text("event"),
        response_types=(response,) if response else (),
        urgency=get.text("urgency"),
        severity=get.text("severity"),
        certainty=get.text("certainty"),
        event_codes=get.mapping_pairs("eventCode"),
        effective=get.time("effective"),
        onset=get.time("onset"),
        expires=get.time("expires"),
        ends=get.time("ends"),
        sender_name=get.text("senderName"),
        headline=get.text("headline"),
        description=get.text("description"),
        instruction=get.text("instruction"),
        web=get.text("web"),
        parameters=parameters,
        vtec=vtec,
        areas=(area,),
    )
    return Alert.from_infos(
        infos=(info,),
        identifier=get.required("id"),
        sender=get.text("sender") or _sender_from_address(feature, props),
        sent=sent,
        status=get.choice("status", STATUSES, required=True),
        msg_type=get.choice("messageType", MSG_TYPES, required=True),
        scope=get.choice("scope", SCOPES, required=False) or "Public",
        references=get.references(),
        note=get.text("note"),
        source="json-api",
        signature=JSON_UNSIGNED,
        raw=orjson.dumps(feature).decode("utf-8"),
    )


def _features(document: Any) -> list[Any]:
    if not isinstance(document, dict):
        raise AlertParseError(f"JSON feed is {_kind(document)}; expected a FeatureCollection")
    kind = document.get("type")
    if kind == "FeatureCollection":
        features = document.get("features")
        if not isinstance(features, list):
            raise AlertParseError(f"FeatureCollection.features is {_kind(features)}, not a list")
        return features
    if kind == "Feature" or (kind is None and isinstance(document.get("properties"), dict)):
        return [document]
    if "@graph" in document:
        graph = document["@graph"]
        if not isinstance(graph, list):
            raise AlertParseError(f"@graph is {_kind(graph)}, not a list")
        return [{"properties": item} if isinstance(item, dict) else item for item in graph]
    if kind is None and _is_bare_properties(document):
        return [{"properties": document}]
    raise AlertParseError(
        f"JSON feed type is {str(kind)[:40]!r}; expected 'FeatureCollection' or 'Feature'"
    )


class _Fields:
    """Typed access to a properties object, with errors naming the property."""

    def __init__(self, props: Mapping[str, Any]) -> None:
        self.props = props

    def text(self, key: str) -> str:
        value = self.props.get(key)
        if value is None:
            return ""
        if not isinstance(value, str):
            raise AlertParseError(f"properties.{key} is {_kind(value)}, not a string")
        return value.strip()

    def required(self, key: str) -> str:
        value = self.text(key)
        if not value:
            raise AlertParseError(f"properties.{key} is missing or empty")
        return value

    def choice(self, key: str, allowed: frozenset[str], *, required: bool) -> str:
        value = self.required(key) if required else self.text(key)
        if value and value not in allowed:
            raise AlertParseError(
                f"properties.{key} is {value[:40]!r}; expected one of {', '.join(sorted(allowed))}"
            )
        return value

    def time(self, key: str) -> datetime | None:
        value = self.text(key)
        return parse_timestamp(value, f"properties.{key}") if value else None

    def mapping_pairs(self, key: str) -> tuple[tuple[str, str], ...]:
        """Flatten ``{"NAME": ["v1", "v2"]}`` into ``(("NAME", "v1"), ("NAME", "v2"))``."""
        mapping = self.props.get(key)
        if mapping is None:
            return ()
        if not isinstance(mapping, dict):
            raise AlertParseError(f"properties.{key} is {_kind(mapping)}, not an object")
        pairs = []
        for name, values in mapping.items():
            items = [values] if isinstance(values, str) else values
            if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
                raise AlertParseError(f"properties.{key}.{name} is not a list of strings")
            pairs.extend((name, value.strip()) for value in items)
        return tuple(pairs)

    def references(self) -> tuple[Reference, ...]:
        entries = self.props.get("references")
        if entries is None:
            return ()
        if not isinstance(entries, list):
            raise AlertParseError(f"properties.references is {_kind(entries)}, not a list")
        found = []
        for index, entry in enumerate(entries):
            where = f"properties.references[{index}]"
            if not isinstance(entry, dict):
                raise AlertParseError(f"{where} is {_kind(entry)}, not an object")
            fields = _Fields(entry)
            try:
                sender, identifier = fields.required("sender"), fields.required("identifier")
                sent = fields.time("sent")
            except AlertParseError as ex:
                raise AlertParseError(f"{where}: {ex}") from None
            if sent is None:
                raise AlertParseError(f"{where} has no sent time")
            found.append(Reference(sender, identifier, sent))
        return tuple(found)


def _polygons(geometry: Any) -> tuple[str, ...]:
    """Turn GeoJSON Polygon/MultiPolygon outer rings into CAP ``"lat,lon lat,lon"`` strings."""
    if geometry is None:
        return ()
    if not isinstance(geometry, dict):
        raise AlertParseError(f"geometry is {_kind(geometry)}, not an object")
    kind, coordinates = geometry.get("type"), geometry.get("coordinates")
    if kind == "Polygon":
        polygons = [coordinates]
    elif kind == "MultiPolygon" and isinstance(coordinates, list):
        polygons = coordinates
    else:
        raise AlertParseError(f"geometry type {str(kind)[:40]!r} is not a Polygon or MultiPolygon")
    return tuple(_ring(polygon) for polygon in polygons)


def _ring(polygon: Any) -> str:
    if not isinstance(polygon, list) or not polygon or not isinstance(polygon[0], list):
        raise AlertParseError("geometry polygon has no outer ring")
    points = []
    for point in polygon[0]:
        if (
            not isinstance(point, list)
            or len(point) < 2
            or not all(isinstance(n, int | float) and not isinstance(n, bool) for n in point[:2])
        ):
            raise AlertParseError(f"geometry point {str(point)[:40]} is not [longitude, latitude]")
        points.append(f"{point[1]},{point[0]}")
    return " ".join(points)


def _is_bare_properties(document: dict[str, Any]) -> bool:
    """Tell whether a typeless object is one alert's properties (the JSON-LD single alert)."""
    return document.get("@type") == "wx:Alert" or ("sent" in document and "messageType" in document)


def _sender_from_address(feature: dict[str, Any], props: dict[str, Any]) -> str:
    """Return the sender the feature's published address stands for; refuse when there is none."""
    for value in (props.get("@id"), feature.get("id"), props.get("id")):
        if not isinstance(value, str):
            continue
        try:
            parts = urlsplit(value.strip())
            host = (parts.hostname or "").rstrip(".")
        except ValueError:
            continue
        if parts.scheme.lower() not in ("http", "https") or not host:
            continue
        if host == AGENCY_DOMAIN or host.endswith("." + AGENCY_DOMAIN):
            return AGENCY_SENDER
        return host
    raise AlertParseError(
        "properties.sender is missing or empty, and neither properties.@id nor the feature id "
        "is an http(s) address whose host could stand for the sender"
    )


def _identifier_of(feature: Any) -> str:
    if isinstance(feature, dict):
        props = feature.get("properties", feature)
        if isinstance(props, dict) and isinstance(props.get("id"), str):
            return props["id"][:200]
    return ""


def _kind(value: Any) -> str:
    names = {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "an integer",
        float: "a number",
    }
    if value is None:
        return "null"
    return names.get(type(value), f"a {type(value).__name__}")
