"""The station boundary page and API: upload a GeoJSON area, preview it, clear it, recalculate.

Every change re-evaluates the stored alerts against the boundary in the same transaction and
writes ``config.updated`` (section ``boundary``) with the changed field names (the boundary
itself by name only; ``match_polygons`` with its old and new value).
"""

from __future__ import annotations

import os
from typing import Any

import falcon
from sqlalchemy import Connection, func, select

from alertstation.alerts.boundary.detail import parse_stored
from alertstation.alerts.boundary.geometry import (
    MAX_BOUNDARY_BYTES,
    AlertShape,
    alert_shapes,
    parse_boundary,
    svg_map,
)
from alertstation.alerts.boundary.repair import repair_in_child
from alertstation.alerts.boundary.service import (
    recalculate_intersections,
    remove_boundary,
    replace_boundary,
)
from alertstation.alerts.service import get_alert_settings, list_alerts, set_alert_settings
from alertstation.alerts.tables import cap_alerts
from alertstation.audit.actor import Actor
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.errors import BadRequest, Invalid, PayloadTooLarge
from alertstation.http.uploads import UploadTooLarge, one_file, read_limited, require_multipart

SECTION = "boundary"
PREVIEW_ALERTS = 50


def _read(part: Any) -> tuple[bytes, str]:
    try:
        data = read_limited(part.stream, MAX_BOUNDARY_BYTES)
    except UploadTooLarge:
        raise PayloadTooLarge(f"The file is larger than {MAX_BOUNDARY_BYTES} bytes.") from None
    base = os.path.basename((part.filename or "").replace("\\", "/"))
    name = "".join(ch for ch in base if ch.isprintable()).removesuffix(".geojson")
    return data, name.removesuffix(".json") or "boundary"


def _active_shapes(conn: Connection, now: Any) -> list[AlertShape]:
    """Return the drawn areas of the active alerts (newest first, at most PREVIEW_ALERTS)."""
    shapes: list[AlertShape] = []
    for row in list_alerts(conn, now=now)[:PREVIEW_ALERTS]:
        try:
            found, _problems = alert_shapes(parse_stored(row.raw, row.source))
        except ValueError:
            continue
        shapes.extend(found)
    return shapes


def boundary_state(conn: Connection, now: Any) -> dict[str, Any]:
    """Return the boundary's facts, the setting, match counts and the preview SVG."""
    settings = get_alert_settings(conn)
    boundary = settings.boundary
    a = cap_alerts.c
    geometry_matches = conn.execute(
        select(func.count()).select_from(cap_alerts).where(a.match_geometry.is_(True))
    ).scalar_one()
    shapes = _active_shapes(conn, now)
    title = f"Station boundary {boundary.name}" if boundary else "Active alert areas"
    return {
        "boundary": boundary,
        "match_polygons": settings.match_polygons,
        "geometry_matches": geometry_matches,
        "active_shapes": len(shapes),
        "svg": svg_map(boundary.area if boundary else None, shapes, title=title),
    }


def _describe(state: dict[str, Any]) -> dict[str, Any]:
    boundary = state["boundary"]
    return {
        "boundary": None
        if boundary is None
        else {
            "name": boundary.name,
            "vertices": boundary.vertex_count,
            "bounds": list(boundary.area.bounds),
            "uploaded_by": boundary.uploaded_by,
            "uploaded_at": boundary.uploaded_at.isoformat(),
        },
        "match_polygons": state["match_polygons"],
        "geometry_matches": state["geometry_matches"],
    }


class BoundaryPage:
    """GET /admin/boundary: the boundary, its preview with the active alerts, the setting."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        with self._station.engine.connect() as conn:
            state = boundary_state(conn, self._station.clock())
        self._station.templates.page(req, resp, "boundary.html", **state)


class BoundaryPreview:
    """GET /admin/boundary/preview.svg: the boundary and active alert areas as an SVG image."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        with self._station.engine.connect() as conn:
            state = boundary_state(conn, self._station.clock())
        resp.content_type = "image/svg+xml"
        resp.set_header("Cache-Control", "no-store")
        resp.text = state["svg"] or (
            '<svg xmlns="http://www.w3.org/2000/svg" width="640" height="40">'
            '<text x="10" y="25">No boundary and no alert areas to draw.</text></svg>'
        )


class BoundaryApi:
    """GET, POST (multipart GeoJSON) and DELETE /api/boundary; PUT sets match_polygons."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        with self._station.engine.connect() as conn:
            resp.media = _describe(boundary_state(conn, self._station.clock()))

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        require_multipart(req)
        data, name = one_file(req, _read)
        try:
            area = parse_boundary(data, repair=repair_in_child)
        except ValueError as ex:
            raise Invalid(str(ex), code="invalid_boundary") from None
        actor = Actor.from_request(req)
        station = self._station
        with begin_write(station.engine) as conn:
            done = replace_boundary(conn, name, area, by=actor.username, now=station.clock())
            station.ledger.record_config_update(conn, actor, SECTION, ["boundary"])
        resp.status = falcon.HTTP_201
        resp.media = {"recalculated": done.as_dict(), "name": name[:200]}

    def on_delete(self, req: falcon.Request, resp: falcon.Response) -> None:
        station = self._station
        with begin_write(station.engine) as conn:
            done = remove_boundary(conn)
            if done is not None:
                station.ledger.record_config_update(
                    conn, Actor.from_request(req), SECTION, ["boundary"]
                )
        resp.media = {"cleared": done is not None, "recalculated": done.as_dict() if done else None}

    def on_put(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = req.get_media(default_when_empty=None)
        if not isinstance(body, dict) or set(body) != {"match_polygons"}:
            raise BadRequest('Send {"match_polygons": true} or {"match_polygons": false}.')
        value = body["match_polygons"]
        if not isinstance(value, bool):
            raise Invalid("match_polygons must be true or false", code="invalid_setting")
        station = self._station
        with begin_write(station.engine) as conn:
            before = get_alert_settings(conn).match_polygons
            set_alert_settings(conn, match_polygons=value)
            changed = ["match_polygons"] if before != value else []
            station.ledger.record_config_update(
                conn,
                Actor.from_request(req),
                SECTION,
                changed,
                before={"match_polygons": before},
                after={"match_polygons": value},
            )
        resp.media = {"match_polygons": value, "changed": changed}


class BoundaryRecalculation:
    """POST /api/boundary/recalculate: re-evaluate every stored alert against the boundary."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        with begin_write(self._station.engine) as conn:
            done = recalculate_intersections(conn)
        resp.media = done.as_dict()
