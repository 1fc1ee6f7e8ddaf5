"""The alert area rule over HTTP: saves, GET /api/alerts/area/check, the picker's counties."""

from __future__ import annotations

from alertstation.alerts.ingest import import_messages
from alertstation.alerts.service import set_alert_settings
from alertstation.db.engine import begin_write
from alertstation.zones.tables import county_fips, county_subdivisions
from tests.alerts.test_routes import NEW, alert_id, fixture, today
from tests.alerts.test_settings_routes import LOCATION, add_zone, operator, settings_of
from tests.support import StationHarness as Station

CHECK = "/api/alerts/area/check"


def add_counties(station: Station) -> None:
    """Put Putnam and Allen, OH and Grady, OK (with a part of Putnam) in the county tables."""
    with begin_write(station.engine) as conn:
        for fips, state, name in (("39137", "OH", "Putnam"), ("39003", "OH", "Allen")):
            conn.execute(
                county_fips.insert().values(
                    fips=fips, state_code=state, county_name=name, cwa="IWX", time_zone="E",
                    fe_area="",
                )
            )  # fmt: skip
        conn.execute(
            county_subdivisions.insert().values(
                same_code="139137", county_fips="39137", part=1, name="Northwest Putnam"
            )
        )
    station.app.station.zones.clear()


def test_location_saves_ugc_county_and_same_codes(station: Station) -> None:
    ops = operator(station)
    result = ops.request("POST", LOCATION, json={"zone_codes": "ohc137, 139137 VA057 000000"})
    assert result.status_code == 200, result.text
    assert result.json["saved"] == {"zone_codes": ["OHC137", "139137", "VAZ057", "000000"]}
    assert settings_of(station).zone_codes == ("OHC137", "139137", "VAZ057", "000000")
    bad = ops.request("POST", LOCATION, json={"zone_codes": "OHX137, 39137"})
    assert bad.status_code == 422
    assert bad.json["error"]["details"]["invalid"] == ["OHX137", "39137"]
    assert "UGC county codes such as OHC137" in bad.json["error"]["message"]


def test_check_uses_the_save_rule_and_names_the_codes(station: Station) -> None:
    add_counties(station)
    add_zone(station, "OHZ016", "Putnam")
    ops = operator(station)
    text = "OHZ016, ohc137 139137 039003 OHC999 VA05X 39137"
    result = ops.request("GET", CHECK, params={"codes": text}, csrf=False)
    assert result.status_code == 200, result.text
    assert result.json == {
        "valid": ["OHZ016", "OHC137", "139137", "039003", "OHC999"],
        "invalid": ["VA05X", "39137"],
        "known": [
            {"code": "OHZ016", "name": "Putnam"},
            {"code": "OHC137", "name": "Putnam, OH"},
            {"code": "139137", "name": "Northwest Putnam (part of Putnam, OH)"},
            {"code": "039003", "name": "Allen, OH"},
        ],
        "unknown": ["OHC999"],
        "counties": 4,
        "zones": 1,
        "zones_without_counties": False,
    }
    zones_only = ops.request("GET", CHECK, params={"codes": "OHZ016 VAZ057"}, csrf=False)
    assert zones_only.json["zones_without_counties"] is True
    # /api/zones/validate keeps its zone-only rule.
    zone_rule = ops.request("GET", "/api/zones/validate", params={"codes": "OHC137"}, csrf=False)
    assert zone_rule.json["invalid"] == ["OHC137"]


def test_check_needs_view_config(station: Station) -> None:
    assert station.client.simulate_get(CHECK, params={"codes": "OHC137"}).status_code == 401


def test_picker_offers_counties_with_their_parts(station: Station) -> None:
    add_counties(station)
    ops = operator(station)
    result = ops.request("GET", "/api/zones/picker", params={"family": "county"}, csrf=False)
    assert result.status_code == 200, result.text
    assert result.json["groups"] == [
        {
            "key": "OH",
            "label": "OH",
            "zones": [
                {"code": "039003", "name": "Allen"},
                {"code": "039137", "name": "Putnam"},
                {"code": "139137", "name": "Northwest Putnam (part of Putnam)"},
            ],
        }
    ]


def test_alert_page_says_why_an_alert_is_out_of_the_area(station: Station) -> None:
    add_counties(station)
    add_zone(station, "OKZ016", "Grady")
    station.clock.now = station.clock.now.replace(hour=12, minute=0, second=0)
    with begin_write(station.engine) as conn:
        set_alert_settings(conn, zone_codes=["OKZ016"])
    data = fixture(NEW, today(station)).replace(b"040017", b"039137").replace(b"040109", b"039003")
    import_messages(station.engine, data, NEW, now=station.clock())
    ops = operator(station)
    page = ops.request("GET", f"/alerts/{alert_id(station.engine)}", csrf=False)
    assert page.status_code == 200
    assert (
        "your area has OKZ016 (a forecast zone); this warning names counties: "
        "039137 Putnam, OH, 039003 Allen, OH, OKC017, OKC109" in page.text  # document order
    )
    assert 'class="code-inside"' not in page.text

    with begin_write(station.engine) as conn:
        set_alert_settings(conn, zone_codes=["OHC137"])
    page = ops.request("GET", f"/alerts/{alert_id(station.engine)}", csrf=False)
    assert (
        "In the broadcast area: your area has OHC137 (a county), and this warning names "
        "039137 Putnam, OH (the same county)." in page.text
    )
    assert '<tr data-code="039137" class="code-inside">' in page.text
    assert '<tr data-code="039003">' in page.text
