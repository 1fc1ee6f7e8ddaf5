"""The alert location and filtering pages in a real browser: picker, warnings, persistence."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from alertstation.zones.service import apply_files
from tests.browser.conftest import LiveServer, PageLog, create_user, sign_in
from tests.support import SHARED_DATA

LAND = SHARED_DATA / "zones" / "z_18mr25.dbf"
ADMIN_PASSWORD = "admin password for the browser"
VIEWER_PASSWORD = "viewer password for the browser"


@pytest.fixture
def land_zones(live_server: LiveServer) -> None:
    if not LAND.is_file():
        pytest.skip(f"shared zone file not found: {LAND}")
    apply_files(live_server.engine, {"public": LAND})


@pytest.mark.usefixtures("land_zones")
def test_pick_zone_type_unknown_code_save_and_reload(
    page: Page, page_log: PageLog, live_server: LiveServer
) -> None:
    create_user(live_server, "chief", "admin", ADMIN_PASSWORD)
    sign_in(page, live_server, "chief", ADMIN_PASSWORD)
    nav = page.get_by_role("navigation", name="Main")
    nav.get_by_text("Station", exact=True).click()  # the menu that holds Alert settings
    nav.get_by_role("link", name="Alert settings").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Alert location")

    # Tick a Virginia zone in the picker, then type a code the catalog does not hold.
    codes = page.get_by_label("Zone codes", exact=True)
    page.get_by_role("button", name="Choose counties or zones…").click()
    page.get_by_role("tab", name="Land").click()
    virginia = page.locator('details[data-key="VA"]')
    virginia.locator("summary").click()
    virginia.locator('input[value="VAZ057"]').check()
    expect(codes).to_have_value("VAZ057")
    codes.press("End")
    codes.press_sequentially(", VAZ999, 051099")
    page.get_by_role("button", name="Check codes").click()
    expect(page.locator(".zp-report .zp-unknown")).to_contain_text("VAZ999")

    page.get_by_role("button", name="Save").click()
    status = page.locator("#alert-settings-status")
    expect(status.locator(".alert-settings-saved")).to_have_text("Saved (zone_codes changed).")
    expect(status.locator(".alert-settings-unknown")).to_contain_text(
        "Not in the zone catalog (kept): VAZ999."
    )
    expect(codes).to_have_value("VAZ057, VAZ999, 051099")

    page.reload()
    expect(codes).to_have_value("VAZ057, VAZ999, 051099")
    expect(page.locator(".zp-count")).to_have_text("3 codes chosen")  # 051099 counts too

    # An invalid token is refused with the server's message and the saved codes stay.
    codes.fill("VAZ057, bogus")
    page.get_by_role("button", name="Save").click()
    expect(status.locator(".alert-settings-error")).to_contain_text("Not saved")
    # Beside the field, in words, marked invalid and described by the message, focused.
    expect(page.locator("#zone-codes-error")).to_have_text(
        re.compile(r"^Zone codes: not zone or county codes: bogus\.")
    )
    expect(codes).to_have_attribute("aria-invalid", "true")
    expect(codes).to_have_attribute("aria-describedby", re.compile(r"^zone-codes-error\b"))
    expect(codes).to_be_focused()
    page.reload()
    expect(codes).to_have_value("VAZ057, VAZ999, 051099")

    # Filtering: tick an event and a storage code, save, reload, still there.
    page.get_by_role("link", name="Filtering").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Alert filtering")
    page.get_by_label("Storage zone codes").fill("051000")
    page.get_by_role("checkbox", name="TOR Tornado Warning").check()
    page.get_by_role("button", name="Save").click()
    expect(status.locator(".alert-settings-saved")).to_contain_text("forward_events")
    page.reload()
    expect(page.get_by_label("Storage zone codes")).to_have_value("051000")
    expect(page.get_by_role("checkbox", name="TOR Tornado Warning")).to_be_checked()
    expect(page.get_by_role("checkbox", name="SVR Severe Thunderstorm Warning")).not_to_be_checked()

    assert page_log.csp_violations() == []
    assert page_log.page_errors == []
    assert [text for text in page_log.console_errors() if "status of 422" not in text] == []


def test_viewer_sees_read_only_pages(page: Page, live_server: LiveServer) -> None:
    create_user(live_server, "watcher", "viewer", VIEWER_PASSWORD)
    sign_in(page, live_server, "watcher", VIEWER_PASSWORD)
    page.goto(live_server.url_for("/admin/alert_filtering"))
    expect(page.get_by_role("button", name="Save")).to_be_disabled()
    expect(page.locator("#alert-settings-readonly")).to_be_visible()
    expect(page.get_by_role("checkbox", name="TOR Tornado Warning")).to_be_disabled()
