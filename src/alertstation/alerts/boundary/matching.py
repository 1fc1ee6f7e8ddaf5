"""Why an alert matches the station: by code, by geometry, or both, and what that makes it.

A geometry match means one of the alert's CAP polygons or circles intersects the station
boundary. It is recorded always, keeps the alert stored, and counts as "in the broadcast area"
only when the setting ``match_polygons`` is on; a code match always counts.
"""

from __future__ import annotations

from dataclasses import dataclass

from alertstation.alerts.boundary.geometry import alert_shapes
from alertstation.alerts.boundary.store import Boundary
from alertstation.alerts.model import Alert


@dataclass(frozen=True, slots=True)
class AreaMatch:
    """The match reasons of one alert and the flags they give."""

    by_code: bool
    by_geometry: bool
    in_area: bool
    stored_area: bool


def touches_boundary(boundary: Boundary | None, alert: Alert) -> bool:
    """Tell whether any polygon or circle of the alert intersects the boundary."""
    if boundary is None:
        return False
    shapes, _problems = alert_shapes(alert)
    return bool(shapes) and boundary.touches(shapes)


def combine(
    *, by_code: bool, by_geometry: bool, in_storage: bool, match_polygons: bool
) -> AreaMatch:
    """Return the flags for the given reasons (the one rule ingest and re-matching share)."""
    in_area = by_code or (match_polygons and by_geometry)
    return AreaMatch(by_code, by_geometry, in_area, in_area or by_geometry or in_storage)
