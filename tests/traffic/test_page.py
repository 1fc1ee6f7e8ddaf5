"""The dashboard page: signed-in only, with its script; linked from the Security Center."""

from __future__ import annotations

from tests.support import SignedIn
from tests.support import StationHarness as Station


def test_the_page_needs_sign_in_and_is_linked_from_the_security_center(
    station: Station, admin: SignedIn
) -> None:
    anonymous = station.client.simulate_get("/traffic/dashboard")
    assert anonymous.status_code in (302, 303, 401)
    page = admin.request("GET", "/traffic/dashboard")
    assert page.status_code == 200
    assert "js/traffic-dashboard.js" in page.text and 'id="td-summary"' in page.text
    center = admin.request("GET", "/security/center", params={"tab": "traffic"})
    assert 'href="/traffic/dashboard"' in center.text


def test_the_geoip_panel_is_for_those_who_may_see_the_configuration(
    station: Station, admin: SignedIn
) -> None:
    page = admin.request("GET", "/traffic/dashboard").text
    assert 'id="td-geoip"' in page and 'id="td-geoip-upload"' in page
    assert "No GeoIP database is installed" in page
    station.add_user("watcher", "viewer")
    viewer = station.sign_in("watcher").request("GET", "/traffic/dashboard")
    assert viewer.status_code == 200
    assert 'id="td-geoip-upload"' not in viewer.text
