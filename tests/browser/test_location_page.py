"""The alert location page in headless Chromium at phone and desktop widths, checked by axe-core.

Counties come first in the picker, the box takes every form the save takes, "Check codes" uses
the save's rule, the counter counts every valid typed code, and an area of zones without a
county shows a warning.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from alertstation.db.engine import begin_write
from alertstation.zones.tables import county_fips, county_subdivisions, wx_zones
from tests.browser.accessibility import axe_violations
from tests.browser.conftest import LiveServer, PageLog, create_user, sign_in

PASSWORD = "admin password for the location page"
WIDTHS = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 800}}


def load_catalog(live_server: LiveServer) -> None:
    """Two Ohio counties (one with a named part) and Putnam's forecast zone."""
    with begin_write(live_server.engine) as conn:
        for fips, name in (("39137", "Putnam"), ("39003", "Allen")):
            conn.execute(
                county_fips.insert().values(
                    fips=fips, state_code="OH", county_name=name, cwa="IWX", time_zone="E",
                    fe_area="",
                )
            )  # fmt: skip
        conn.execute(
            county_subdivisions.insert().values(
                same_code="139137", county_fips="39137", part=1, name="Northwest Putnam"
            )
        )
        conn.execute(
            wx_zones.insert().values(
                zone_code="OHZ016", zone_type="public", state_code="OH", zone_number="016",
                cwa="IWX", time_zone="E", fe_area="", name="Putnam", state_zone="OH016",
                short_name="Putnam",
            )
        )  # fmt: skip
    live_server.app.station.zones.clear()


@pytest.mark.parametrize("width", sorted(WIDTHS))
def test_counties_first_every_code_form_and_the_no_county_warning(
    page: Page, page_log: PageLog, live_server: LiveServer, width: str
) -> None:
    load_catalog(live_server)
    page.set_viewport_size(WIDTHS[width])
    create_user(live_server, "chief", "admin", PASSWORD)
    sign_in(page, live_server, "chief", PASSWORD)
    page.goto(live_server.url_for("/admin/location_settings"))
    help_text = page.locator("#area-help")
    for form in ("VAZ057", "OHC137", "PSSCCC", "039137"):
        expect(help_text).to_contain_text(form)

    codes = page.get_by_label("Zone codes", exact=True)
    page.get_by_role("button", name="Choose counties or zones…").click()
    tabs = page.get_by_role("tab")
    expect(tabs.first).to_have_text("Counties")
    expect(tabs.first).to_have_attribute("aria-selected", "true")
    ohio = page.locator('details[data-key="OH"]')
    ohio.locator("summary").click()
    expect(ohio.locator("input.zp-box")).to_have_count(3)
    ohio.locator('input[value="139137"]').check()
    expect(codes).to_have_value("139137")

    warning = page.locator(".zp-no-counties")
    codes.fill("OHZ016")
    expect(warning).to_be_visible()
    expect(warning).to_contain_text("TOR")
    expect(page.locator(".zp-count")).to_have_text("1 code chosen")

    codes.fill("OHZ016, ohc137 139137, VA057, nonsense")
    expect(warning).to_be_hidden()
    expect(page.locator(".zp-count")).to_have_text("4 codes chosen")
    page.get_by_role("button", name="Check codes").click()
    expect(page.locator(".zp-report .zp-known")).to_contain_text("OHC137 (Putnam, OH)")
    expect(page.locator(".zp-report .zp-unknown")).to_contain_text("VAZ057")
    expect(page.locator(".zp-report .zp-invalid")).to_contain_text("nonsense")
    assert axe_violations(page) == []
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0

    codes.fill("OHC137, OHZ016")
    page.get_by_role("button", name="Save").click()
    status = page.locator("#alert-settings-status")
    expect(status.locator(".alert-settings-saved")).to_have_text("Saved (zone_codes changed).")
    page.reload()
    expect(codes).to_have_value("OHC137, OHZ016")
    expect(page.locator(".zp-count")).to_have_text("2 codes chosen")
    assert page_log.page_errors == [] and page_log.console_errors() == []
    assert page_log.csp_violations() == []
