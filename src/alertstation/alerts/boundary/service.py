"""Boundary changes and intersection recalculation over the stored alerts.

if TYPE_CHECKING:
    from shapely.geometry.base import BaseGeometry

Uploading or clearing the boundary, and the explicit recalculation, re-evaluate every stored
alert: each stored message is parsed again, its polygons and circles are tested against the
boundary (``match_geometry``), then the whole store is re-matched so ``in_area`` and
``stored_area`` follow (``rematch_store``: a geometry-only match counts with ``match_polygons``).
All in the caller's transaction.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

import orjson
from sqlalchemy import Connection, bindparam, select, update

from alertstation.alerts.boundary.detail import parse_stored
from alertstation.alerts.boundary.matching import touches_boundary
from alertstation.alerts.boundary.store import clear_boundary, save_boundary
from alertstation.alerts.service import get_alert_settings, rematch_store
from alertstation.alerts.store import GENERATION
from alertstation.alerts.tables import cap_alerts
from alertstation.db import bump_generation

if TYPE_CHECKING:
    from shapely.geometry.base import BaseGeometry

log = logging.getLogger(__name__)
_A = cap_alerts.c


@dataclass(frozen=True)
class Recalculation:
    """What a recalculation looked at and changed."""

    alerts: int
    geometry_matches: int
    geometry_changed: int
    flags_changed: int
    unreadable: int

    def as_dict(self) -> dict[str, int]:
        """Return the counts as JSON-ready data."""
        return {
            "alerts": self.alerts,
            "geometry_matches": self.geometry_matches,
            "geometry_changed": self.geometry_changed,
            "flags_changed": self.flags_changed,
            "unreadable": self.unreadable,
        }


def recalculate_intersections(conn: Connection) -> Recalculation:
    """Test every stored alert's shapes against the boundary and re-match the store."""
    settings = get_alert_settings(conn)
    boundary = settings.boundary
    rows = conn.execute(select(_A.id, _A.raw, _A.source, _A.match_geometry).order_by(_A.id))
    changes = []
    matches = unreadable = total = 0
    for row in rows:
        total += 1
        hit = False
        if boundary is not None:
            try:
                hit = touches_boundary(boundary, parse_stored(row.raw, row.source))
            except (ValueError, orjson.JSONDecodeError):
                unreadable += 1
        matches += hit
        if hit != bool(row.match_geometry):
            changes.append({"b_id": row.id, "match_geometry": hit})
    if changes:
        conn.execute(update(cap_alerts).where(_A.id == bindparam("b_id")), changes)
        bump_generation(conn, GENERATION)
    matchers = settings.matchers()
    flags = rematch_store(
        conn, matchers.area, matchers.storage, match_polygons=settings.match_polygons
    )
    if unreadable:
        log.warning("intersection recalculation: %d stored alerts could not be parsed", unreadable)
    return Recalculation(total, matches, len(changes), flags, unreadable)


def replace_boundary(
    conn: Connection, name: str, area: BaseGeometry, *, by: str | None, now: datetime
) -> Recalculation:
    """Store a new boundary and re-evaluate the stored alerts against it."""
    save_boundary(conn, name, area, by=by, now=now)
    return recalculate_intersections(conn)


def remove_boundary(conn: Connection) -> Recalculation | None:
    """Clear the boundary and re-evaluate the stored alerts; None when there was none."""
    if not clear_boundary(conn):
        return None
    return recalculate_intersections(conn)
