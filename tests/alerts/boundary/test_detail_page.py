"""The alert page: description and instruction, areas drawn over the boundary, the VTEC chain."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
from sqlalchemy import Engine, select

from alertstation.alerts.boundary.geometry import parse_boundary
from alertstation.alerts.boundary.store import save_boundary
from alertstation.alerts.ingest import import_messages
from alertstation.alerts.tables import cap_alerts
from alertstation.db.engine import begin_write
from tests.support import StationHarness

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "alerts"
NEW_ID = "urn:oid:2.49.0.1.840.0.4c1a5f0e2b7d9a3c61e8f04b2d97a5c3e10b6f28.001.1"
CON_ID = "urn:oid:2.49.0.1.840.0.9d3e71b05a2c48f6e1d07c3b58a2e94f6c01d7b3.001.1"
OKLAHOMA_CITY = {
    "type": "Polygon",
    "coordinates": [[[-97.7, 35.3], [-97.3, 35.3], [-97.3, 35.7], [-97.7, 35.7], [-97.7, 35.3]]],
}


def _store(station: StationHarness, *names: str) -> dict[str, int]:
    for name in names:
        data = (FIXTURES / name).read_bytes()
        results = import_messages(station.engine, data, name, now=station.clock())
        assert all(r.outcome == "stored" for r in results), results
    with station.engine.connect() as conn:
        rows = conn.execute(select(cap_alerts.c.identifier, cap_alerts.c.id)).all()
    return {row.identifier: row.id for row in rows}


def test_detail_shows_texts_map_over_the_boundary_and_the_chain(
    station: StationHarness, engine: Engine
) -> None:
    ids = _store(station, "cap12_svr_new.xml", "cap12_svr_con.xml")
    with begin_write(engine) as conn:
        area = parse_boundary(orjson.dumps(OKLAHOMA_CITY))
        save_boundary(conn, "Oklahoma City", area, by="boss", now=station.clock())
    station.add_user("ops", "operator")
    ops = station.sign_in("ops")

    html = ops.request("GET", f"/alerts/{ids[NEW_ID]}").text
    description = re.search(r'<p id="alert-description"[^>]*>(.*?)</p>', html, re.S)
    assert description is not None and "Yukon" in description.group(1)
    assert 'id="alert-instruction"' in html
    assert "<svg" in html and html.count('class="map-boundary"') == 1
    assert html.count('class="map-alert map-polygon"') == 1  # the es and en copies drawn once
    assert "Oklahoma City" in html
    assert "Canadian, OK; Oklahoma, OK" in html
    # The chain links the continuation; this alert is marked, not linked.
    assert f'<a href="/alerts/{ids[CON_ID]}">CON · Severe Thunderstorm Warning</a>' in html
    assert f'href="/alerts/{ids[NEW_ID]}"' not in html
    assert "NEW · this alert" in html

    con = ops.request("GET", f"/alerts/{ids[CON_ID]}").text
    assert f'<a href="/alerts/{ids[NEW_ID]}">NEW · Severe Thunderstorm Warning</a>' in con


def test_without_a_boundary_the_areas_are_still_drawn(station: StationHarness) -> None:
    ids = _store(station, "cap12_svr_new.xml")
    station.add_user("ops", "operator")
    html = station.sign_in("ops").request("GET", f"/alerts/{ids[NEW_ID]}").text
    assert 'class="map-alert map-polygon"' in html and 'class="map-boundary"' not in html
    assert "Upload the station boundary" in html
