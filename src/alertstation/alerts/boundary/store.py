"""Read, save and clear the station boundary (one row); the parsed area is cached per upload."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, select

from alertstation import lazy
from alertstation.alerts.boundary.geometry import (
    AlertShape,
    boundary_geojson,
    load_geojson,
    vertex_count,
)
from alertstation.alerts.boundary.tables import BOUNDARY_ROW, NAME_WIDTH, station_boundary
from alertstation.db import bump_generation

if TYPE_CHECKING:
    from shapely.geometry.base import BaseGeometry
    from shapely.prepared import PreparedGeometry

prepared = lazy.module("shapely.prepared")

#: Moves with every upload and clear; an upload's revision is the value it moved to.
GENERATION = "boundary"


@dataclass(frozen=True, eq=False)
class Boundary:
    """The station's area as uploaded: name, geometry and who uploaded it when.

    Compared and hashed by identity: ``load_boundary`` hands out one object per upload, so
    settings (and the matchers cached for them) change exactly when the boundary does.
    """

    name: str
    area: BaseGeometry
    prepared: PreparedGeometry
    vertex_count: int
    uploaded_by: str | None
    uploaded_at: datetime

    def touches(self, shapes: list[AlertShape]) -> bool:
        """Tell whether any of the alert's shapes intersects the boundary."""
        return any(self.prepared.intersects(item.geometry) for item in shapes)


_cache_lock = threading.Lock()
_cache: dict[tuple[Any, ...], Boundary] = {}
_B = station_boundary.c
# What identifies an upload without reading its text: the revision alone would do on one
# database, but a process may see another database (a restore, a test) reuse a revision.
_KEY = (_B.revision, _B.uploaded_at, _B.name, _B.vertex_count, _B.min_lon, _B.min_lat,
        _B.max_lon, _B.max_lat)  # fmt: skip


def load_boundary(conn: Connection) -> Boundary | None:
    """Return the station boundary, None when none was uploaded.

    Only the upload's key columns are read while its parsed area is held; the stored text is
    read and parsed once per upload.
    """
    found = conn.execute(select(*_KEY).where(_B.id == BOUNDARY_ROW)).first()
    if found is None:
        return None
    key = tuple(found)
    with _cache_lock:
        cached = _cache.get(key)
    if cached is not None:
        return cached
    row = conn.execute(select(station_boundary).where(_B.id == BOUNDARY_ROW)).first()
    if row is None:
        return None
    key = tuple(getattr(row, column.name) for column in _KEY)  # what was read, if it moved
    area = load_geojson(row.geojson)
    boundary = Boundary(
        row.name, area, prepared.prep(area), row.vertex_count, row.uploaded_by, row.uploaded_at
    )
    with _cache_lock:
        _cache.clear()  # one station, one boundary: keep only the newest
        _cache[key] = boundary
    return boundary


def save_boundary(
    conn: Connection, name: str, area: BaseGeometry, *, by: str | None, now: datetime
) -> None:
    """Store ``area`` as the station boundary, replacing any earlier one."""
    name = " ".join(name.split())[:NAME_WIDTH] or "boundary"
    min_lon, min_lat, max_lon, max_lat = area.bounds
    values = {
        "name": name,
        "geojson": boundary_geojson(area),
        "vertex_count": vertex_count(area),
        "min_lon": min_lon,
        "min_lat": min_lat,
        "max_lon": max_lon,
        "max_lat": max_lat,
        "uploaded_by": by,
        "uploaded_at": now,
    }
    values["revision"] = bump_generation(conn, GENERATION)  # never reused, even after a clear
    done = conn.execute(
        station_boundary.update().where(_B.id == BOUNDARY_ROW).values(values)
    ).rowcount
    if not done:
        conn.execute(station_boundary.insert().values(id=BOUNDARY_ROW, **values))


def clear_boundary(conn: Connection) -> bool:
    """Remove the station boundary; tell whether there was one."""
    cleared = conn.execute(station_boundary.delete().where(_B.id == BOUNDARY_ROW)).rowcount
    if cleared:
        bump_generation(conn, GENERATION)
    return bool(cleared)
