"""Alerts matched by geometry against the station boundary: reasons, in-area, banner, forward.

The sample warning names Canadian and Oklahoma counties (SAME 040017, 040109) and draws a
polygon around 35.35-35.62 N, 97.95-97.33 W. The station here is configured for a Texas county,
so only geometry can match it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from sqlalchemy import Connection, Engine, select

from alertstation.alerts.boundary.geometry import parse_boundary
from alertstation.alerts.boundary.service import (
    recalculate_intersections,
    remove_boundary,
    replace_boundary,
)
from alertstation.alerts.ingest import import_messages
from alertstation.alerts.service import get_alert_settings, set_alert_settings
from alertstation.alerts.tables import cap_alerts, eas_forward_queue
from alertstation.db.engine import begin_write
from tests.support import StationHarness

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "alerts"
NEW = "cap12_svr_new.xml"


def _square(west: float, south: float, east: float, north: float) -> Any:
    ring = [[west, south], [east, south], [east, north], [west, north], [west, south]]
    return parse_boundary(orjson.dumps({"type": "Polygon", "coordinates": [ring]}))


TOUCHING = _square(-97.7, 35.3, -97.3, 35.7)  # Oklahoma City: overlaps the warning polygon
ELSEWHERE = _square(-100.0, 30.0, -99.0, 31.0)  # Texas Hill Country: far from it


@pytest.fixture(autouse=True)
def noon_today(station: StationHarness) -> None:
    station.clock.now = station.clock.now.replace(hour=12, minute=0, second=0)


def message(station: StationHarness, tag: str = "") -> bytes:
    """The sample warning moved to today (so it is active at noon) with its own identifier."""
    day = station.clock().date().isoformat()
    data = (FIXTURES / NEW).read_bytes().replace(b"2025-05-14", day.encode())
    data = data.replace(b"250514T", (day[2:4] + day[5:7] + day[8:10] + "T").encode())
    return data.replace(b".001.1", tag.encode()) if tag else data


def configure(
    engine: Engine, station: StationHarness, *, boundary: Any, match_polygons: bool, **codes: Any
) -> None:
    with begin_write(engine) as conn:
        set_alert_settings(
            conn,
            zone_codes=codes.get("zone_codes", ["048001"]),
            storage_zone_codes=[],
            forward_events=["SVR"],
            match_polygons=match_polygons,
        )
        if boundary is not None:
            replace_boundary(conn, "Station area", boundary, by="boss", now=station.clock())


def ingest(station: StationHarness, tag: str = "") -> list[Any]:
    return import_messages(
        station.engine, message(station, tag), NEW, explicit=False, now=station.clock()
    )


def flags(conn: Connection) -> list[tuple[bool, bool, bool, bool]]:
    a = cap_alerts.c
    rows = conn.execute(
        select(a.in_area, a.stored_area, a.match_code, a.match_geometry).order_by(a.id)
    )
    return [tuple(bool(v) for v in row) for row in rows]  # type: ignore[misc]


def queued(conn: Connection) -> int:
    return len(conn.execute(select(eas_forward_queue.c.id)).all())


def test_without_a_boundary_an_alert_outside_the_codes_is_ignored(
    station: StationHarness, engine: Engine
) -> None:
    configure(engine, station, boundary=None, match_polygons=True)
    (result,) = ingest(station)
    assert result.outcome == "ignored"


def test_a_geometry_only_match_is_stored_but_not_in_area_by_default(
    station: StationHarness, engine: Engine
) -> None:
    configure(engine, station, boundary=TOUCHING, match_polygons=False)
    (result,) = ingest(station)
    assert result.outcome == "stored" and not result.in_area
    with engine.connect() as conn:
        assert flags(conn) == [(False, True, False, True)]
        assert queued(conn) == 0
    state = station.app.station.broadcast.state()
    assert state["active_alerts"] == 1 and state["in_area_alerts"] == 0 and not state["active"]


def test_with_match_polygons_a_geometry_match_is_in_area_for_banner_and_forward(
    station: StationHarness, engine: Engine
) -> None:
    configure(engine, station, boundary=TOUCHING, match_polygons=True)
    (result,) = ingest(station)
    assert result.outcome == "stored" and result.in_area and result.queued
    with engine.connect() as conn:
        assert flags(conn) == [(True, True, False, True)]
        assert queued(conn) == 1
    state = station.app.station.broadcast.state()
    assert state["in_area_alerts"] == 1 and state["active"]


def test_a_boundary_elsewhere_matches_nothing(station: StationHarness, engine: Engine) -> None:
    configure(engine, station, boundary=ELSEWHERE, match_polygons=True)
    (result,) = ingest(station)
    assert result.outcome == "ignored"


def test_code_and_geometry_are_both_recorded(station: StationHarness, engine: Engine) -> None:
    configure(engine, station, boundary=TOUCHING, match_polygons=False, zone_codes=["040109"])
    (result,) = ingest(station)
    assert result.in_area
    with engine.connect() as conn:
        assert flags(conn) == [(True, True, True, True)]


def test_turning_match_polygons_on_and_off_rematches_the_store(
    station: StationHarness, engine: Engine
) -> None:
    configure(engine, station, boundary=TOUCHING, match_polygons=False)
    ingest(station)
    with begin_write(engine) as conn:
        set_alert_settings(conn, match_polygons=True)
        assert get_alert_settings(conn).match_polygons
        assert flags(conn) == [(True, True, False, True)]
        set_alert_settings(conn, match_polygons=False)
        assert flags(conn) == [(False, True, False, True)]


def test_uploading_and_clearing_the_boundary_re_evaluates_stored_alerts(
    station: StationHarness, engine: Engine
) -> None:
    configure(engine, station, boundary=None, match_polygons=True)
    results = import_messages(engine, message(station), NEW, explicit=True, now=station.clock())
    assert results[0].outcome == "stored" and not results[0].in_area
    with begin_write(engine) as conn:
        done = replace_boundary(conn, "Station area", TOUCHING, by="boss", now=station.clock())
        assert done.as_dict() == {
            "alerts": 1,
            "geometry_matches": 1,
            "geometry_changed": 1,
            "flags_changed": 1,
            "unreadable": 0,
        }
        assert flags(conn) == [(True, True, False, True)]
        moved = replace_boundary(conn, "Elsewhere", ELSEWHERE, by="boss", now=station.clock())
        assert moved.geometry_changed == 1 and flags(conn)[0][3] is False
        replace_boundary(conn, "Station area", TOUCHING, by="boss", now=station.clock())
        cleared = remove_boundary(conn)
        assert cleared is not None and cleared.geometry_changed == 1
        assert flags(conn) == [(False, False, False, False)]
        assert remove_boundary(conn) is None
        assert recalculate_intersections(conn).geometry_matches == 0


def test_the_alert_page_shows_why_it_matched(station: StationHarness, engine: Engine) -> None:
    configure(engine, station, boundary=TOUCHING, match_polygons=False)
    (result,) = ingest(station)
    station.add_user("ops", "operator")
    ops = station.sign_in("ops")

    def reason() -> str:
        html = ops.request("GET", f"/alerts/{result.alert_id}").text
        found = re.search(r'<dd id="alert-match">(.*?)</dd>', html, re.S)
        assert found is not None
        return " ".join(found.group(1).split())

    assert reason() == (
        "out of area (a drawn area touches the station boundary, but geometry-only matches "
        "count only when polygon matching is on)"
    )
    with begin_write(engine) as conn:
        set_alert_settings(conn, match_polygons=True)
    assert reason() == "in area (by geometry: a drawn area touches the station boundary)"
    with begin_write(engine) as conn:
        set_alert_settings(conn, zone_codes=["040109"])
    assert reason() == "in area (by code and by geometry)"
