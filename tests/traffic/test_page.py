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
