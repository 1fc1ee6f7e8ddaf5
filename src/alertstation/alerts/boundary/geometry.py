"""Shapes: CAP ``<polygon>`` and ``<circle>`` areas, the GeoJSON boundary, and their SVG picture.

Coordinates are WGS 84 longitude and latitude in degrees; CAP writes ``lat,lon`` pairs, GeoJSON
``[lon, lat]``. A circle (``"lat,lon radius_km"``) becomes a 64-sided polygon on a local
equirectangular approximation, which is plenty for deciding whether it touches an area.
Everything here is pure: no database, no clock.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson
from markupsafe import escape

from alertstation import lazy
from alertstation.alerts.model import Alert

if TYPE_CHECKING:
    from shapely.geometry import Polygon
    from shapely.geometry.base import BaseGeometry

shapely = lazy.module("shapely")
shapely_geometry = lazy.module("shapely.geometry")
shapely_ops = lazy.module("shapely.ops")

KM_PER_DEGREE = 111.32
CIRCLE_SIDES = 64
MAX_BOUNDARY_BYTES = 5 * 1024 * 1024
MAX_BOUNDARY_VERTICES = 200_000
MAX_CAP_POINTS = 10_000


@dataclass(frozen=True)
class AlertShape:
    """One drawn area of an alert: ``polygon`` or ``circle``, its CAP text and its geometry."""

    kind: str
    text: str
    area: str
    geometry: Polygon


def _point(pair: str, what: str) -> tuple[float, float]:
    """Return (lon, lat) of a CAP ``lat,lon`` pair; ValueError when it is not one."""
    parts = pair.split(",")
    if len(parts) != 2:
        raise ValueError(f"{what}: {pair[:40]!r} is not a lat,lon pair")
    try:
        lat, lon = float(parts[0]), float(parts[1])
    except ValueError:
        raise ValueError(f"{what}: {pair[:40]!r} is not a lat,lon pair") from None
    if not (-90 <= lat <= 90 and -180 <= lon <= 180):
        raise ValueError(f"{what}: {pair[:40]!r} is outside -90..90, -180..180")
    return lon, lat


def cap_polygon(text: str) -> Polygon:
    """Return the polygon of a CAP ``<polygon>`` (four or more pairs, first equals last)."""
    pairs = text.split()
    if len(pairs) > MAX_CAP_POINTS:
        raise ValueError(f"polygon: more than {MAX_CAP_POINTS} points")
    points = [_point(pair, "polygon") for pair in pairs]
    if len(points) < 4:
        raise ValueError(f"polygon: {len(points)} points; CAP needs at least four")
    if points[0] != points[-1]:
        raise ValueError("polygon: the first and last points differ; CAP polygons are closed")
    polygon = shapely_geometry.Polygon(points)
    return polygon if polygon.is_valid else _polygonal(shapely.make_valid(polygon))


def cap_circle(text: str) -> Polygon:
    """Return a polygon approximating a CAP ``<circle>`` (``lat,lon radius_km``)."""
    parts = text.split()
    if len(parts) != 2:
        raise ValueError(f"circle: {text[:40]!r} is not 'lat,lon radius'")
    lon, lat = _point(parts[0], "circle")
    try:
        radius = float(parts[1])
    except ValueError:
        raise ValueError(f"circle: radius {parts[1][:20]!r} is not a number") from None
    if not 0 <= radius <= 20_000:
        raise ValueError(f"circle: radius {radius} km is outside 0..20000")
    radius = max(radius, 0.01)  # a point: a circle of 10 m still intersects what holds it
    dlat = radius / KM_PER_DEGREE
    dlon = radius / (KM_PER_DEGREE * max(math.cos(math.radians(lat)), 0.01))
    return shapely_geometry.Polygon(
        (
            lon + dlon * math.cos(2 * math.pi * step / CIRCLE_SIDES),
            max(-90.0, min(90.0, lat + dlat * math.sin(2 * math.pi * step / CIRCLE_SIDES))),
        )
        for step in range(CIRCLE_SIDES)
    )


def _polygonal(geometry: BaseGeometry) -> Polygon:
    """Return the largest polygon of a repaired geometry (make_valid may add lines or points)."""
    members = (
        [geometry]
        if isinstance(geometry, shapely_geometry.Polygon)
        else getattr(geometry, "geoms", [])
    )
    parts = [
        polygon
        for member in members
        for polygon in (
            member.geoms if isinstance(member, shapely_geometry.MultiPolygon) else [member]
        )
        if isinstance(polygon, shapely_geometry.Polygon) and not polygon.is_empty
    ]
    if not parts:
        raise ValueError("polygon: it encloses no area")
    return max(parts, key=lambda p: p.area)


def alert_shapes(alert: Alert) -> tuple[list[AlertShape], list[str]]:
    """Return every polygon and circle of every info block's areas, and the ones refused.

    Shapes that repeat (the same text in another language's block) are kept once.
    """
    shapes: list[AlertShape] = []
    problems: list[str] = []
    seen: set[tuple[str, str]] = set()
    infos = alert.infos or ()
    areas = [area for info in infos for area in info.areas]
    for area in areas:
        for kind, texts, build in (
            ("polygon", area.polygons, cap_polygon),
            ("circle", area.circles, cap_circle),
        ):
            for text in texts:
                key = (kind, " ".join(text.split()))
                if key in seen:
                    continue
                seen.add(key)
                try:
                    shapes.append(AlertShape(kind, key[1], area.desc, build(text)))
                except ValueError as ex:
                    problems.append(str(ex))
    if not areas:  # an alert built without info blocks (the JSON feed keeps polygons flat)
        for text in alert.polygons:
            try:
                shapes.append(AlertShape("polygon", text, alert.area_desc, cap_polygon(text)))
            except ValueError as ex:
                problems.append(str(ex))
    return shapes, problems


def _geometries(document: Any) -> Iterable[Any]:
    kind = document.get("type") if isinstance(document, dict) else None
    if kind == "FeatureCollection":
        features = document.get("features")
        if not isinstance(features, list):
            raise ValueError("boundary: a FeatureCollection needs a list of features")
        for feature in features:
            yield from _geometries(feature)
    elif kind == "Feature":
        if not isinstance(document.get("geometry"), dict):
            raise ValueError("boundary: a Feature without a geometry")
        yield document["geometry"]
    elif kind in ("Polygon", "MultiPolygon"):
        yield document
    elif kind == "GeometryCollection":
        for geometry in document.get("geometries") or []:
            yield from _geometries(geometry)
    else:
        raise ValueError(
            f"boundary: {str(kind)[:30]!r} is not a Polygon, MultiPolygon, Feature or "
            "FeatureCollection"
        )


def vertex_count(geometry: BaseGeometry) -> int:
    polygons = geometry.geoms if isinstance(geometry, shapely_geometry.MultiPolygon) else [geometry]
    return sum(
        len(p.exterior.coords) + sum(len(r.coords) for r in p.interiors)
        for p in polygons
        if isinstance(p, shapely_geometry.Polygon)
    )


def _raw_vertices(geometry: Any) -> int:
    """Count the positions of a Polygon or MultiPolygon as sent, before any shape is built."""
    coordinates = geometry.get("coordinates") if isinstance(geometry, dict) else None
    if not isinstance(coordinates, list):
        return 0
    polygons = coordinates if geometry.get("type") == "MultiPolygon" else [coordinates]
    return sum(
        len(ring)
        for polygon in polygons
        if isinstance(polygon, list)
        for ring in polygon
        if isinstance(ring, list)
    )


def check_boundary_input(data: bytes) -> None:
    """Refuse a boundary document before any shape is built or repaired: its size, that it is
    GeoJSON of polygons, and its vertex count as sent (``MAX_BOUNDARY_VERTICES``), so no upload
    reaches ``make_valid`` or ``unary_union`` with more than the limit."""
    if len(data) > MAX_BOUNDARY_BYTES:
        raise ValueError(f"boundary: the file is larger than {MAX_BOUNDARY_BYTES} bytes")
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as ex:
        raise ValueError(f"boundary: not JSON ({ex})") from None
    vertices = 0
    for geometry in _geometries(document):
        vertices += _raw_vertices(geometry)
        if vertices > MAX_BOUNDARY_VERTICES:
            raise ValueError(f"boundary: more than {MAX_BOUNDARY_VERTICES} vertices; simplify it")


def repaired_area(data: bytes) -> BaseGeometry:
    """Build the shapes of a checked boundary document, repair them (``make_valid``) and join
    them (``unary_union``); ValueError when a shape is malformed or none encloses an area.

    The repair can cost far more than the input's size suggests (crossing strips), so the web
    tier runs it in a child process with limits (``alerts.boundary.repair``)."""
    document = orjson.loads(data)
    parts = []
    for geometry in _geometries(document):
        try:
            built = shapely_geometry.shape(geometry)
        except (ValueError, TypeError, AttributeError, IndexError) as ex:
            raise ValueError(f"boundary: a {geometry.get('type')} is malformed ({ex})") from None
        if not built.is_valid:
            built = shapely.make_valid(built)
        parts.append(built)
    if not parts:
        raise ValueError("boundary: the document holds no polygon")
    area = shapely_ops.unary_union(parts)
    polygons = [
        g
        for g in getattr(area, "geoms", [area])
        if isinstance(g, shapely_geometry.Polygon) and not g.is_empty
    ]
    if not polygons:
        raise ValueError("boundary: the document's shapes enclose no area")
    return polygons[0] if len(polygons) == 1 else shapely_geometry.MultiPolygon(polygons)


def parse_boundary(
    data: bytes, *, repair: Callable[[bytes], BaseGeometry] = repaired_area
) -> BaseGeometry:
    """Return the polygonal area of a GeoJSON document; ValueError saying what is wrong.

    The input is checked first (``check_boundary_input``); ``repair`` builds and repairs the
    shapes (in this process by default; the web tier passes ``repair.repair_in_child``)."""
    check_boundary_input(data)
    area = repair(data)
    min_lon, min_lat, max_lon, max_lat = area.bounds
    if min_lon < -180 or max_lon > 180 or min_lat < -90 or max_lat > 90:
        raise ValueError("boundary: coordinates must be longitude, latitude in degrees (WGS 84)")
    if vertex_count(area) > MAX_BOUNDARY_VERTICES:
        raise ValueError(f"boundary: more than {MAX_BOUNDARY_VERTICES} vertices; simplify it")
    return area


def boundary_geojson(area: BaseGeometry) -> str:
    """Return the area as a GeoJSON geometry string (what the station stores)."""
    return orjson.dumps(shapely_geometry.mapping(area)).decode()


def load_geojson(text: str) -> BaseGeometry:
    """Return the stored area (written by ``boundary_geojson``)."""
    return shapely_geometry.shape(orjson.loads(text))


# --- SVG ----------------------------------------------------------------------------------


def _rings(geometry: BaseGeometry) -> Iterable[Sequence[tuple[float, float]]]:
    polygons = geometry.geoms if isinstance(geometry, shapely_geometry.MultiPolygon) else [geometry]
    for polygon in polygons:
        if isinstance(polygon, shapely_geometry.Polygon) and not polygon.is_empty:
            yield list(polygon.exterior.coords)
            for interior in polygon.interiors:
                yield list(interior.coords)


def svg_map(
    boundary: BaseGeometry | None,
    shapes: Sequence[AlertShape],
    *,
    width: int = 640,
    height: int = 400,
    title: str = "Map",
) -> str:
    """Draw the boundary and the alert shapes as an SVG (no tiles): north up, lon scaled by lat.

    Returns "" when there is nothing to draw.
    """
    geometries = [s.geometry for s in shapes] + ([boundary] if boundary is not None else [])
    if not geometries:
        return ""
    min_lon, min_lat, max_lon, max_lat = shapely_ops.unary_union(geometries).bounds
    scale_x = math.cos(math.radians((min_lat + max_lat) / 2)) or 1.0
    span_x = max((max_lon - min_lon) * scale_x, 1e-6)
    span_y = max(max_lat - min_lat, 1e-6)
    pad = 12
    factor = min((width - 2 * pad) / span_x, (height - 2 * pad) / span_y)

    def path(geometry: BaseGeometry) -> str:
        commands = []
        for ring in _rings(geometry):
            points = [
                (pad + (lon - min_lon) * scale_x * factor, pad + (max_lat - lat) * factor)
                for lon, lat in ring
            ]
            commands.append("M" + " L".join(f"{x:.1f},{y:.1f}" for x, y in points) + " Z")
        return " ".join(commands)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="area-map" viewBox="0 0 {width} {height}"'
        f' width="{width}" height="{height}" role="img" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
        f'<rect x="0" y="0" width="{width}" height="{height}" class="map-sea"/>',
    ]
    if boundary is not None:
        parts.append(f'<path class="map-boundary" fill-rule="evenodd" d="{path(boundary)}"/>')
    for index, item in enumerate(shapes):
        parts.append(
            f'<path class="map-alert map-{item.kind}" data-shape="{index}" fill-rule="evenodd"'
            f' d="{path(item.geometry)}"><title>{escape(item.area or item.kind)}</title></path>'
        )
    parts.append("</svg>")
    return "".join(parts)
