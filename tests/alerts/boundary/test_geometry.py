"""CAP polygons and circles, the GeoJSON boundary and the SVG picture, as pure functions."""

from __future__ import annotations

import re

import orjson
import pytest
from shapely.geometry import Point

from alertstation.alerts.boundary import geometry
from alertstation.alerts.boundary.geometry import (
    AlertShape,
    alert_shapes,
    boundary_geojson,
    cap_circle,
    cap_polygon,
    load_geojson,
    parse_boundary,
    svg_map,
)
from alertstation.alerts.boundary.repair import repair_in_child
from alertstation.alerts.model import Alert, AlertInfo, Area

BOX = "35.35,-97.95 35.62,-97.95 35.62,-97.33 35.35,-97.33 35.35,-97.95"
SQUARE = {
    "type": "Polygon",
    "coordinates": [[[-98.0, 35.0], [-97.0, 35.0], [-97.0, 36.0], [-98.0, 36.0], [-98.0, 35.0]]],
}


def test_cap_polygon_reads_lat_lon_pairs_as_lon_lat() -> None:
    polygon = cap_polygon(BOX)
    assert polygon.bounds == (-97.95, 35.35, -97.33, 35.62)
    assert polygon.contains(Point(-97.6, 35.5))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("35,-97 36,-97 35,-97", "at least four"),
        ("35,-97 36,-97 36,-96 35,-96", "first and last"),
        ("35;-97 36,-97 36,-96 35,-97", "not a lat,lon pair"),
        ("95,-97 36,-97 36,-96 95,-97", "outside"),
    ],
)
def test_cap_polygon_refuses_what_is_not_one(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        cap_polygon(text)


def test_cap_circle_covers_its_radius_and_no_more() -> None:
    circle = cap_circle("35.5,-97.5 10")
    km = 1 / 111.32
    assert circle.contains(Point(-97.5, 35.5 + 9 * km))
    assert not circle.contains(Point(-97.5, 35.5 + 11 * km))
    with pytest.raises(ValueError, match="radius"):
        cap_circle("35.5,-97.5 far")
    with pytest.raises(ValueError, match="lat,lon radius"):
        cap_circle("35.5,-97.5")


def test_alert_shapes_collects_every_area_once_and_reports_bad_ones() -> None:
    area = Area(desc="Canadian", polygons=(BOX, "1,2 3,4"), circles=("35.5,-97.5 5",))
    again = Area(desc="Canadian (es)", polygons=(BOX,))
    alert = Alert(
        identifier="x",
        sender="s",
        sent=None,  # type: ignore[arg-type]
        infos=(AlertInfo(areas=(area,)), AlertInfo(language="es-US", areas=(again,))),
    )
    shapes, problems = alert_shapes(alert)
    assert [(s.kind, s.area) for s in shapes] == [("polygon", "Canadian"), ("circle", "Canadian")]
    assert problems == ["polygon: 2 points; CAP needs at least four"]


def test_boundary_from_feature_collection_round_trips() -> None:
    document = {
        "type": "FeatureCollection",
        "features": [
            {"type": "Feature", "properties": {}, "geometry": SQUARE},
            {"type": "Feature", "properties": {}, "geometry": {**SQUARE, "type": "Polygon"}},
        ],
    }
    area = parse_boundary(orjson.dumps(document))
    assert area.bounds == (-98.0, 35.0, -97.0, 36.0)
    assert load_geojson(boundary_geojson(area)).equals(area)


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (b"not json", "not JSON"),
        (orjson.dumps({"type": "Point", "coordinates": [1, 2]}), "is not a Polygon"),
        (orjson.dumps({"type": "FeatureCollection", "features": []}), "no polygon"),
        (
            orjson.dumps(
                {"type": "Polygon", "coordinates": [[[500, 1], [501, 1], [501, 2], [500, 1]]]}
            ),
            "longitude, latitude",
        ),
        (orjson.dumps({"type": "Polygon", "coordinates": "x"}), "malformed"),
    ],
)
def test_boundary_errors_say_what_is_wrong(document: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_boundary(document)


def test_svg_draws_the_boundary_and_each_shape_inside_the_view() -> None:
    boundary = parse_boundary(orjson.dumps(SQUARE))
    shape = AlertShape("polygon", BOX, "Canadian <County>", cap_polygon(BOX))
    svg = svg_map(boundary, [shape], width=300, height=200, title="Map & more")
    assert svg.startswith("<svg") and 'class="map-boundary"' in svg
    assert svg.count('class="map-alert map-polygon"') == 1
    assert "Canadian &lt;County&gt;" in svg and "Map &amp; more" in svg
    numbers = [float(n) for n in re.findall(r"(-?\d+\.\d)", svg)]
    assert numbers and all(0 <= n <= 300 for n in numbers)
    assert svg_map(None, []) == ""


def _strips(count: int) -> bytes:
    """A MultiPolygon of ``count`` thin strips, half of them crossing the other half."""
    polygons = []
    for n in range(count):
        x = -98.0 + n * 0.001
        if n % 2:
            ring = [[x, 35.0], [x + 0.0005, 35.0], [x + 0.0005, 36.0], [x, 36.0], [x, 35.0]]
        else:
            ring = [[-98.0, 35.0 + x / 1000], [-96.0, 35.0 + x / 1000]]
            ring += [[-96.0, 35.0005 + x / 1000], [-98.0, 35.0005 + x / 1000], ring[0]]
        polygons.append([ring])
    return orjson.dumps({"type": "MultiPolygon", "coordinates": polygons})


def test_the_vertex_limit_is_checked_on_the_input_before_any_repair(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(geometry, "MAX_BOUNDARY_VERTICES", 100)
    repaired: list[bytes] = []

    def repair(data: bytes) -> object:
        repaired.append(data)
        raise AssertionError("never reached")

    with pytest.raises(ValueError, match="more than 100 vertices"):
        parse_boundary(_strips(21), repair=repair)  # type: ignore[arg-type]
    assert repaired == []
    assert parse_boundary(_strips(20)).is_valid


def test_the_repair_runs_in_a_child_with_limits() -> None:
    document = _strips(20)
    assert repair_in_child(document).equals(geometry.repaired_area(document))
    with pytest.raises(ValueError, match="no polygon"):
        repair_in_child(orjson.dumps({"type": "FeatureCollection", "features": []}))
    with pytest.raises(ValueError, match="took more than 1 s or 16 MiB"):
        repair_in_child(document, seconds=1, memory_bytes=16 * 1024 * 1024)
